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
// store/memstore) share this layout; EncodeKey and DecodeKey implement it.
// Numbers are fixed-width big-endian; the variable-length groupId is escaped
// so that byte order equals (role, groupId, generation, kind, number) order
// and no encoded id is a prefix of another:
//
//	gid(s)      = s with each 0x00 written as 0x00 0xFF, then 0x00 0x01
//	record      = 0x72 'r' | role:1 | gid(GroupID) | generation:8 | kind:1 | number:8   → value
//	deadline    = 0x64 'd' | at:8   | role:1 | gid(GroupID) | generation:8            → empty
//	deadlineRev = 0x65 'e' | role:1 | gid(GroupID) | generation:8                     → at:8
//
// at is the deadline instant in UTC nanoseconds since the Unix epoch, as a
// big-endian uint64 with the sign bit flipped, so byte order is time order.
// Instants outside the int64 nanosecond range (years 1678–2262) are refused.
//
// The records of one generation, (role, gid, generation), form one contiguous
// key range, removed by OpDeleteGeneration with ONE range deletion plus point
// deletions of its two deadline keys. The reverse entry deadlineRev says which
// deadline key a generation has, so replacing or clearing it deletes the old
// index key in the same atomic batch: the index never holds stale entries.
package store
