package rmp

import (
	"time"

	"github.com/benbjohnson/clock"
)

// timerState is the driver's single timer, set to the engine's next
// deadline. Like quic-go's maybeResetTimer it is re-armed only when that
// deadline changed or the timer fired: the loop asks after every batch,
// and the earliest deadline of many groups rarely moves.
type timerState struct {
	clk   Clock
	t     *clock.Timer
	ch    <-chan time.Time
	at    time.Time // the deadline armed; valid while t != nil
	fresh bool      // t has not fired
}

func newTimerState(clk Clock) *timerState { return &timerState{clk: clk} }

// arm sets the timer to fire at deadline at (ok), or disarms it (!ok).
func (s *timerState) arm(at time.Time, ok bool) {
	if ok && s.t != nil && s.fresh && at.Equal(s.at) {
		return
	}
	s.stop()
	if !ok {
		s.ch = nil
		return
	}
	s.t = s.clk.Timer(max(at.Sub(s.clk.Now()), 0))
	s.ch, s.at, s.fresh = s.t.C, at, true
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
