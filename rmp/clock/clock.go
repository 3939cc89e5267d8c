// Package clock is the time source a Node runs the protocol on: the wall
// clock (Real, the default) or a Fake one that moves only when told to, in
// tests and under the gateway's -fake-clock. Clock is what the driver
// needs and no more: the current time, for every input, and one-shot
// timers, for the engine's next deadline and the outcome handler's
// retries. (The commit and answer delays of rmp.NodeConfig are wall time:
// they pace the disk and HTTP exchanges, not the protocol.)
package clock

import (
	"time"

	lib "github.com/benbjohnson/clock"
)

// Clock is the Node's time source for the protocol (rmp.NodeConfig.Clock).
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

// Real returns the wall clock.
func Real() Clock { return libClock{lib.New()} }

// Fake is a clock that moves only when told to. Hours of expiry, retry
// and idle timers then run in milliseconds (with rmp.Node.Sync to wait
// for what a move made due).
type Fake struct {
	mock *lib.Mock
}

// NewFake returns a Fake set to start (in UTC; the library's mock
// otherwise starts in 1970 in the local zone).
func NewFake(start time.Time) *Fake {
	m := lib.NewMock()
	m.Set(start.UTC())
	return &Fake{mock: m}
}

// Now returns the clock's time.
func (c *Fake) Now() time.Time { return c.mock.Now() }

// NewTimer returns a timer that fires once the clock was moved d on.
func (c *Fake) NewTimer(d time.Duration) Timer { return libClock{c.mock}.NewTimer(d) }

// Add moves the clock d on, firing the timers due on the way in order.
func (c *Fake) Add(d time.Duration) { c.mock.Add(d) }

// Set moves the clock to t, firing the timers due on the way in order.
func (c *Fake) Set(t time.Time) { c.mock.Set(t) }

// libClock adapts a benbjohnson/clock clock, the real one or its mock, to
// Clock.
type libClock struct{ c lib.Clock }

func (l libClock) Now() time.Time { return l.c.Now() }

func (l libClock) NewTimer(d time.Duration) Timer { return libTimer{l.c.Timer(d)} }

// libTimer adapts a benbjohnson/clock timer to Timer.
type libTimer struct{ t *lib.Timer }

func (t libTimer) C() <-chan time.Time { return t.t.C }

func (t libTimer) Stop() bool { return t.t.Stop() }
