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

// begin starts a batch, its Ready in the slices handed back by Recycle,
// if any.
func (s *Sender) begin() {
	s.clearBatch()
	s.b.rd, s.spare = s.spare, Ready{}
}

// clearBatch empties the batch, keeping its scratch slices for the next
// one (#22): emptied, so that they keep nothing alive.
func (s *Sender) clearBatch() {
	b := &s.b
	*b = batch{
		touched:       reuse(b.touched),
		dirtyMsgs:     reuse(b.dirtyMsgs),
		deletedMsgs:   reuse(b.deletedMsgs),
		removed:       reuse(b.removed),
		outboxPuts:    reuse(b.outboxPuts),
		outboxDeletes: reuse(b.outboxDeletes),
		dirtyDests:    reuse(b.dirtyDests),
		ackedBefore:   reuseRuns(b.ackedBefore),
	}
}

// Scratch kept for the next batch is bounded: after a large input its
// slices go, so that they do not stay big.
const (
	maxReused     = 1024 // elements of a slice
	maxReusedRuns = 16   // runs of an acked-runs snapshot
)

// reuse returns x emptied, or nil when it grew large. Its elements past
// its length are zero: every truncation goes through reuse.
func reuse[T any](x []T) []T {
	if cap(x) > maxReused {
		return nil
	}
	clear(x)
	return x[:0]
}

// reuseRuns empties the acked-run snapshots; noteAckedChange reuses the
// arrays of their small ones.
func reuseRuns(x []runSet) []runSet {
	if cap(x) > maxReused {
		return nil
	}
	for i := range x {
		if cap(x[i].rs) > maxReusedRuns {
			x[i].rs = nil
		}
	}
	return x[:0]
}

// Recycle hands back a Ready this Sender returned, since applied, of
// which the caller keeps no slice (elements copied out are fine, and so
// are the byte slices they hold: Persist values, payloads and responses
// are never written again): the next Ready reuses its slices instead of
// growing new ones. Optional; a Ready must be recycled at most once.
func (s *Sender) Recycle(rd Ready) {
	s.spare = Ready{
		Persist: reuse(rd.Persist), Send: reuse(rd.Send), Polls: reuse(rd.Polls),
		Notify: reuse(rd.Notify), Events: reuse(rd.Events),
	}
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
	ms := s.b.rd.Persist[:0]
	if n := s.b.cost(); n > 0 {
		ms = slices.Grow(ms, n+1)
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
			ms = append(ms, group.Mutation{Op: group.OpPut, Key: groupKey(s.idOf(m.g), group.KindOutbound, m.number), Value: s.arena.Keep(encodeOutbound(s.arena.Buf(outboundSize(m)), m))})
			m.stored = true
		default:
			// A resend or a retryable fault: only the retry state changes.
			ms = append(ms, group.Mutation{Op: group.OpPut, Key: groupKey(s.idOf(m.g), group.KindOutbound, retryKeyBit|m.number), Value: s.arena.Keep(encodeRetry(s.arena.Buf(retrySize), m))})
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
			ms = append(ms, group.Mutation{Op: group.OpPut, Key: groupKey(s.idOf(g), group.KindMeta, 0), Value: s.arena.Keep(encodeMeta(s.arena.Buf(metaSize(g, s.idOf(g))), g, s.idOf(g)))})
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
			ms = append(ms, group.Mutation{Op: group.OpPut, Key: outboxKey(e.o.ID), Value: s.arena.Keep(encodeOutcome(s.arena.Buf(outcomeSize(e)), e))})
		}
	}
	slices.Sort(s.b.outboxDeletes)
	for _, id := range s.b.outboxDeletes {
		ms = append(ms, group.Mutation{Op: group.OpDelete, Key: outboxKey(id)})
	}
	ms = s.pollRecMutations(ms)
	if s.b.instanceDirty {
		ms = append(ms, group.Mutation{Op: group.OpPut, Key: instanceKey, Value: s.arena.Keep(encodeInstance(s.arena.Buf(instanceSize), s))})
	}
	rd := s.b.rd
	rd.Persist = ms
	if s.replay {
		s.replay = false
		rd.Notify = s.sortedOutbox()
	}
	s.clearBatch()
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
			ms = append(ms, group.Mutation{Op: group.OpPut, Key: groupKey(s.idOf(g), group.KindReceived, cur[j].From), Value: s.arena.Keep(encodeRun(s.arena.Buf(runSize), cur[j]))})
			j++
		default:
			if old[i].To != cur[j].To {
				ms = append(ms, group.Mutation{Op: group.OpPut, Key: groupKey(s.idOf(g), group.KindReceived, cur[j].From), Value: s.arena.Keep(encodeRun(s.arena.Buf(runSize), cur[j]))})
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
