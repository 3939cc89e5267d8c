package receiver

import (
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// Poll answers a PollRequest from state (R77): acknowledged numbers and
// faults of the referenced messages while their group's state exists (D13,
// R81), from every generation of the GroupId with state (replies carry no
// generation, D24); a fault wins over an ack of the same number. Unknown or
// not yet acknowledged numbers are omitted (R78, A12). An answer with
// nothing in it is not sent (A14). With ReplyTo the answer is a callback to
// that URL (R80).
func (r *Receiver) Poll(now time.Time, p PollRequest) Ready {
	r.begin()
	if f := r.checkPoll(&p); f != nil {
		r.rd.SOAPFault = f
		r.event(Event{Kind: EventRefused, Code: f.Code, Label: f.Rule})
		return r.finish(now)
	}
	var b replyBuilder
	for _, ref := range p.Refs {
		if !r.allowed(p.Peer, ref.GroupID) {
			// Answered as an unknown group, whether it is known or not.
			r.event(Event{Kind: EventRefused, Group: group.ID{GroupID: ref.GroupID}, Label: LabelPollGroupNotAllowed})
			continue
		}
		if f := r.groups[ref.GroupID]; f != nil {
			r.advanceFamily(now, f)
		}
		f := r.groups[ref.GroupID]
		if f == nil {
			continue
		}
		if r.foreign(ref.GroupID, p.Peer) {
			// Answered as an unknown group: nothing of it is told (R78).
			r.event(Event{Kind: EventRefused, Group: group.ID{GroupID: ref.GroupID}, Label: LabelForeignPeerPoll})
			continue
		}
		// Every generation answers: replies carry no generation (D24), and
		// a fault about an acknowledged message may sit in an older one
		// after a resend opened a new one (D13; gateway notes: "the same
		// groupId, whatever the generation").
		for _, g := range f.gens {
			r.pollGroup(&b, g, ref)
		}
	}
	if b.len() > 0 {
		rep := b.buildFresh(r.cfg.Dialect)
		if p.ReplyTo != "" {
			r.oneShot(p.ReplyTo, rep)
		} else {
			r.rd.PollAnswer = &rep
		}
	}
	return r.finish(now)
}

// checkPoll refuses an invalid PollRequest with InvalidPollRequest (R79, R33).
func (r *Receiver) checkPoll(p *PollRequest) *faults.Fault {
	bad := func(rule, reason string) *faults.Fault {
		return faults.New(faults.InvalidPollRequest, rule, reason)
	}
	if len(p.Refs) == 0 {
		return bad("receiver.poll-empty", "PollRequest has no RefToMessageIds")
	}
	total := 0
	for _, ref := range p.Refs {
		total += 1 + len(ref.Ranges)
		if ref.GroupID == "" {
			return bad("receiver.poll-no-group-id", "RefToMessageIds/@groupId is missing")
		}
		for _, q := range ref.Ranges {
			if q.From > q.To {
				return bad("receiver.poll-range-reversed", "SequenceNumRange from > to")
			}
		}
	}
	if total > r.cfg.MaxPollRefs {
		return bad("receiver.poll-too-large", "PollRequest references too many messages")
	}
	if p.ReplyTo != "" && !usableURL(p.ReplyTo) {
		return bad("receiver.poll-reply-to", "PollRequest/ReplyTo is not an absolute http(s) URL")
	}
	if p.ReplyTo != "" && p.ReplyToRefused {
		return bad("receiver.poll-reply-to-refused", "PollRequest/ReplyTo is an address this RMP does not call")
	}
	return nil
}

// pollGroup adds g's statuses for ref to b.
func (r *Receiver) pollGroup(b *replyBuilder, g *gstate, ref group.PollRef) {
	if g.singleton {
		if len(ref.Ranges) > 0 {
			return // numbers of a group that is a singleton: unknown (R78)
		}
		if fr, ok := g.faultMap()[0]; ok {
			b.add(replyItem{groupID: g.id.GroupID, code: fr.code})
		} else if r.ackable(g, 0) {
			b.add(replyItem{groupID: g.id.GroupID})
		}
		return
	}
	qs := ref.Ranges
	if len(qs) == 0 {
		// A13: a sequenced group asked without ranges: all of it.
		mx, ok := g.received.Max()
		if !ok {
			return
		}
		qs = []group.Range{{From: 0, To: mx}}
	}
	excl := r.unacked(g)
	for _, q := range qs {
		for _, n := range excl {
			if !q.Contains(n) {
				continue
			}
			if fr, ok := g.faultMap()[n]; ok {
				b.add(replyItem{groupID: g.id.GroupID, sequence: true, from: n, to: n, code: fr.code})
			}
		}
		for run := range g.received.Ranges() {
			if run.To < q.From {
				continue
			}
			if run.From > q.To {
				break
			}
			lo, hi := max(run.From, q.From), min(run.To, q.To)
			addAcks(b, g.id.GroupID, lo, hi, excl)
		}
	}
}

// unacked returns, sorted, the received numbers of g that are not acked:
// faulted, and under AckOnDelivery held or pending (D8).
func (r *Receiver) unacked(g *gstate) []uint64 {
	var s group.SeqSet
	for n := range g.faultMap() {
		s.Add(n) //nolint:errcheck // no limit
	}
	if r.cfg.AckOnDelivery {
		for n := range g.pending {
			s.Add(n) //nolint:errcheck
		}
		if g.buf.Len() > 0 {
			for run := range g.buf.Numbers().Ranges() {
				for n := run.From; ; n++ {
					s.Add(n) //nolint:errcheck
					if n == run.To {
						break
					}
				}
			}
		}
	}
	var out []uint64
	for run := range s.Ranges() {
		for n := run.From; ; n++ {
			out = append(out, n)
			if n == run.To {
				break
			}
		}
	}
	return out
}

// addAcks adds lo..hi minus the sorted numbers excl as ack runs.
func addAcks(b *replyBuilder, id string, lo, hi uint64, excl []uint64) {
	from := lo
	for _, n := range excl {
		if n < from || n > hi {
			continue
		}
		if n > from {
			b.add(replyItem{groupID: id, sequence: true, from: from, to: n - 1})
		}
		if n == hi {
			return
		}
		from = n + 1
	}
	b.add(replyItem{groupID: id, sequence: true, from: from, to: hi})
}
