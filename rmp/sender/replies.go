package sender

import (
	"cmp"
	"slices"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// Replies applies RM-Reply entries received in an HTTP response (Response
// pattern), a callback POST (R31) or a poll answer. A fault-less entry
// acknowledges (R29, ranges inclusive); acks are idempotent and unknown
// ones ignored (R30). MessageProcessingFailure and MessageStoreOverflow keep
// the message resending until its ExpiryTime (R26, D15); any other fault
// fails it (R27); GroupAborted stops its whole group (R28). A fault about an
// acknowledged message still known fails it again (D12, D13).
//
// A NonSequenceReply about a sequenced group, a SequenceReplies about a
// singleton, and a range with From > To are ignored.
func (s *Sender) Replies(now time.Time, rs []group.Reply) Ready {
	return s.replies(now, rs, MessageRef{}, nil)
}

func (s *Sender) replies(now time.Time, rs []group.Reply, respondedTo MessageRef, response []byte) Ready {
	now = now.UTC()
	s.begin()
	s.b.respondedTo, s.b.response = respondedTo, response
	s.runDue(now)
	for i := range rs {
		e := &rs[i]
		g := s.group(e.GroupID)
		if g == nil || g.singleton == e.Sequenced {
			continue
		}
		if !e.Sequenced {
			s.applyRange(now, g, 0, 0, e.Fault)
			continue
		}
		for _, r := range e.Ranges {
			if r.From <= r.To {
				s.applyRange(now, g, r.From, r.To, r.Fault)
			}
		}
	}
	return s.finish(now)
}

// RepliesWithResponse is Replies for the RM-Reply that answered msg's own
// POST under the Response pattern together with a business response, the
// SOAP Body content beside it (R73): when rs acknowledges msg, its
// Acknowledged outcome carries response. The Sender keeps response; the
// caller must not modify it afterwards.
func (s *Sender) RepliesWithResponse(now time.Time, msg MessageRef, response []byte, rs []group.Reply) Ready {
	return s.replies(now, rs, msg, response)
}

// applyRange applies one reply about numbers from..to of g.
func (s *Sender) applyRange(now time.Time, g *groupState, from, to uint64, code faults.Code) {
	if g.has(gRemoved) {
		return
	}
	if code != 0 && !code.Valid() {
		return // not one of the twelve codes: unreadable, no ack (R36 spirit)
	}
	if d := s.dests[g.to]; code != 0 && d != nil {
		d.faultSeen = true // polls back to PollInterval (poll.go)
	}
	var few [4]*message // the usual reply: on the stack
	ms := pendingIn(few[:0], g, from, to)
	switch {
	case code == 0:
		for _, m := range ms {
			s.acknowledge(now, m)
		}
		return
	case code.Retryable():
		for _, m := range ms {
			s.retryable(now, m)
		}
		return // an ack stands against a transient fault
	}
	late := s.lateFaults(g, from, to)
	if len(ms) == 0 && len(late) == 0 {
		return
	}
	abort := (g.flags.MessageOrder || code == faults.GroupAborted) && !g.life.Terminated
	blocks := false
	if abort {
		blocks = s.beginAbort(g)
	}
	for _, m := range ms {
		s.release(m)
		s.emit(now, g, m.number, m.attempts, Failed, ReasonFaultReceived, code, blocks)
	}
	if len(late) > 0 {
		s.noteAckedChange(g)
		g.dirty = true
		s.touch(g)
	}
	for _, n := range late {
		g.addLateFailed(n)
		s.emit(now, g, n, 0, Failed, ReasonFaultReceived, code, blocks)
	}
	if abort {
		s.endAbort(now, g, group.RuleSenderAbort, blocks)
	}
}

// retryable applies a MessageProcessingFailure or MessageStoreOverflow: the
// message resends until its ExpiryTime (R26, D15).
func (s *Sender) retryable(now time.Time, m *message) {
	if m.untilExpiry && !m.finalPoll {
		return
	}
	m.untilExpiry = true
	if m.finalPoll {
		m.finalPoll = false
		m.nextAt = now
	}
	s.dirtyMessage(m)
	s.touch(m.g)
	s.scheduleMessage(m)
}

// pendingIn appends to ms the pending messages of g numbered from..to, in
// number order, in O(min(range, pending)) lookups plus a sort.
func pendingIn(ms []*message, g *groupState, from, to uint64) []*message {
	start := len(ms)
	if to-from < uint64(len(g.pending)) {
		for n := from; ; n++ {
			if m := g.pending[n]; m != nil {
				ms = append(ms, m)
			}
			if n == to {
				break
			}
		}
		return ms
	}
	for n, m := range g.pending {
		if n >= from && n <= to {
			ms = append(ms, m)
		}
	}
	slices.SortFunc(ms[start:], func(a, b *message) int { return cmp.Compare(a.number, b.number) })
	return ms
}

// lateFaults returns the acknowledged numbers of g in from..to not yet
// failed by a fault (D12, D13), in order.
func (s *Sender) lateFaults(g *groupState, from, to uint64) []uint64 {
	var ns []uint64
	for _, r := range g.acked.rs {
		lo, hi := max(r.From, from), min(r.To, to)
		if lo > hi {
			continue
		}
		for n := lo; ; n++ {
			if _, done := g.lateFailedSet()[n]; !done {
				ns = append(ns, n)
			}
			if n == hi {
				break
			}
		}
	}
	return ns
}
