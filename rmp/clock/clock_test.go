package clock

import (
	"testing"
	"time"
)

var (
	_ Clock = (*Fake)(nil)
	_ Clock = Real()
)

// A Fake clock's timers fire only when it is moved past them, in order,
// with the clock reading their instant; a stopped one never fires.
func TestFakeTimers(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600))
	c := NewFake(start)
	if got := c.Now(); !got.Equal(start) || got.Location() != time.UTC {
		t.Fatalf("Now = %v, want %v in UTC", got, start)
	}
	late, early, stopped := c.NewTimer(2*time.Second), c.NewTimer(time.Second), c.NewTimer(time.Second)
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop reports true once, for a timer that had not fired")
	}
	c.Add(999 * time.Millisecond)
	select {
	case <-early.C():
		t.Fatal("fired before its time")
	default:
	}
	c.Add(time.Millisecond)
	if at := <-early.C(); !at.Equal(start.Add(time.Second)) {
		t.Fatalf("fired at %v", at)
	}
	c.Set(start.Add(time.Hour))
	if at := <-late.C(); !at.Equal(start.Add(2 * time.Second)) {
		t.Fatalf("Set fired the later timer at %v", at)
	}
	if early.Stop() {
		t.Fatal("Stop reports true for a fired timer")
	}
	select {
	case <-stopped.C():
		t.Fatal("a stopped timer fired")
	default:
	}
	if !c.Now().Equal(start.Add(time.Hour)) {
		t.Fatalf("Now = %v after Set", c.Now())
	}
}

// The real clock reads the wall clock and its timers fire.
func TestRealTimer(t *testing.T) {
	c := Real()
	before := time.Now()
	tm := c.NewTimer(time.Millisecond)
	select {
	case at := <-tm.C():
		if at.Before(before) {
			t.Fatalf("fired at %v, before it was set (%v)", at, before)
		}
	case <-time.After(time.Minute):
		t.Fatal("the real timer did not fire")
	}
	if now := c.Now(); now.Before(before) {
		t.Fatalf("Now = %v, before %v", now, before)
	}
}
