package rmp

import (
	"time"

	"github.com/benbjohnson/clock"
)

// Clock is the Node's time source for the protocol: the wall clock
// (RealClock, the default) or a FakeClock in tests and under the
// gateway's -fake-clock. It is what the driver needs and no more: the
// current time, for every input, and one-shot timers, for the engine's next
// deadline and the outcome handler's retries. (The commit and answer delays
// of NodeConfig are wall time: they pace the disk and HTTP exchanges, not
// the protocol.)
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once d has passed on this clock.
	NewTimer(d time.Duration) Timer
}

// Timer is a Clock's one-shot timer.
type Timer interface {
	// C delivers the clock's time when the timer fires.
	C() <-chan time.Time
	// Stop keeps the timer from firing; false if it already fired or was
	// stopped.
	Stop() bool
}

// RealClock returns the wall clock.
func RealClock() Clock { return libClock{clock.New()} }

// FakeClock is a clock that moves only when told to. Hours of expiry,
// retry and idle timers then run in milliseconds.
type FakeClock struct {
	mock *clock.Mock
}

// NewFakeClock returns a FakeClock set to start (in UTC; the library's
// mock otherwise starts in 1970 in the local zone).
func NewFakeClock(start time.Time) *FakeClock {
	m := clock.NewMock()
	m.Set(start.UTC())
	return &FakeClock{mock: m}
}

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time { return c.mock.Now() }

// NewTimer returns a timer that fires once the clock was moved d on.
func (c *FakeClock) NewTimer(d time.Duration) Timer { return libClock{c.mock}.NewTimer(d) }

// Add moves the clock d on, firing the timers due on the way in order.
func (c *FakeClock) Add(d time.Duration) { c.mock.Add(d) }

// Set moves the clock to t, firing the timers due on the way in order.
func (c *FakeClock) Set(t time.Time) { c.mock.Set(t) }

// libClock adapts a benbjohnson/clock clock, the real one or its mock, to
// Clock.
type libClock struct{ c clock.Clock }

func (l libClock) Now() time.Time { return l.c.Now() }

func (l libClock) NewTimer(d time.Duration) Timer { return libTimer{l.c.Timer(d)} }

// libTimer adapts a benbjohnson/clock timer to Timer.
type libTimer struct{ t *clock.Timer }

func (t libTimer) C() <-chan time.Time { return t.t.C }

func (t libTimer) Stop() bool { return t.t.Stop() }
