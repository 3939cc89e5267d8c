package rmp

import (
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/clock"
)

// The loop's timer is re-armed only when the deadline moves or the timer
// fired, and it fires at the deadline it was armed for.
func TestTimerStateRearmsOnlyOnChange(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	s := newTimerState(clk)
	at := start.Add(time.Minute)
	s.arm(at, true)
	first := s.t
	clk.Add(500 * time.Millisecond)
	s.arm(at, true)
	if s.t != first {
		t.Fatal("re-armed for an unchanged deadline")
	}
	clk.Add(59500 * time.Millisecond)
	select {
	case <-s.c():
		s.fired()
	default:
		t.Fatal("timer did not fire at its deadline")
	}
	s.arm(at, true)
	if s.t == first {
		t.Fatal("a fired timer was kept")
	}
	second := s.t
	s.arm(at.Add(time.Hour), true)
	if s.t == second {
		t.Fatal("kept for a moved deadline")
	}
	third := s.t
	clk.Add(rearmAfter - time.Millisecond)
	s.arm(at.Add(time.Hour), true)
	if s.t != third {
		t.Fatal("re-armed before rearmAfter")
	}
	clk.Add(time.Millisecond)
	s.arm(at.Add(time.Hour), true)
	if s.t == third {
		t.Fatal("kept past rearmAfter (a wall clock set forward would go unnoticed)")
	}
	s.arm(time.Time{}, false)
	if s.c() != nil || s.t != nil {
		t.Fatal("not disarmed")
	}
}
