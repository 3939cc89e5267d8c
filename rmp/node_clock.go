package rmp

import (
	"time"

	"github.com/benbjohnson/clock"
)

// Clock is the time source of a Node: the real clock by default, a
// FakeClock in tests and under the gateway's -fake-clock. It is
// benbjohnson/clock's interface, so any of its clocks fit.
type Clock = clock.Clock

// RealClock returns the wall clock.
func RealClock() Clock { return clock.New() }

// FakeClock is a clock that moves only when told to. Hours of expiry,
// retry and idle timers then run in milliseconds.
type FakeClock struct {
	*clock.Mock
}

// NewFakeClock returns a FakeClock set to start (in UTC; the library's
// mock otherwise starts in 1970 in the local zone).
func NewFakeClock(start time.Time) *FakeClock {
	m := clock.NewMock()
	m.Set(start.UTC())
	return &FakeClock{Mock: m}
}
