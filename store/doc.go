// Package store is the persistence contract of wsrkit: a typed, ordered,
// durable record store for the group state that the pure state machines
// (rmp/receiver, rmp/sender) describe as batches of group.Mutation values.
//
// # Contract
//
// A Store applies each batch atomically (whole or not at all) and durably
// (synced) before Apply returns (D8: an ack means durably stored). Records are
// read back in key order, (Role, GroupID, Generation, Kind, Number), so a
// group generation's records are contiguous (D24). A recovering engine lists
// the generations of its role with Generations and loads them one at a time
// with Scan, never every group's history at once. Each generation has at most
// one deadline (OpSetDeadline replaces it, the zero At clears it); DueBefore
// and NextDeadline read the deadline index in time order without visiting
// groups. The store never rewrites a whole group: it writes exactly the keys a
// batch names (perf-limits.md conclusion 4).
//
// An error from Apply means nothing of the batch was applied. After a fatal
// storage error (see ErrFailed) every later call returns that error; the
// caller rebuilds its state from a reopened store.
//
// # Key layout
//
// Implementations over an ordered byte-key engine (store/pebblestore,
// store/memstore, store/etcdstore) share one key layout, in which a group
// generation's records are one contiguous range; it is theirs, not the
// contract's, and lives in store/internal/kvplan.
package store
