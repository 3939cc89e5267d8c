// Package rmp is wsrkit's embedding API: the Engine that joins the sending
// and receiving RMPs of WS-Reliability 1.1, the SOAP wire layer and a store;
// the Node that drives it with a clock, a transport and callbacks; and the
// HTTP binding.
//
// What only some embedders need lives beside it: rmp/admin, the management
// views, operator aborts and counters (Node.Admin, Engine.Admin);
// rmp/outbound, the policy for URLs peers chose and the HTTP client
// settings; rmp/httpbody, reading request bodies within limits.
//
// # Two layers
//
// Engine is pure, like etcd-io/raft's RawNode: no goroutines, no clock, no
// I/O. Inputs carry the current time (Submit, Receive, SendResult, Taken,
// DeliveryFailed, Respond, OutcomeHandled, Tick); effects accumulate into a
// Ready, which the caller takes with Ready and confirms with Advance.
// NextDeadline says when Tick is due, so a driver keeps one timer.
//
// Node is the driver: one goroutine owns an Engine and a store.Store, takes
// inputs in batches, and applies each Ready. Its methods are safe for
// concurrent use. The clock is injectable (NewFakeClock), so scenario tests
// run hours of expiry and retries in milliseconds.
//
// # Applying a Ready
//
//  1. Apply Persist to the store as one atomic, synced batch before anything
//     else. Every acknowledgement, delivery and outcome in the same Ready
//     relies on it (D8: an ack means accepted and durably stored; R21: a
//     message is stored before its first transmission; D27). A Ready with
//     none of those (and no caller waiting) may wait for the next synced
//     batch, in order: the Node holds it up to LazyCommitDelay. A busy Node
//     also lets any batch wait up to CommitDelay for more work, so that one
//     sync carries more of it; either way nothing is released before its
//     batch is durable.
//  2. If the store fails, stop: the engine may be ahead of the disk. Rebuild
//     it from the store with LoadEngine (the Node stops and reports Err).
//  3. Call Advance, then write each Answer to the HTTP exchange that carried
//     its request (Response pattern, R72; SOAP Faults, R38).
//  4. Make the Sends (transmissions, PollRequests, callbacks) and report each
//     with SendResult; a missing or unreadable response is no ack (R36).
//  5. Hand Deliver to the consumer; the messages of one group in slice order.
//     Report each with Taken or DeliveryFailed. An ordered group has one
//     hand-off outstanding at a time (D14, R49). The hand-off is idempotent
//     on (group, generation, number): a crash before Taken hands it out again
//     after restart (R92, digest §10 item 6).
//  6. Hand Notify to the producer and report each with OutcomeHandled, which
//     deletes its outbox record; an outcome not yet handled is handed out
//     again after a restart, so each is reported once it is handled (D27).
//  7. Set the timer to NextDeadline.
//
// Errors returned by Engine methods are for the local caller (a refused
// submission); problems in received messages are protocol faults, produced
// as Answers and RM-Replies.
package rmp
