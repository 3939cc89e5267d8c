package receiver

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTickCutAtTheBudgetKeepsTheOrder: more singletons expire at once
// than one Tick's budget may remove (D17, #18 item 1). Whatever is left
// waits in Receiver.carry, not sorted again by every Tick; the removals
// still come in the order of ids across the Ticks, each once, whatever
// the order of the deadlines; a Tick at an earlier instant (the clock
// set back) removes none of them and NextDeadline still names the
// earliest of them.
func TestTickCutAtTheBudgetKeepsTheOrder(t *testing.T) {
	h := newHarness(t, Config{MaxStepMutations: 20})
	const n = 60
	var ids []string
	for i := range n {
		id := fmt.Sprintf("urn:s:%03d", i)
		ids = append(ids, id)
		// Later ids expire earlier: the heap's order is not the ids'.
		h.msg(single(id, exp(time.Hour-time.Duration(i)*time.Second)))
	}
	h.log = nil
	removed := func() []string {
		var out []string
		for _, l := range h.log {
			if strings.HasPrefix(l, "removed ") {
				out = append(out, strings.Fields(l)[1])
			}
		}
		return out
	}

	h.at(2 * time.Hour)
	h.tick()
	first := len(removed())
	if first == 0 || first >= n {
		t.Fatalf("the first Tick removed %d of %d: the budget did not cut it", first, n)
	}
	at, ok := h.r.NextDeadline()
	if !ok || at.After(h.now) {
		t.Fatalf("NextDeadline %v %v with %d groups left due", at, ok, n-first)
	}

	h.at(0) // the clock set back: none of them is due
	h.tick()
	if got := len(removed()); got != first {
		t.Fatalf("a Tick before their deadlines removed %d more", got-first)
	}
	// The earliest left is the last id's: just past its ExpiryTime.
	want := t0.Add(time.Hour - (n-1)*time.Second + time.Nanosecond)
	if at, ok := h.r.NextDeadline(); !ok || !at.Equal(want) {
		t.Fatalf("NextDeadline after the clock went back: %v %v, want %v", at, ok, want)
	}

	h.at(2 * time.Hour)
	for range n {
		if at, ok := h.r.NextDeadline(); !ok || at.After(h.now) {
			break
		}
		h.tick()
	}
	got := removed()
	var wantIDs []string
	for _, id := range ids {
		wantIDs = append(wantIDs, id+"#1")
	}
	if !slices.Equal(got, wantIDs) {
		t.Fatalf("removals %v\nwant the order of ids %v", got, wantIDs)
	}
	if len(h.r.carry) != 0 {
		t.Fatalf("%d left in carry", len(h.r.carry))
	}
}

// BenchmarkTickDueBeyondTheBudget: 50,000 singletons expire at once, ten
// times what one Tick may remove; the Ticks that remove them all (a
// restart's re-offer of a full inbox is the same shape, #18 item 1).
func BenchmarkTickDueBeyondTheBudget(b *testing.B) {
	const n = 50_000
	for b.Loop() {
		b.StopTimer()
		r, err := New(Config{MaxGroups: n + 10, MaxStepMutations: n / 10})
		if err != nil {
			b.Fatal(err)
		}
		for i := range n {
			rd := r.Message(t0, single(fmt.Sprintf("urn:b:%06d", i), exp(time.Hour-time.Duration(i)*time.Millisecond)))
			for _, d := range rd.Deliver {
				r.Taken(t0, d.Ref)
			}
		}
		now := t0.Add(2 * time.Hour)
		b.StartTimer()
		for ticks := 0; ; ticks++ {
			if at, ok := r.NextDeadline(); !ok || at.After(now) {
				break
			}
			if ticks > n {
				b.Fatal("the Ticks did not remove them")
			}
			r.Tick(now)
		}
		if r.states != 0 {
			b.Fatalf("%d groups left", r.states)
		}
	}
}
