// Package rmp is wsrkit's embedding API: the Engine that joins the sending
// and receiving RMPs of WS-Reliability 1.1, the SOAP wire layer and a store;
// the Node that drives it with a clock, a transport and callbacks; and the
// HTTP binding.
//
// What only some embedders need lives beside it:
//   - rmp/admin: the management views, operator aborts and counters
//     (Node.Admin, Engine.Admin);
//   - rmp/outbound: the HTTP transport (NodeConfig.Transport), the policy
//     for URLs peers chose, and the HTTP client settings;
//   - rmp/clock: the Node's time source, real or fake (NodeConfig.Clock);
//   - rmp/peer: the verified identity of a mutual-TLS peer
//     (Inbound.SetPeer);
//   - rmp/httpbody: reading request bodies within limits (ReadRequest).
//
// # Two layers
//
// Engine is pure, like etcd-io/raft's RawNode: no goroutines, no clock, no
// I/O. Inputs carry the current time (Submit, SubmitBatch, Receive,
// ReceiveInbound, SendResult, Taken, DeliveryFailed, Returned, Respond,
// OutcomeHandled, Tick); effects accumulate into a Ready, which the caller
// takes with Ready and confirms with Advance. NextDeadline says when Tick
// is due, so a driver keeps one timer.
//
// Node is the driver: it owns an Engine and a store.Store, takes inputs in
// batches on one goroutine and commits and releases each Ready on another
// (below). Its methods are safe for concurrent use. Its Clock (the current
// time and timers, rmp/clock) is injectable: a fake clock (clock.NewFake)
// lets scenario tests run hours of expiry and retries in milliseconds.
//
// # Applying a Ready
//
// A driver takes a Ready and calls Advance at once: Advance says only that
// the driver has taken the effects over, and the Engine never needs them
// back. It may then go on feeding inputs while that Ready is being applied,
// as etcd-io/raft's asynchronous storage writes do. What it must keep is
// the order in which each Ready's effects reach the world:
//
//  1. Apply Persist to the store as one atomic, synced batch before any
//     other effect of the same Ready. Every acknowledgement, delivery and
//     outcome relies on it (D8: an ack means accepted and durably stored;
//     R21: a message is stored before its first transmission; D27).
//     Readies are committed in the order they were taken (a later Persist
//     may build on an earlier one); several may share one store batch.
//  2. If the store fails, stop: the engine is ahead of the disk. Rebuild
//     it from the store with LoadEngine (the Node stops and reports Err).
//  3. Once the Persist is durable, write each Answer to the HTTP exchange
//     that carried its request (Response pattern, R72; SOAP Faults, R38).
//  4. Make the Sends (transmissions, PollRequests, callbacks) and report
//     each with SendResult; a missing or unreadable response is no ack
//     (R36).
//  5. Hand Deliver to the consumer; the messages of one group in slice
//     order. Report each with Taken or DeliveryFailed. An ordered group has
//     one hand-off, or one run of them, outstanding at a time (D14, R49):
//     a Delivery with InRun may reach the consumer only after the one
//     before it was taken; once one was not (failed, deferred), report the
//     rest of its run with Returned. The hand-off is idempotent on (group,
//     generation, number): a crash before Taken hands it out again after
//     restart (R92).
//  6. Hand Notify to the producer and report each with OutcomeHandled,
//     which deletes its outbox record; an outcome whose OutcomeHandled is
//     not durable yet is handed out again after a restart, so the producer
//     hears of each until it took it (D27).
//  7. After every batch of inputs, set the timer to NextDeadline. It
//     reflects every Ready taken so far, committed or not.
//
// A driver that applies each Ready before the next input (the conformance
// runner, the simulator) keeps this order trivially.
//
// # How the Node applies a Ready
//
// The Node runs this order as a pipeline: Ready taken → Advance → commit →
// effects released. The loop and the committer are a goroutine each; sends,
// deliveries and outcomes run on goroutines of their own.
//
//   - The loop (Node.run, node.go) owns the Engine. It takes a batch of
//     inputs (node_input.go: callers' Submit, Confirm, ServeHTTP…, and the
//     workers' results), applies them (Node.step), takes the Ready, calls
//     Advance and queues the Ready as a job for the committer
//     (Node.handOff; sooner when the job's Persist reaches a quarter of the
//     store's batch limits, jobs.go), re-arms its timer (rule 7), and goes
//     on with the next batch while the store syncs.
//   - The committer (node_committer.go) makes jobs durable in queue order,
//     the jobs waiting (up to 64) together in store batches that each fit
//     the store's limits, and only then releases each job's effects (rules
//     1 and 2); a record several jobs of one batch write is written once,
//     with its last value (node_coalesce.go: the batch is applied whole,
//     so the store ends the same). To spend fewer fsyncs it may hold a job
//     that nothing waits for up to NodeConfig.LazyCommitDelay and, while
//     the node is busy, wait up to CommitDelay for more jobs; neither
//     releases anything early.
//   - Release (Node.release, node_release.go) writes the Answers (one
//     awaiting its message's business response is held until the consumer
//     returns, R73), starts each Send on a goroutine of its own, and queues
//     the deliveries and outcomes for their workers (rules 3 to 6); only
//     then are the callers waiting for the job answered. Workers post their
//     results back to the loop as inputs and never wait for it.
//
// Errors returned by Engine methods are for the local caller (a refused
// submission); problems in received messages are protocol faults, produced
// as Answers and RM-Replies.
package rmp
