// Package sim is a deterministic simulation of two wsrkit engines talking
// WS-Reliability 1.1 over a faulty network, with virtual time, crashes,
// store faults, consumer failures, clock jumps and operator aborts, all
// drawn from one seed.
//
// Run builds a world from a seed: two rmp.Engine nodes (each both a sending
// and a receiving RMP) over memstore or pebble-on-MemFS stores, a seeded
// event queue (min-heap on virtual time, ties broken by insertion order)
// and a workload of groups of every kind. Each event is applied the way a
// driver applies a Ready (rmp package doc); the invariants are checked on
// every effect and at the end, and each violation names the seed and a
// short trace of the message it concerns, so that
// `go test ./rmp/sim -run Sim -sim.seed=S -sim.seeds=1 -v` replays it.
//
// # Faults
//
// A POST is lost (its exchange fails after a timeout), delayed (so
// reordered) or duplicated (the copy's answer goes nowhere); an answer is
// lost or delayed. A node crashes at scheduled instants and, with a small
// probability, between the Persist of a Ready and its effects; memstore
// nodes reload from the same store, pebble nodes recover a CrashClone of
// their MemFS. On memstore an Apply fails now and then (FailApply) and the
// node is rebuilt from its store (rmp doc rule 2); a Submit whose Persist
// failed did not happen and is submitted again. On pebble a write or sync
// of the WAL fails now and then (errorfs, MemFS.FailNextWALWrite): the
// store stops (ErrFailed) and the node recovers a crash clone, where the
// failed batch may or may not be (so the fault spares a Submit's Apply).
// The consumer refuses hand-offs at random. The world's time jumps forward
// and a node's clock jumps back (clock.go: each node reads its own clock).
// An operator aborts groups on either side (abort.go). At the end of the
// chaos phase the network heals and the world runs until no timer is left.
//
// # Definitions the invariants use
//
// A hand-off's identity is (GroupID, Generation, Number). The consumer is
// idempotent on it (R92): "delivered" means the first Taken of an identity.
// A hand-off of an identity already taken is allowed only when that Taken
// was not yet durable (no successful Apply after it) before a restart;
// after a durable Taken it is a violation. With DuplicateElimination a
// message taken under two identities (two generations) is a duplicate
// delivery; without it, unordered copies may be taken again (R44, counted);
// an ordered generation hands out 0,1,2,… with no gap (D14, D19). Nothing
// is handed out after its ExpiryTime on the consumer's node clock (D9,
// D12). An outcome is reported once per OutcomeID under the same
// durability rule (D27). A receiving generation is removed no earlier than
// its groupExpiryTime under t1, otherwise no earlier than the ExpiryTime of
// every message taken in it, on the receiver's clock (D17, D20–D23). A
// sending group is removed only when each of its messages has an outcome.
// At the end every submitted AckRequested message has an outcome, the last
// one Acknowledged or Failed with a reason; guaranteed messages (a lifetime
// minutes longer than the chaos phase and its clock jumps, many retries)
// end Acknowledged and delivered; an Acknowledged message was delivered:
// one the receiver discarded after the ack (D12, D14) must end Failed by
// the late fault (D13), under every reply pattern and after an operator
// delete of its sending group, with no exclusion (the sender polls
// acknowledged numbers until ExpiryTime plus a margin that covers the
// clock jumps); no group state is left (R94). Held messages never exceed the D15 limits, nor
// pending ones the sender's.
//
// Best-effort messages (no AckRequested) get no outcome and may be lost.
// Under the Response pattern the consumer answers request-response
// messages; a business response reaching the producer's side is exactly
// its own message's (R73; D18: duplicates' answers carry the cached one).
// A message not acknowledged when the operator aborted its sending group
// ends Failed; nothing is handed out from a receiving generation the
// operator deleted while its state stays.
//
// Known limitations an invariant meets are counted under a name in
// Result.Exclusions and printed, never skipped silently.
package sim
