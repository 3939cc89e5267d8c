package sender

import (
	"slices"
	"strings"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// Polling (R32, R33, D13). A destination's poll set holds its groups with
// something to ask: Poll-pattern AckRequested groups with unacknowledged
// messages, and groups of any reply pattern (digest §8.3, R77, R78) whose
// acknowledged numbers can still be discarded by the receiver. A message
// acknowledged at accept (D8) can expire while held behind a gap or while
// the consumer is down (D12, D14); D13 says that fault must reach the
// sender, and under Response its "next Response" may never come. So the
// sender keeps asking about acknowledged numbers until the latest
// ExpiryTime among them plus LateFaultMargin (clock skew), and once more
// after that: the window closes when a poll sent at or after its end is
// answered (lateChecked), or LateFaultGrace later when none is. Not asked:
// best-effort messages, destinations whose receiver acks on delivery
// (Destination.AckOnDelivery, D8: an ack then means delivered), and
// Callback groups whose callbacks all came back in time (the receiver
// pushes faults there, R75); one resend marks the channel suspect.
//
// Cost: one firing per destination per interval, every member in it, each
// group's numbers as compact ranges (MaxPollRefs entries per Poll). While only
// acknowledged numbers are asked and answers come back clean the interval
// doubles from PollInterval up to PollIntervalMax; a fault or a failed poll
// resets it. The poll timer runs exactly while the set is non-empty. Its
// instant and interval are stored in a small per-destination record
// (pollrec.go), so a recovered Sender polls when the old one would have.

// lateWatched says whether g's acknowledged numbers are asked about at
// all (D13); the window (lateOpen) says until when.
func (s *Sender) lateWatched(g *groupState) bool {
	switch {
	case !g.flags.AckRequested || g.acked.empty():
		return false
	case s.cfg.NoLateFaultPolls:
		return g.pattern == group.ReplyPoll
	case s.cfg.acksOnDelivery(g.to):
		return false
	}
	return g.pattern != group.ReplyCallback || g.has(gCBSuspect)
}

// lateUntil is when g's acknowledged numbers can no longer be discarded:
// their latest ExpiryTime plus the clock-skew margin (D12). With late-fault
// polling off, Poll groups ask until the identity window ends.
func (s *Sender) lateUntil(g *groupState) time.Time {
	if s.cfg.NoLateFaultPolls {
		return addClamped(g.ackedMaxExpiry, s.cfg.LateFaultGrace)
	}
	return addClamped(g.ackedMaxExpiry, s.cfg.LateFaultMargin)
}

// lateOpen says whether a poll at now asks about g's acknowledged numbers.
func (s *Sender) lateOpen(now time.Time, g *groupState) bool {
	if !s.lateWatched(g) || g.has(gLateChecked) {
		return false
	}
	end := s.lateUntil(g)
	if !s.cfg.NoLateFaultPolls {
		end = addClamped(end, s.cfg.LateFaultGrace) // no answer since: give up
	}
	return !now.After(end)
}

// pollsPending says whether g's unacknowledged messages are acknowledged
// through polls (R32).
func pollsPending(g *groupState) bool {
	return g.pattern == group.ReplyPoll && g.flags.AckRequested && len(g.pending) > 0
}

// wantsPoll says whether g belongs in its destination's poll set.
func (s *Sender) wantsPoll(g *groupState) bool {
	return !g.has(gRemoved) && (pollsPending(g) || (s.lateWatched(g) && !g.has(gLateChecked)))
}

// joinPoll adds g to its destination's poll set, starting the poll timer
// one interval from now when the set was empty, or bringing it to one
// PollInterval from now when g has messages to acknowledge and the timer
// had backed off further.
func (s *Sender) joinPoll(now time.Time, g *groupState) {
	if !s.wantsPoll(g) {
		return
	}
	d := s.dest(g.to)
	_, every := s.cfg.policy(g.to)
	if _, in := d.pollGroups[g]; !in {
		if len(d.pollGroups) == 0 {
			d.every = 0
			s.setPollTimer(d, addClamped(now, every))
		}
		d.pollGroups[g] = struct{}{}
	}
	if at := addClamped(now, every); pollsPending(g) && d.tm.scheduled() && s.timers.at(&d.tm).After(at) {
		s.setPollTimer(d, at)
	}
}

// leavePoll removes g from its destination's poll set once it has nothing
// left to ask about; an empty set stops the poll timer.
func (s *Sender) leavePoll(g *groupState) {
	d := s.dests[g.to]
	if d == nil {
		return
	}
	if _, in := d.pollGroups[g]; !in || s.wantsPoll(g) {
		return
	}
	s.dropPoll(d, g)
}

// dropPoll takes g out of d's poll set.
func (s *Sender) dropPoll(d *destState, g *groupState) {
	delete(d.pollGroups, g)
	if len(d.pollGroups) == 0 {
		s.timers.remove(&d.tm)
		d.every = 0
		s.dirtyDest(d)
	}
	s.dropDest(d)
}

// dropDest forgets d once nothing is pending or polled there.
func (s *Sender) dropDest(d *destState) {
	if d.pending == 0 && len(d.pollGroups) == 0 {
		s.timers.remove(&d.tm)
		delete(s.dests, d.name)
	}
}

// setPollTimer schedules d's next poll at at and marks its record dirty.
func (s *Sender) setPollTimer(d *destState, at time.Time) {
	s.timers.set(&d.tm, d, at)
	s.dirtyDest(d)
}

// firePoll emits the PollRequests of one destination: one RefToMessageIds
// per member with something to ask, singletons without ranges, sequenced
// groups with their unacknowledged numbers (Poll pattern) and, within the
// late-fault window, their acknowledged ones (R32, R33, D13); groups in id
// order, at most MaxPollRefs entries per Poll (a ref and each of its ranges
// count one, as at the receiver). A member with nothing left to
// ask leaves the set. The next poll is one interval later: PollInterval
// while some member waits for acks, else the backed-off interval.
func (s *Sender) firePoll(now time.Time, d *destState) {
	if len(d.pollGroups) == 0 {
		s.dirtyDest(d)
		return
	}
	gs := make([]*groupState, 0, len(d.pollGroups))
	for g := range d.pollGroups {
		gs = append(gs, g)
	}
	slices.SortFunc(gs, func(a, b *groupState) int { return compareIDs(s.cfg.InstanceID, a, b) })
	d.inflight = make(map[PollID][]group.PollRef)
	d.firedAt, d.faultSeen = now, false
	max := s.cfg.Limits.MaxPollRefs
	var cur *Poll
	used := 0
	acks := false
	for _, g := range gs {
		ref, ok := s.pollRef(now, g)
		if !ok {
			if !pollsPending(g) {
				delete(d.pollGroups, g)
				s.closeLate(now, g)
			}
			continue
		}
		acks = acks || pollsPending(g)
		for _, part := range splitRef(ref, max-1) {
			// A ref counts one plus its ranges, as the receiver counts them
			// against its own bound (R33; receiver MaxPollRefs).
			cost := 1 + len(part.Ranges)
			if cur == nil || used+cost > max {
				s.b.rd.Polls = append(s.b.rd.Polls, Poll{ID: s.nextPoll, To: d.name})
				s.nextPoll++
				cur, used = &s.b.rd.Polls[len(s.b.rd.Polls)-1], 0
			}
			cur.Refs = append(cur.Refs, part)
			used += cost
			d.inflight[cur.ID] = cur.Refs
		}
	}
	if len(d.pollGroups) == 0 {
		s.timers.remove(&d.tm)
		d.every = 0
		s.dirtyDest(d)
		s.dropDest(d)
		return
	}
	_, every := s.cfg.policy(d.name)
	if !acks && d.every > every {
		every = d.every
	}
	s.setPollTimer(d, addClamped(now, every))
}

// closeLate ends g's late-fault window: nothing more to ask (stored, so a
// recovered Sender does not ask again). A terminated group may go now.
func (s *Sender) closeLate(now time.Time, g *groupState) {
	if g.has(gLateChecked) || g.acked.empty() {
		return
	}
	g.set(gLateChecked, true)
	g.dirty = true
	s.touch(g)
	if g.life.Terminated && !g.has(gRemoved) {
		g.setRemoveAt(s.lateRemoveAt(g, g.life.TerminatedAt))
		s.advance(now, g)
	}
}

// pollRef is what a poll asks about g now; false when nothing.
func (s *Sender) pollRef(now time.Time, g *groupState) (group.PollRef, bool) {
	pend, watch := pollsPending(g), s.lateOpen(now, g)
	ref := group.PollRef{GroupID: s.idOf(g)}
	if g.singleton {
		return ref, pend || watch
	}
	if !watch {
		if !pend {
			return ref, false
		}
		ref.Ranges = pendingRanges(g)
		return ref, len(ref.Ranges) > 0
	}
	all := g.acked.clone()
	if pend {
		for _, r := range pendingRanges(g) {
			all.addRange(r)
		}
	}
	ref.Ranges = all.rs
	return ref, true
}

// splitRef cuts ref into refs of at most n ranges each (n >= 1), so that a
// group with a fragmented acknowledged set still fits the bound of a Poll.
func splitRef(ref group.PollRef, n int) []group.PollRef {
	n = max(1, n)
	if len(ref.Ranges) <= n {
		return []group.PollRef{ref}
	}
	var out []group.PollRef
	for rs := ref.Ranges; len(rs) > 0; {
		k := min(n, len(rs))
		out = append(out, group.PollRef{GroupID: ref.GroupID, Ranges: rs[:k:k]})
		rs = rs[k:]
	}
	return out
}

// pendingRanges returns g's unacknowledged numbers as sorted ranges.
func pendingRanges(g *groupState) []group.Range {
	ns := sortedPending(g)
	var rs []group.Range
	for _, n := range ns {
		if k := len(rs); k > 0 && rs[k-1].To+1 == n {
			rs[k-1].To = n
			continue
		}
		rs = append(rs, group.Range{From: n, To: n})
	}
	return rs
}

// PollResult reports the end of a poll exchange: ok when its answer was
// received (apply the answer with Replies first), false when the exchange
// failed. Either way, a message it referenced whose retries are exhausted
// and that is still unacknowledged fails with RetriesExhausted, and in an
// ordered group aborts it (D16 "with Poll, after a failed poll"). An
// answered poll sent at or after a group's late-fault window ends it (D13).
// Unknown or superseded poll ids are ignored.
func (s *Sender) PollResult(now time.Time, id PollID, ok bool) Ready {
	now = now.UTC()
	s.begin()
	s.runDue(now)
	for _, d := range s.sortedDests() {
		refs, found := d.inflight[id]
		if !found {
			continue
		}
		delete(d.inflight, id)
		s.pollBackoff(now, d, ok)
		for _, ref := range refs {
			g := s.group(ref.GroupID)
			if g == nil {
				continue
			}
			if ok && s.lateWatched(g) && !g.has(gLateChecked) && !d.firedAt.Before(s.lateUntil(g)) {
				// Asked at or after the window's end and answered: any
				// fault was in this answer (applied before, Replies).
				s.closeLate(now, g)
				s.leavePoll(g)
			}
			var ms []*message
			if g.singleton {
				ms = pendingIn(ms, g, 0, 0)
			} else {
				for _, r := range ref.Ranges {
					ms = pendingIn(ms, g, r.From, r.To)
				}
			}
			for _, m := range ms {
				if m.finalPoll && !m.done {
					s.fail(now, m, ReasonRetriesExhausted, 0)
				}
			}
		}
		break
	}
	return s.finish(now)
}

// pollBackoff doubles d's late-fault poll interval after a clean answer, up
// to PollIntervalMax (from the next firing on), and resets it after a fault
// or a failed poll, the next poll then one PollInterval from now.
func (s *Sender) pollBackoff(now time.Time, d *destState, ok bool) {
	_, base := s.cfg.policy(d.name)
	switch {
	case s.cfg.NoLateFaultPolls:
		return // a fixed interval, as before late-fault polling
	case !ok || d.faultSeen:
		d.every = 0
		if at := addClamped(now, base); d.tm.scheduled() && s.timers.at(&d.tm).After(at) {
			s.setPollTimer(d, at)
		}
	case len(d.inflight) > 0:
		return // one step per firing: its last answer takes it
	case d.every < base:
		d.every = min(2*base, max(base, s.cfg.PollIntervalMax))
	default:
		d.every = min(2*d.every, max(base, s.cfg.PollIntervalMax))
	}
	d.faultSeen = false
	s.dirtyDest(d)
}

func (s *Sender) sortedDests() []*destState {
	ds := make([]*destState, 0, len(s.dests))
	for _, d := range s.dests {
		ds = append(ds, d)
	}
	slices.SortFunc(ds, func(a, b *destState) int { return strings.Compare(a.name, b.name) })
	return ds
}
