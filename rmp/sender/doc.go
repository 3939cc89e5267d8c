// Package sender is the sending RMP of WS-Reliability 1.1 as a pure state
// machine: it numbers, schedules, resends, fails and acknowledges the
// producer's messages and hands back effects in a Ready, never doing I/O.
//
// Every input carries the current time; the package never reads a clock,
// starts no goroutine and never touches a network or a disk. A driver owns
// those and applies each Ready in this order:
//
//  1. Apply Persist atomically and durably. Nothing below may happen before
//     it is durable (R21: a message is stored before its first transmission;
//     D27: an outcome is in the outbox before the producer sees it).
//  2. Transmit Send and Polls. The sender never renders XML: a Transmission
//     carries the header fields and the payload stored byte-exact, so a
//     deterministic writer makes every resend identical (R10).
//  3. Hand Notify to the producer, then call OutcomeHandled for each outcome
//     taken; that deletes its outbox record. After Recover the next Ready
//     re-emits every outcome still in the outbox, so none is lost across a
//     restart and none is reported twice once it was handled.
//  4. Events (terminations and removals with their group.Rule) are for logs
//     and the conformance runner.
//  5. Set one timer to NextDeadline and call Tick when it fires.
//
// If applying Persist fails the Sender must be dropped and rebuilt with
// Recover from the store: its memory may be ahead of the disk.
//
// A Ready may be returned together with an error only by Submit, and then it
// is empty: a refused submission changes nothing.
//
// Outputs are deterministic for a given sequence of inputs: no map order
// reaches an output, and the retry jitter comes from a seeded hash (D26).
package sender
