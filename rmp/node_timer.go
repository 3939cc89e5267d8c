package rmp

import (
	"time"

	"github.com/wsrkit/wsrkit/rmp/clock"
)

// timerState is the driver's single timer, set to the engine's next
// deadline. Like quic-go's maybeResetTimer it is re-armed only when that
// deadline changed or the timer fired: the loop asks after every batch,
// and the earliest deadline of many groups rarely moves. It is also
// re-armed once the clock read rearmAfter past its arming: a timer runs on
// the monotonic clock while deadlines are wall instants, so after the wall
// clock is set forward (or a host resumes from suspend) a busy node
// corrects its timer within that, as it did when it re-armed every batch.
type timerState struct {
	clk   clock.Clock
	t     clock.Timer
	ch    <-chan time.Time
	at    time.Time // the deadline armed; valid while t != nil
	armed time.Time // the clock's wall reading when t was armed
	fresh bool      // t has not fired
}

// rearmAfter bounds how long the loop keeps one timer for one deadline.
const rearmAfter = time.Second

func newTimerState(clk clock.Clock) *timerState { return &timerState{clk: clk} }

// arm sets the timer to fire at deadline at (ok), or disarms it (!ok).
func (s *timerState) arm(at time.Time, ok bool) {
	now := s.clk.Now().Round(0) // wall time only (Round(0) drops the monotonic reading)
	if ok && s.t != nil && s.fresh && at.Equal(s.at) && now.Sub(s.armed) < rearmAfter {
		return
	}
	s.stop()
	if !ok {
		s.ch = nil
		return
	}
	s.t = s.clk.NewTimer(max(at.Sub(now), 0))
	s.ch, s.at, s.armed, s.fresh = s.t.C(), at, now, true
}

// fired notes that the timer's channel was read.
func (s *timerState) fired() { s.fresh = false }

func (s *timerState) c() <-chan time.Time { return s.ch }

func (s *timerState) stop() {
	if s.t != nil {
		s.t.Stop()
		s.t = nil
	}
}
