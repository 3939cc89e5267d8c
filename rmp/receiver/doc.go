// Package receiver is the receiving RMP of WS-Reliability 1.1 as a pure,
// single-threaded state machine: parsed reliable messages, poll requests,
// consumer outcomes and the passing of time go in; effects come out as a
// Ready value (etcd raft's shape, quic-go's time-as-argument).
//
// It has no goroutines, no clock and no I/O. Every input carries now. A
// Receiver is not safe for concurrent use.
//
// # Applying a Ready
//
// Every method returns a Ready. Its slices belong to the Receiver and stay
// valid only until the next call; copy what you keep. The byte values of
// Persist are never written again (group.Arena): they may be kept as they
// are.
// The caller applies a Ready in this order:
//
//  1. Apply Persist atomically and durably (one batch, fsynced). Every ack,
//     delivery and callback of the same Ready relies on it (D8, R41, R92).
//     If the batch fails, stop and rebuild the Receiver with Recover.
//  2. Hand Deliver to the consumer in slice order and report each outcome
//     with Taken or DeliveryFailed. An ordered group hands out one message,
//     or one run of up to Config.MaxDeliveryRun, at a time: its next comes
//     in the Ready of the Taken that ends the run (D14, R49). A Delivery
//     with InRun may reach the consumer only once the one before it was
//     taken; after one that was not, report the rest with Returned.
//     The hand-off instant is the Deliver effect; a crash before Taken makes
//     Recover hand the message out again, so the consumer must be idempotent
//     on (GroupID, Generation, Number) (R92, digest §10 item 6).
//  3. Send Reply in the HTTP response of the request that produced it
//     (Response pattern, R72), with Response as the body when set (D18, R45),
//     or send SOAPFault instead (D7, R38, R79). Only Message and Poll
//     produce a Reply: an ack made later (Taken under AckOnDelivery) waits
//     for the next Response to a message of its GroupId, or a poll (D13).
//  4. POST each Callback to its URL and report the outcome with
//     CallbackResult (R74, R75). A URL has at most one such POST in
//     flight: its next batch comes in the Ready of that CallbackResult (or
//     of the Tick after the back-off), so POSTs to one URL never overtake
//     each other. One-shot poll answers (R80) are not held back.
//
// Fault codes in Reply, PollAnswer and Callbacks are already mapped through
// Config.Dialect (D6); Events carry the codes before the mapping.
//
// NextDeadline says when Tick must be called next. Groups, Group and Stats
// are read-only views for management and metrics; Abort is the operator's
// delete.
package receiver
