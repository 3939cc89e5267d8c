package sender

import (
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// Tick fires every deadline at or before now: resends (D26), expiries
// (D10), retries exhausted, group termination and removal (D20–D23, R94)
// and polls (R32). Its cost is O(due · log n), not O(pending).
func (s *Sender) Tick(now time.Time) Ready {
	now = now.UTC()
	s.begin()
	s.runDue(now)
	return s.finish(now)
}

// runDue pops and handles every timer due at now, in timer order, until
// the call's mutations reach Limits.MaxStepMutations: the timers left are
// still due, for the next call (#18: every Persist fits a store batch).
func (s *Sender) runDue(now time.Time) {
	for s.b.cost() < s.cfg.Limits.MaxStepMutations {
		at, o, ok := s.timers.peek()
		if !ok || at.After(now) {
			return
		}
		s.timers.remove(tmOf(o))
		switch o := o.(type) {
		case *message:
			s.fireMessage(now, o)
		case *groupState:
			s.touch(o)
			s.advance(now, o)
		case *destState:
			s.firePoll(now, o)
		}
	}
}

// fireMessage handles a message's timer: expiry first (D10: never send
// after ExpiryTime), then a resend, then the end of the retries (D26).
func (s *Sender) fireMessage(now time.Time, m *message) {
	if group.Passed(m.expiry, now) {
		s.fail(now, m, ReasonExpired, 0)
		return
	}
	if m.finalPoll || now.Before(m.nextAt) {
		s.scheduleMessage(m)
		return
	}
	p, _ := s.cfg.policy(m.g.to)
	if m.untilExpiry || m.attempts-1 < p.MaxRetries {
		s.transmit(now, m)
		s.armRetry(now, m)
		return
	}
	if m.g.pattern == group.ReplyPoll {
		// D16 "with Poll, after a failed poll": the ack may be waiting at
		// the receiver; poll now and fail the message if that poll does not
		// acknowledge it.
		m.finalPoll = true
		s.scheduleMessage(m)
		if d := s.dests[m.g.to]; d != nil {
			s.setPollTimer(d, now)
		}
		return
	}
	s.fail(now, m, ReasonRetriesExhausted, 0)
}

// Sent records what the transport made of a transmission. A transmission
// without a readable ack is simply not acknowledged (R36): the schedule
// resends it; nothing is persisted. Unknown refs are ignored.
func (s *Sender) Sent(now time.Time, ref MessageRef, res TransportResult) Ready {
	now = now.UTC()
	s.begin()
	s.runDue(now)
	if g := s.group(ref.GroupID); g != nil {
		if m := g.pending[ref.Number]; m != nil {
			m.lastResult = res
			if res.Kind == TransportRefused && res.SOAPCode != "" {
				// Final (D7): resending the same request gets the same answer.
				s.b.refused, s.b.soapCode = ref, res.SOAPCode
				s.fail(now, m, ReasonFaultReceived, 0)
			}
		}
	}
	return s.finish(now)
}
