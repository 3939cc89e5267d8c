package sender

import (
	"slices"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// Polling (R32, R33, D13). A destination's poll set holds its Poll-pattern
// AckRequested groups with pending or acknowledged messages. Each poll asks
// about a group's unacknowledged numbers and, while its late-fault window
// is open, its acknowledged ones too: a message acknowledged while held can
// still expire there (D12), and D13 says that fault reaches the sender
// through the poll answers. The receiver answers the numbers asked about,
// so asking is what carries the fault. The window is the one that keeps an
// acknowledged message's identity: until ackedMaxExpiry + LateFaultGrace.
//
// The poll timer runs exactly while the set is non-empty. Its instant is
// stored in a small per-destination record (pollrec.go), so a recovered
// Sender polls when the old one would have.

// joinPoll adds g to its destination's poll set, starting the poll timer
// one interval from now when the set was empty.
func (s *Sender) joinPoll(now time.Time, g *groupState) {
	if !polled(g) {
		return
	}
	d := s.dest(g.to)
	if _, in := d.pollGroups[s.idOf(g)]; in {
		return
	}
	if len(d.pollGroups) == 0 {
		_, every := s.cfg.policy(g.to)
		s.setPollTimer(d, addClamped(now, every))
	}
	d.pollGroups[s.idOf(g)] = g
}

// polled says whether g's messages are acknowledged through polls.
func polled(g *groupState) bool { return g.pattern == group.ReplyPoll && g.flags.AckRequested }

// leavePoll removes g from its destination's poll set once it has nothing
// left to ask about (removed, or neither pending nor acknowledged numbers);
// an empty set stops the poll timer.
func (s *Sender) leavePoll(g *groupState) {
	d := s.dests[g.to]
	if d == nil {
		return
	}
	if _, in := d.pollGroups[s.idOf(g)]; !in || (!g.removed && (len(g.pending) > 0 || !g.acked.empty())) {
		return
	}
	delete(d.pollGroups, s.idOf(g))
	if len(d.pollGroups) == 0 {
		s.timers.remove(&d.tm)
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
// groups with their unacknowledged numbers and, within the late-fault
// window, their acknowledged ones (R32, R33, D13); at most MaxPollRefs per
// Poll, groups in id order. The next poll is one interval later.
func (s *Sender) firePoll(now time.Time, d *destState) {
	if len(d.pollGroups) == 0 {
		s.dirtyDest(d)
		return
	}
	_, every := s.cfg.policy(d.name)
	s.setPollTimer(d, addClamped(now, every))
	ids := make([]string, 0, len(d.pollGroups))
	for id := range d.pollGroups {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	d.inflight = make(map[PollID][]PollRef)
	max := s.cfg.Limits.MaxPollRefs
	var cur *Poll
	for _, id := range ids {
		ref, ok := s.pollRef(now, d.pollGroups[id])
		if !ok {
			continue
		}
		if cur == nil || len(cur.Refs) >= max {
			s.b.rd.Polls = append(s.b.rd.Polls, Poll{ID: s.nextPoll, To: d.name})
			s.nextPoll++
			cur = &s.b.rd.Polls[len(s.b.rd.Polls)-1]
		}
		cur.Refs = append(cur.Refs, ref)
		d.inflight[cur.ID] = cur.Refs
	}
}

// pollRef is what a poll asks about g now; false when nothing.
func (s *Sender) pollRef(now time.Time, g *groupState) (PollRef, bool) {
	watch := !g.acked.empty() && !now.After(addClamped(g.ackedMaxExpiry, s.cfg.LateFaultGrace))
	ref := PollRef{GroupID: s.idOf(g)}
	if g.singleton {
		return ref, len(g.pending) > 0 || watch
	}
	if !watch {
		ref.Ranges = pendingRanges(g)
		return ref, len(ref.Ranges) > 0
	}
	all := g.acked.clone()
	for _, r := range pendingRanges(g) {
		all.addRange(r)
	}
	ref.Ranges = all.rs
	return ref, true
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
// ordered group aborts it (D16 "with Poll, after a failed poll"). Unknown or
// superseded poll ids are ignored.
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
		for _, ref := range refs {
			g := s.group(ref.GroupID)
			if g == nil {
				continue
			}
			var ms []*message
			if g.singleton {
				ms = pendingIn(g, 0, 0)
			} else {
				for _, r := range ref.Ranges {
					ms = append(ms, pendingIn(g, r.From, r.To)...)
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

func (s *Sender) sortedDests() []*destState {
	ds := make([]*destState, 0, len(s.dests))
	for _, d := range s.dests {
		ds = append(ds, d)
	}
	slices.SortFunc(ds, func(a, b *destState) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	return ds
}
