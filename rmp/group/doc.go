// Package group is the vocabulary of WS-Reliability groups and the pure data
// types the other wsrkit packages speak: sequence numbers and their interval
// sets, the ordering buffer of an ordered group, the group lifecycle
// (termination t1–t4 and state removal, DECISIONS D20–D24) as functions of
// the time passed in, and the keys and mutations by which state machines ask
// a store to persist their state.
//
// It imports only the standard library and never reads a clock: every
// instant comes in as an argument.
//
// # Stored formats
//
// A SeqSet encodes (SeqSet.AppendBinary, DecodeSeqSet) as a version byte
// (1), a uvarint range count, then per range a uvarint gap and a uvarint
// span: span = To-From; gap = From for the first range and From-prevTo-2
// after it (ranges never touch). One run of a KindReceived record, keyed by
// the run's first number, encodes (AppendRun, DecodeRun) as a version byte
// (1), uvarint From, uvarint To-From. Varints are minimal, so each value has
// one encoding; decoders check lengths before allocating and return an error
// wrapping ErrCorrupt (or ErrTooManyRanges past the set's limit) for any
// other input. The values rmp/sender and rmp/receiver store are records of
// RecordEncoder primitives (recordcodec.go); a group's Lifecycle is written
// in them by one pair of methods, Timing and Termination, with a per-record
// LastOrder (lifecyclecodec.go).
//
// # Invariant checks
//
// Built with -tags invariants, every SeqSet mutation re-checks the set's
// normalisation (sorted, disjoint, non-adjacent ranges) and panics when it
// is broken.
package group
