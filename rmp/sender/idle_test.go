package sender

import (
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// An idle open group — everything sent acknowledged — keeps no pending
// map and no extra state (goal: memory per idle open group); an emptied
// pending map is reused by the next group that needs one; a late fault
// makes the extra state, which survives a restart.
func TestIdleGroupKeepsNothingExtra(t *testing.T) {
	h := newHarness(t, testConfig())
	a := h.submit(Submission{GroupKey: "a", Flags: ackReq, Payload: []byte("0")})
	h.submit(Submission{GroupKey: "a", Flags: ackReq, Payload: []byte("1")})
	g := h.s.group(a.GroupID)
	eq(t, len(g.pending), 2, "pending before the ack")
	used := g.pending
	h.reply(ack(a.GroupID, 0, 1))
	idle := func(when string) {
		t.Helper()
		g := h.s.group(a.GroupID)
		if g == nil || g.pending != nil || g.x != nil {
			t.Fatalf("%s: idle group %+v", when, g)
		}
		eq(t, g.acked.rs, []group.Range{{From: 0, To: 1}}, when+": acked")
	}
	idle("acked")
	b := h.submit(Submission{GroupKey: "b", Flags: ackReq, Payload: []byte("0")})
	if gb := h.s.group(b.GroupID); len(gb.pending) != 1 || !sameMap(gb.pending, used) {
		t.Fatalf("second group did not reuse the emptied map")
	}
	h.restart()
	idle("restarted")
	// A fault about an acked number fails it late (D12) and is remembered.
	h.reply(group.Reply{GroupID: a.GroupID, Sequenced: true, Ranges: []group.ReplyRange{{From: 1, To: 1, Fault: faults.PermanentProcessingFailure}}})
	if g := h.s.group(a.GroupID); g.x == nil || len(g.x.lateFailed) != 1 {
		t.Fatalf("late fault not recorded: %+v", g.x)
	}
	h.restart()
	if g := h.s.group(a.GroupID); g.x == nil || len(g.x.lateFailed) != 1 || g.pending != nil {
		t.Fatalf("restarted: extra %+v, pending %v", g.x, g.pending)
	}
}

// sameMap reports whether a and b are one map.
func sameMap(a, b map[uint64]*message) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestGroupStateSize pins groupState to the 320-byte size class (memory per
// idle open group, BenchmarkIdleGroupMemory in rmp).
func TestGroupStateSize(t *testing.T) {
	if n := unsafe.Sizeof(groupState{}); n > 320 {
		t.Fatalf("groupState is %d bytes, over the 320-byte size class", n)
	}
}

// The indexed deadline kept as nanoseconds tells the zero Time, both clamp
// bounds and an ordinary instant apart exactly.
func TestIndexedDeadlineCompact(t *testing.T) {
	instants := []time.Time{{}, group.MinIndexedDeadline(), group.MaxIndexedDeadline(), t0, t0.Add(time.Nanosecond)}
	for i, a := range instants {
		var g groupState
		g.setIndexed(a)
		for j, b := range instants {
			if got := g.isIndexed(b); got != (i == j) {
				t.Fatalf("set %v, isIndexed(%v) = %v", a, b, got)
			}
		}
	}
}
