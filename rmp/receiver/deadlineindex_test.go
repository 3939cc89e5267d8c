package receiver

import (
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// Every message of an open group extends its removal (the latest
// ExpiryTime, D17), so its deadline moves with each one. The index is
// written when the deadline rounded down to the grain changes: once for
// twenty messages within one second, once more in the next second, and
// not at all for a duplicate (SPEC-NOTES "deadline index"). checkCompact
// holds the entry no later than the deadline throughout.
func TestDeadlineIndexOncePerGrain(t *testing.T) {
	h := newHarness(t, Config{})
	sets := h.deadlineSets()
	for n := range uint64(20) {
		h.at(time.Duration(n) * 10 * time.Millisecond)
		h.msg(seq("g", n, func(m *Message) { m.Expiry = h.now.Add(time.Hour) }))
	}
	g := h.r.lookup(group.ID{GroupID: "g", Generation: 1})
	want := t0.Add(time.Hour).Truncate(time.Second)
	if len(*sets) != 1 || !(*sets)[0].Equal(want) || !g.deadline.After(want) {
		t.Fatalf("index writes %v, want one at %v (deadline %v)", *sets, want, g.deadline)
	}
	h.at(1500 * time.Millisecond)
	h.msg(seq("g", 20, func(m *Message) { m.Expiry = h.now.Add(time.Hour) }))
	h.msg(seq("g", 20, func(m *Message) { m.Expiry = h.now.Add(time.Hour) }))
	if len(*sets) != 2 || !(*sets)[1].Equal(want.Add(time.Second)) {
		t.Fatalf("index writes %v, want a second one at %v", *sets, want.Add(time.Second))
	}
}
