package receiver

import (
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// checkCompact checks, after every applied Ready, the invariants of the
// compact group state (pending.go, extra.go, seg.go, order.go): what an
// idle group does not need is not held, and the compact forms say exactly
// what the store holds.
func (h *harness) checkCompact() {
	h.t.Helper()
	for _, f := range h.r.groups {
		for _, g := range f.gens {
			h.checkGroup(g)
		}
	}
}

func (h *harness) checkGroup(g *gstate) {
	h.t.Helper()
	if g.pending != nil && len(g.pending) == 0 {
		h.t.Fatalf("%v: empty pending map kept", g.id)
	}
	if b := g.buf.held(); b != nil && b.Len() == 0 {
		h.t.Fatalf("%v: empty OrderBuffer kept", g.id)
	}
	if !g.ordered() && (g.buf.b != nil || g.buf.next != 0) {
		h.t.Fatalf("%v: unordered group with an ordering position", g.id)
	}
	if x := g.x; x != nil && !g.touched {
		held := g.buf.Len() > 0 && !x.heldMin.IsZero()
		if x.replyTo == "" && x.expiry.IsZero() && !held && len(x.faults) == 0 && x.unreported == 0 &&
			x.acks.Empty() && len(x.responses) == 0 && x.segs == nil {
			h.t.Fatalf("%v: all-zero extra state kept", g.id)
		}
	}
	if g.singleton {
		return
	}
	// The KindReceived records are the segments, explicit or implicit.
	var stored []group.Range
	for k, v := range h.st.recs {
		if k.Role == group.RoleReceiver && k.GroupID == g.id.GroupID && k.Generation == g.id.Generation && k.Kind == group.KindReceived {
			to, err := decodeSeg(v)
			if err != nil {
				h.t.Fatal(err)
			}
			stored = append(stored, group.Range{From: k.Number, To: to})
		}
	}
	slices.SortFunc(stored, func(a, b group.Range) int { return cmpU64(a.From, b.From) })
	want := slices.Clone(g.segList())
	if want == nil {
		if g.received.RangeCount() > 1 {
			h.t.Fatalf("%v: implicit segments with %d runs", g.id, g.received.RangeCount())
		}
		want = g.received.AppendRanges(nil)
	}
	slices.SortFunc(want, func(a, b group.Range) int { return cmpU64(a.From, b.From) })
	if !slices.Equal(stored, want) {
		h.t.Fatalf("%v: stored segments %v, state says %v", g.id, stored, want)
	}
	// Until a restart (which redoes hand-offs at once), the indexed
	// deadline is the one last persisted (gstate.deadline, ready.go).
	if !h.restarted && !g.touched {
		if got, want := h.st.deadlines[g.id], indexedDeadline(g); !got.Equal(want) {
			h.t.Fatalf("%v: stored deadline %v, indexed %v", g.id, got, want)
		}
	}
	// Whatever the store holds is never later than the deadline (a reader
	// of the index may wake early, never late), clamped instants aside.
	if at, ok := h.st.deadlines[g.id]; g.has(hasDeadlineBit) && !g.touched && g.deadline.After(group.MinIndexedDeadline()) {
		if !ok || at.After(g.deadline) {
			h.t.Fatalf("%v: stored deadline %v (present %v) after the deadline %v", g.id, at, ok, g.deadline)
		}
	}
}

// An idle open group — ordered, in order, everything taken — keeps no
// pending map, OrderBuffer, extra state or segment list (goal ≤ 512 B per
// idle open group); an out-of-order episode leaves none behind once it is
// resolved, and the same holds after a restart.
func TestIdleGroupKeepsNothingExtra(t *testing.T) {
	h := newHarness(t, Config{})
	state := func() *gstate {
		t.Helper()
		g := h.r.lookup(group.ID{GroupID: "g", Generation: 1})
		if g == nil {
			t.Fatal("no group")
		}
		return g
	}
	idle := func(when string, next uint64) {
		t.Helper()
		g := state()
		if g.pending != nil || g.buf.b != nil || g.x != nil {
			t.Fatalf("%s: idle group holds pending %v, buffer %v, extra %+v", when, g.pending, g.buf.b, g.x)
		}
		if n, ok := g.buf.Next(); n != next || !ok {
			t.Fatalf("%s: next = %d %v, want %d", when, n, ok, next)
		}
	}
	msg := func(n uint64) {
		m := seq("g", n)
		ordered(&m)
		m.Expiry = h.now.Add(time.Hour)
		h.msg(m)
	}
	msg(0)
	msg(1)
	idle("in order", 2)
	h.restart()
	idle("in order, restarted", 2)
	msg(3) // held: an OrderBuffer, a second segment
	if g := state(); g.buf.Len() != 1 || len(g.segList()) != 2 {
		t.Fatalf("held %d, segments %v", g.buf.Len(), g.segList())
	}
	msg(2) // one run, three stored segments: the list stays explicit
	if g := state(); g.buf.b != nil || g.pending != nil || len(g.segList()) != 3 {
		t.Fatalf("after the gap: buffer %v, pending %v, segments %v", g.buf.b, g.pending, g.segList())
	}
	h.restart()
	if g := state(); len(g.segList()) != 3 || g.buf.b != nil {
		t.Fatalf("restarted: segments %v, buffer %v", g.segList(), g.buf.b)
	}
	// Enough segments for compaction, which leaves one run: implicit again.
	for n := uint64(20); n > 4; n-- {
		msg(n)
	}
	msg(4)
	idle("compacted", 21)
	h.restart()
	idle("compacted, restarted", 21)
}

// TestGroupStateSize pins gstate to the 352-byte size class (memory per
// idle open group, BenchmarkIdleGroupMemory in rmp): the peer pointer
// (#18) and the Listing slot (#21) took it to 368 B, the 384-byte class;
// the ordering position's exhausted flag as a sentinel and four flags in
// one byte (gbits) bring it back.
func TestGroupStateSize(t *testing.T) {
	if n := unsafe.Sizeof(gstate{}); n > 352 {
		t.Fatalf("gstate is %d bytes, over the 352-byte size class", n)
	}
}
