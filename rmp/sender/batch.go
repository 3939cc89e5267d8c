package sender

import (
	"cmp"
	"slices"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// batch collects what one input changed; finish turns it into a Ready.
type batch struct {
	rd            Ready
	touched       []*groupState
	dirtyMsgs     []*message
	deletedMsgs   []*message
	removed       []*groupState
	outboxPuts    []*outboxEntry
	outboxDeletes []OutcomeID
	dirtyDests    []*destState
	// ackedBefore are the acked runs as last persisted of the touched
	// groups whose acked set changed, numbered by groupState.snap.
	ackedBefore   []runSet
	instanceDirty bool
	// respondedTo is the message whose own POST brought response, the
	// business response for its Acknowledged outcome (RepliesWithResponse).
	respondedTo MessageRef
	response    []byte
	// refused is the message a SOAP-level refusal failed, soapCode its
	// code, for its Failed outcome (Sent with TransportRefused).
	refused  MessageRef
	soapCode string
}

// cost bounds the mutations finish makes of b (the estimate it sizes
// Persist with).
func (b *batch) cost() int {
	return 2*(len(b.deletedMsgs)+len(b.dirtyMsgs)) + 4*len(b.touched) + len(b.outboxPuts) + len(b.outboxDeletes)
}

func (s *Sender) begin() {
	s.b = batch{}
}

func (s *Sender) touch(g *groupState) {
	if !g.has(gTouched) {
		g.set(gTouched, true)
		s.b.touched = append(s.b.touched, g)
	}
}

func (s *Sender) dirtyMessage(m *message) {
	if !m.dirty {
		m.dirty = true
		s.b.dirtyMsgs = append(s.b.dirtyMsgs, m)
	}
}

const generation = 1 // sender group ids are never reused (R05)

// The KindOutbound number space of a group is split in two: a message's
// full record (payload, header fields, retry state at its first
// transmission) under its number n, and the retry state of its later
// transmissions — tens of bytes — under retryKeyBit|n, so that a resend
// never rewrites the payload. Sender numbers therefore stop at maxNumber
// (D2: the group is closed there with last="true").
const (
	retryKeyBit = uint64(1) << 63
	maxNumber   = retryKeyBit - 1
)

func groupKey(id string, kind group.Kind, n uint64) group.Key {
	return group.Key{Role: group.RoleSender, GroupID: id, Generation: generation, Kind: kind, Number: n}
}

// instanceKey holds the sender's counters (group ids, outcome ids).
var instanceKey = group.Key{Role: group.RoleSender, Kind: group.KindMeta}

func outboxKey(id OutcomeID) group.Key {
	return group.Key{Role: group.RoleOutbox, Kind: group.KindOutcome, Number: uint64(id)}
}

// finish advances every touched group, then builds Persist: group records
// in key order (outbound deletes and puts, acked runs, meta, deadline),
// whole-group deletions, outbox puts and deletes, the counters. Persist is
// one atomic batch, so this order only matters for a key written twice,
// which never happens.
func (s *Sender) finish(now time.Time) Ready {
	for _, g := range s.refill {
		s.touch(g)
	}
	s.refill = nil
	slices.SortFunc(s.b.touched, func(a, b *groupState) int { return compareIDs(s.cfg.InstanceID, a, b) })
	for i := 0; i < len(s.b.touched); i++ { // advance may touch nothing new, but be safe
		s.fillWindow(now, s.b.touched[i])
		s.advance(now, s.b.touched[i])
	}
	// Sized once for the usual input: per message a delete or a put (and a
	// retry record), per group an acked run, the meta and the deadline,
	// then the outbox and the counters; append still grows it when needed.
	var ms []group.Mutation
	if n := s.b.cost(); n > 0 {
		ms = make([]group.Mutation, 0, n+1)
	}
	for _, m := range s.b.deletedMsgs {
		if !m.g.has(gRemoved) && m.stored {
			ms = append(ms, group.Mutation{Op: group.OpDelete, Key: groupKey(s.idOf(m.g), group.KindOutbound, m.number)})
			if m.retryStored {
				ms = append(ms, group.Mutation{Op: group.OpDelete, Key: groupKey(s.idOf(m.g), group.KindOutbound, retryKeyBit|m.number)})
			}
		}
	}
	for _, m := range s.b.dirtyMsgs {
		m.dirty = false
		switch {
		case m.done || m.g.has(gRemoved):
		case !m.stored:
			// R21, R89: stored byte-exact before the first transmission.
			ms = append(ms, group.Mutation{Op: group.OpPut, Key: groupKey(s.idOf(m.g), group.KindOutbound, m.number), Value: encodeOutbound(m)})
			m.stored = true
		default:
			// A resend or a retryable fault: only the retry state changes.
			ms = append(ms, group.Mutation{Op: group.OpPut, Key: groupKey(s.idOf(m.g), group.KindOutbound, retryKeyBit|m.number), Value: encodeRetry(m)})
			m.retryStored = true
		}
	}
	var removed []group.Mutation
	for _, g := range s.b.touched {
		g.set(gTouched, false)
		before := g.snap
		g.snap = 0
		if g.has(gRemoved) {
			continue
		}
		s.relist(g)
		if before != 0 {
			ms = s.ackedRunMutations(ms, g, &s.b.ackedBefore[before-1])
		}
		if g.dirty {
			g.dirty = false
			ms = append(ms, group.Mutation{Op: group.OpPut, Key: groupKey(s.idOf(g), group.KindMeta, 0), Value: encodeMeta(g, s.idOf(g))})
		}
		// The index holds the deadline rounded down to the grain; while the
		// group has none (a message pending) it keeps the last one, which
		// is still never later than the next (SPEC-NOTES "deadline index").
		if g.tm.scheduled() {
			if at := group.IndexedDeadline(s.timers.at(&g.tm)); !g.isIndexed(at) {
				g.setIndexed(at)
				ms = append(ms, group.Mutation{Op: group.OpSetDeadline, Key: groupKey(s.idOf(g), group.KindMeta, 0), At: at})
			}
		}
	}
	for _, g := range s.b.removed {
		removed = append(removed, group.Mutation{Op: group.OpDeleteGeneration, Key: groupKey(s.idOf(g), group.KindMeta, 0)})
	}
	slices.SortStableFunc(ms, func(a, b group.Mutation) int { return compareKeys(a.Key, b.Key) })
	slices.SortFunc(removed, func(a, b group.Mutation) int { return compareKeys(a.Key, b.Key) })
	ms = append(ms, removed...)
	for _, e := range s.b.outboxPuts {
		if _, live := s.outbox[e.o.ID]; live {
			ms = append(ms, group.Mutation{Op: group.OpPut, Key: outboxKey(e.o.ID), Value: encodeOutcome(e)})
		}
	}
	slices.Sort(s.b.outboxDeletes)
	for _, id := range s.b.outboxDeletes {
		ms = append(ms, group.Mutation{Op: group.OpDelete, Key: outboxKey(id)})
	}
	ms = s.pollRecMutations(ms)
	if s.b.instanceDirty {
		ms = append(ms, group.Mutation{Op: group.OpPut, Key: instanceKey, Value: encodeInstance(s)})
	}
	rd := s.b.rd
	rd.Persist = ms
	if s.replay {
		s.replay = false
		rd.Notify = s.sortedOutbox()
	}
	s.b = batch{}
	return rd
}

func (s *Sender) sortedOutbox() []Outcome {
	os := make([]Outcome, 0, len(s.outbox))
	for _, e := range s.outbox {
		os = append(os, e.o)
	}
	slices.SortFunc(os, func(a, b Outcome) int { return cmp.Compare(a.ID, b.ID) })
	return os
}

// ackedRunMutations writes the acked runs (KindReceived, keyed by first
// number) that changed in this input, from before: deltas, never the
// whole set.
func (s *Sender) ackedRunMutations(ms []group.Mutation, g *groupState, before *runSet) []group.Mutation {
	old := before.rs
	cur := g.acked.rs
	i, j := 0, 0
	for i < len(old) || j < len(cur) {
		switch {
		case j == len(cur) || i < len(old) && old[i].From < cur[j].From:
			ms = append(ms, group.Mutation{Op: group.OpDelete, Key: groupKey(s.idOf(g), group.KindReceived, old[i].From)})
			i++
		case i == len(old) || cur[j].From < old[i].From:
			ms = append(ms, group.Mutation{Op: group.OpPut, Key: groupKey(s.idOf(g), group.KindReceived, cur[j].From), Value: encodeRun(cur[j])})
			j++
		default:
			if old[i].To != cur[j].To {
				ms = append(ms, group.Mutation{Op: group.OpPut, Key: groupKey(s.idOf(g), group.KindReceived, cur[j].From), Value: encodeRun(cur[j])})
			}
			i++
			j++
		}
	}
	return ms
}

// setIndexed records at (the zero Time or an indexed instant) as g's
// indexed deadline.
func (g *groupState) setIndexed(at time.Time) {
	g.set(gIndexed, !at.IsZero())
	g.indexedNs = 0
	if g.has(gIndexed) {
		g.indexedNs = at.UnixNano()
	}
}

// isIndexed reports whether at (the zero Time or an indexed instant) is
// g's indexed deadline.
func (g *groupState) isIndexed(at time.Time) bool {
	if at.IsZero() {
		return !g.has(gIndexed)
	}
	return g.has(gIndexed) && at.UnixNano() == g.indexedNs
}

// compareKeys orders keys as stores do: role, group, generation, kind, number.
func compareKeys(a, b group.Key) int {
	if c := cmp.Compare(a.Role, b.Role); c != 0 {
		return c
	}
	if c := cmp.Compare(a.GroupID, b.GroupID); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Generation, b.Generation); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	return cmp.Compare(a.Number, b.Number)
}
