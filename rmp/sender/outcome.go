package sender

import (
	"slices"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// emit writes an outcome to the outbox (in this input's Persist) and hands
// it to the producer (Notify), D27.
// attempts is the number of transmissions made, 0 when unknown (a late
// fault about an acknowledged message).
func (s *Sender) emit(now time.Time, g *groupState, n uint64, attempts int, kind OutcomeKind, reason Reason, code faults.Code, blocksKey bool) {
	o := Outcome{ID: s.nextOutcome, Ref: s.ref(g, n), GroupKey: g.key, Kind: kind, Reason: reason, Fault: code, At: now, Attempts: attempts}
	if kind == Acknowledged && s.b.response != nil && o.Ref == s.b.respondedTo {
		o.Response = s.b.response // R73
	}
	if kind == Failed && reason == ReasonFaultReceived && code == 0 && s.b.soapCode != "" && o.Ref == s.b.refused {
		o.SOAPFault = s.b.soapCode
	}
	s.nextOutcome++
	s.latest[o.Ref] = o.ID
	s.b.instanceDirty = true
	e := &outboxEntry{o: o, blocksKey: blocksKey}
	s.outbox[o.ID] = e
	s.outboxBytes += int64(len(o.Response))
	if blocksKey {
		s.abortedKeys[g.key]++
	}
	s.b.outboxPuts = append(s.b.outboxPuts, e)
	if !s.replay { // a replaying Ready emits the whole outbox at finish
		s.b.rd.Notify = append(s.b.rd.Notify, o)
	}
}

// acknowledge ends a pending message with an ack (R29).
func (s *Sender) acknowledge(now time.Time, m *message) {
	g := m.g
	s.noteAckedChange(g)
	g.acked.add(m.number)
	if m.expiry.After(g.ackedMaxExpiry) {
		g.ackedMaxExpiry = m.expiry
	}
	g.set(gLateChecked, false) // a new number to ask about (D13)
	s.release(m)               // after the ack is recorded: the group stays polled (D13)
	g.dirty = true
	s.joinPoll(now, g)
	s.emit(now, g, m.number, m.attempts, Acknowledged, ReasonNone, 0, false)
}

// noteAckedChange snapshots the persisted acked runs before the first
// change of this input (batch.ackedBefore); g is touched, so finish writes
// the changed runs and drops the snapshot.
func (s *Sender) noteAckedChange(g *groupState) {
	if g.snap == 0 {
		// A snapshot slot of an earlier batch keeps its runs' array.
		k := len(s.b.ackedBefore)
		if k < cap(s.b.ackedBefore) {
			s.b.ackedBefore = s.b.ackedBefore[:k+1]
			before := &s.b.ackedBefore[k]
			before.rs = append(before.rs[:0], g.acked.rs...)
		} else {
			s.b.ackedBefore = append(s.b.ackedBefore, runSet{rs: slices.Clone(g.acked.rs)})
		}
		g.snap = int32(len(s.b.ackedBefore))
	}
	s.touch(g)
}

// fail ends a pending message as Failed. In an ordered group (D16), or on a
// GroupAborted fault (R28), the whole group is aborted with it.
func (s *Sender) fail(now time.Time, m *message, reason Reason, code faults.Code) {
	g := m.g
	if (g.flags.MessageOrder || code == faults.GroupAborted) && !g.life.Terminated {
		blocks := s.beginAbort(g)
		s.release(m)
		s.emit(now, g, m.number, m.attempts, Failed, reason, code, blocks)
		s.endAbort(now, g, group.RuleSenderAbort, blocks)
		return
	}
	s.release(m)
	s.emit(now, g, m.number, m.attempts, Failed, reason, code, false)
}

// beginAbort marks g aborted and takes its key, which stays blocked while
// the abort's outcomes are unhandled (D16; gateway: 409 only while an
// abort is under way). It reports whether the key is blocked.
func (s *Sender) beginAbort(g *groupState) bool {
	g.set(gAborted, true)
	g.dirty = true
	s.touch(g)
	if g.key != "" && s.keys[g.key] == g {
		delete(s.keys, g.key)
		return true
	}
	return false
}

// endAbort fails every other unacknowledged message of g with GroupAborted
// and terminates g under rule (D16, R28).
func (s *Sender) endAbort(now time.Time, g *groupState, rule group.Rule, blocks bool) {
	for _, n := range sortedPending(g) {
		m := g.pending[n]
		s.release(m)
		s.emit(now, g, n, m.attempts, Failed, ReasonGroupAborted, 0, blocks)
	}
	s.terminate(now, g, rule)
}

func sortedPending(g *groupState) []uint64 {
	ns := make([]uint64, 0, len(g.pending))
	for n := range g.pending {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

// terminate ends g under rule at now (no-op if already terminated).
func (s *Sender) terminate(now time.Time, g *groupState, rule group.Rule) {
	if g.life.Terminated {
		return
	}
	g.life.Terminate(now, rule, now)
	s.afterTerminate(now, g)
}

// afterTerminate runs once g.life says terminated: the key is freed, a
// message still pending (t2 with a resend not yet due) fails, and the
// removal instant is set (R94): now, or once the late-fault window of the
// acknowledged messages has passed (D12, D13).
func (s *Sender) afterTerminate(now time.Time, g *groupState) {
	s.touch(g)
	g.dirty = true
	s.b.rd.Events = append(s.b.rd.Events, Event{Kind: EventTerminated, GroupID: s.idOf(g), Rule: g.life.Rule, At: now})
	if s.keys[g.key] == g {
		delete(s.keys, g.key)
	}
	for _, n := range sortedPending(g) {
		m := g.pending[n]
		reason := ReasonGroupAborted
		if group.Passed(m.expiry, now) {
			reason = ReasonExpired
		}
		s.release(m)
		s.emit(now, g, n, m.attempts, Failed, reason, 0, false)
	}
	g.setRemoveAt(s.lateRemoveAt(g, now))
}

// lateRemoveAt is when terminated g may go, from its termination instant
// on: once the identity window of its acknowledged messages has passed,
// and not before its late-fault polls were answered or given up (D12,
// D13). An operator delete keeps both: a late fault about an acknowledged
// message still fails it (SPEC-NOTES).
func (s *Sender) lateRemoveAt(g *groupState, from time.Time) time.Time {
	at := from
	if g.acked.empty() {
		return at
	}
	at = latest(at, group.PassDeadline(addClamped(g.ackedMaxExpiry, s.cfg.LateFaultGrace)))
	if !s.cfg.NoLateFaultPolls && s.lateWatched(g) && !g.has(gLateChecked) {
		at = latest(at, group.PassDeadline(addClamped(s.lateUntil(g), s.cfg.LateFaultGrace)))
	}
	return at
}

// advance applies the lifecycle at now: termination (D20–D23; a singleton
// ends once its message is settled), then removal (R94). It reschedules the
// group's timer.
func (s *Sender) advance(now time.Time, g *groupState) {
	if g.has(gRemoved) {
		return
	}
	if !g.life.Terminated {
		g.life.Complete = len(g.pending) == 0
		if g.singleton {
			if g.life.Complete {
				s.terminate(now, g, group.RuleSingleton)
			}
		} else if g.life.SenderAdvance(now).Terminated {
			s.afterTerminate(now, g)
		}
	}
	if g.life.Terminated && len(g.pending) == 0 && !now.Before(g.removeAtTime()) {
		s.remove(now, g)
		return
	}
	at, ok := g.removeAtTime(), true
	if !g.life.Terminated {
		at, ok = g.life.SenderDeadline()
		if g.singleton {
			ok = false
		}
	}
	if !ok {
		s.timers.remove(&g.tm)
		return
	}
	if !at.After(now) {
		at = now.Add(time.Nanosecond) // defensive: never spin in Tick
	}
	s.timers.set(&g.tm, g, at)
}

// remove forgets g: its records go with one OpDeleteGeneration; its
// outcomes stay in the outbox (RoleOutbox).
func (s *Sender) remove(now time.Time, g *groupState) {
	g.set(gRemoved, true)
	s.timers.remove(&g.tm)
	delete(s.groups, g.seq)
	s.relist(g)
	if id := g.foreignID(); id != "" {
		delete(s.foreign, id)
	}
	if s.keys[g.key] == g {
		delete(s.keys, g.key)
	}
	s.leavePoll(g)
	s.b.removed = append(s.b.removed, g)
	s.b.rd.Events = append(s.b.rd.Events, Event{Kind: EventRemoved, GroupID: s.idOf(g), Rule: g.life.Rule, At: now})
}

// OutcomeHandled records that the producer took outcome id: its outbox
// record is deleted. Unknown ids are ignored.
func (s *Sender) OutcomeHandled(now time.Time, id OutcomeID) Ready {
	now = now.UTC()
	s.begin()
	s.runDue(now)
	if e := s.outbox[id]; e != nil {
		delete(s.outbox, id)
		s.outboxBytes -= int64(len(e.o.Response))
		if s.latest[e.o.Ref] == id {
			delete(s.latest, e.o.Ref)
		}
		s.b.outboxDeletes = append(s.b.outboxDeletes, id)
		if e.blocksKey {
			if s.abortedKeys[e.o.GroupKey]--; s.abortedKeys[e.o.GroupKey] <= 0 {
				delete(s.abortedKeys, e.o.GroupKey)
			}
		}
	}
	return s.finish(now)
}

// Abort deletes a group on an operator's request: its unacknowledged
// messages fail with GroupAborted and the group terminates (rule deleted).
// Its state goes at once unless it has acknowledged messages: those keep
// their late-fault window, so a fault the receiver sends later (D12, D13)
// still fails them, and are polled like any others. The key stays blocked
// until the abort's outcomes are handled. Unknown ids are ignored.
func (s *Sender) Abort(now time.Time, groupID string) Ready {
	now = now.UTC()
	s.begin()
	s.runDue(now)
	if g := s.group(groupID); g != nil && !g.has(gRemoved) {
		if g.life.Terminated {
			if g.acked.empty() {
				// Acknowledged numbers keep their window (D13).
				g.setRemoveAt(now)
			}
			s.touch(g)
		} else {
			blocks := s.beginAbort(g)
			s.endAbort(now, g, group.RuleDeleted, blocks)
		}
	}
	return s.finish(now)
}

// latest returns the later of a and b.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
