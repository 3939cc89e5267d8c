package rmp

import "github.com/wsrkit/wsrkit/rmp/group"

// coalescer drops, from a store batch gathered from several loop batches,
// every write that a later mutation of the same batch overwrites: the
// batch is applied whole, so the store ends in the same state, and a key
// every loop batch rewrites (a group's meta, the sender's counters, a
// growing received run) costs one write per commit instead of one per
// loop batch (#22: they were about a quarter of the store's writes at 64
// groups).
//
// Superseded are
//   - an OpPut or OpDelete of a key put or deleted again later;
//   - an OpSetDeadline of a generation whose deadline is set again later
//     (OpSetDeadline replaces the previous deadline).
//
// Nothing is dropped because of an OpDeleteGeneration: the writes before
// it are removed by it anyway, but the store's own handling of them (the
// deadline index) is left as it is.
type coalescer struct {
	seen map[coalesceKey]struct{}
}

// coalesceKey is what a mutation writes: the record Key (points) or the
// generation's deadline (deadline, Kind and Number zero).
type coalesceKey struct {
	deadline bool
	key      group.Key
}

// coalesce removes the superseded mutations of batch in place, keeping
// the order of the rest, and returns the shortened batch.
func (c *coalescer) coalesce(batch []group.Mutation) []group.Mutation {
	if len(batch) < 2 {
		return batch
	}
	if c.seen == nil {
		c.seen = make(map[coalesceKey]struct{}, len(batch))
	}
	defer clear(c.seen)
	// Walk backwards marking the superseded, then compact forwards.
	drop := 0
	for i := len(batch) - 1; i >= 0; i-- {
		k, ok := writeOf(&batch[i])
		if !ok {
			continue
		}
		if _, later := c.seen[k]; later {
			batch[i].Op = 0 // marked; no Mutation has Op 0
			drop++
			continue
		}
		c.seen[k] = struct{}{}
	}
	if drop == 0 {
		return batch
	}
	j := 0
	for i := range batch {
		if batch[i].Op != 0 {
			batch[j] = batch[i]
			j++
		}
	}
	clear(batch[j:]) // keeps no payload alive
	return batch[:j]
}

// writeOf reports what m writes, when a later mutation can supersede it.
func writeOf(m *group.Mutation) (coalesceKey, bool) {
	switch m.Op {
	case group.OpPut, group.OpDelete:
		return coalesceKey{key: m.Key}, true
	case group.OpSetDeadline:
		return coalesceKey{deadline: true, key: group.Key{Role: m.Key.Role, GroupID: m.Key.GroupID, Generation: m.Key.Generation}}, true
	}
	return coalesceKey{}, false
}
