package sender

import (
	"slices"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// firePoll emits the PollRequests of one destination: one RefToMessageIds
// per Poll-pattern group with unacknowledged messages, singletons without
// ranges, sequenced groups with the ranges of their unacknowledged numbers
// (R32, R33), at most MaxPollRefs per Poll, groups in id order.
func (s *Sender) firePoll(now time.Time, d *destState) {
	ids := make([]string, 0, len(d.pollGroups))
	for id := range d.pollGroups {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return
	}
	slices.Sort(ids)
	d.inflight = make(map[PollID][]PollRef)
	max := s.cfg.Limits.MaxPollRefs
	var cur *Poll
	for _, id := range ids {
		g := d.pollGroups[id]
		ref := PollRef{GroupID: id}
		if !g.singleton {
			ref.Ranges = pendingRanges(g)
		}
		if cur == nil || len(cur.Refs) >= max {
			s.b.rd.Polls = append(s.b.rd.Polls, Poll{ID: s.nextPoll, To: d.name})
			s.nextPoll++
			cur = &s.b.rd.Polls[len(s.b.rd.Polls)-1]
		}
		cur.Refs = append(cur.Refs, ref)
		d.inflight[cur.ID] = cur.Refs
	}
	_, every := s.cfg.policy(d.name)
	s.timers.set(&d.tm, addClamped(now, every))
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
			g := s.groups[ref.GroupID]
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
