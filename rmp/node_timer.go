package rmp

import (
	"time"

	"github.com/benbjohnson/clock"
)

// timerState is the driver's single timer, set to the engine's next
// deadline (quic-go's maybeResetTimer).
type timerState struct {
	clk Clock
	t   *clock.Timer
	ch  <-chan time.Time
}

func newTimerState(clk Clock) *timerState { return &timerState{clk: clk} }

// set arms the timer to fire after d; a negative d disarms it.
func (s *timerState) set(d time.Duration) {
	s.stop()
	if d < 0 {
		s.ch = nil
		return
	}
	s.t = s.clk.Timer(d)
	s.ch = s.t.C
}

func (s *timerState) c() <-chan time.Time { return s.ch }

func (s *timerState) stop() {
	if s.t != nil {
		s.t.Stop()
		s.t = nil
	}
}
