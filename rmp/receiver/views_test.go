package receiver

import (
	"errors"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// Group returns the newest listed generation; Stats counts what the
// metrics report (gateway: wsrkit_held_messages, wsrkit_open_groups).
func TestGroupAndStats(t *testing.T) {
	h := newHarness(t, Config{})
	h.msg(seq("o", 1, ordered, payload("abcd")))
	h.msg(seq("o", 3, ordered, payload("ef")))
	h.msg(seq("u", 0, last))
	h.msg(single("s", cb("http://cb/s")))
	st := h.r.Stats()
	want := Stats{Groups: 3, OpenGroups: 2, HeldMessages: 2, HeldBytes: 6}
	if st != want {
		t.Fatalf("stats = %+v, want %+v", st, want)
	}
	gi, ok := h.r.Group("o")
	if !ok || gi.Generation != 1 || gi.Held != 2 || len(gi.Ranges) != 2 || gi.Ranges[1] != (group.Range{From: 3, To: 3}) || !gi.Flags.MessageOrder {
		t.Fatalf("group o = %+v %v", gi, ok)
	}
	gi, ok = h.r.Group("u")
	if !ok || !gi.Terminated || gi.Rule != group.RuleT41 || !gi.HasLast || gi.LastNumber != 0 {
		t.Fatalf("group u = %+v %v", gi, ok) // D23 t4.1: complete at once
	}
	gi, ok = h.r.Group("s")
	if !ok || !gi.Singleton || gi.Ranges != nil || gi.HasLast || !gi.HasDeadline || !gi.NextDeadline.Equal(group.PassDeadline(t0.Add(hr))) {
		t.Fatalf("group s = %+v %v", gi, ok)
	}
	if _, ok := h.r.Group("nope"); ok {
		t.Fatal("unknown group listed")
	}
	// The returned ranges are the caller's.
	gi, _ = h.r.Group("o")
	gi.Ranges[0].To = 99
	if again, _ := h.r.Group("o"); again.Ranges[0].To != 1 {
		t.Fatal("GroupInfo.Ranges aliases the receiver's state")
	}
	// A failing callback stays counted until it is accepted (R75).
	h.cbFail = true
	h.msg(single("t", cb("http://cb/t")))
	if st := h.r.Stats(); st.PendingCallbacks != 1 {
		t.Fatalf("pending callbacks = %d, want 1", st.PendingCallbacks)
	}
	h.r.Abort(h.now, "o")
	if st := h.r.Stats(); st.HeldMessages != 0 || st.HeldBytes != 0 || st.Groups != 3 {
		t.Fatalf("after delete: %+v", st)
	}
}

// An ExpiryTime or groupExpiryTime past 2262 is valid xsd:dateTime; the
// deadline indexed for the store is clamped into its int64-nanosecond range
// while the Receiver keeps the exact instant (interpretation of R62/D20).
func TestFarFutureDeadlinesAreClamped(t *testing.T) {
	far := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	h := newHarness(t, Config{})
	sets := h.deadlineSets()
	h.msg(seq("g", 0, func(m *Message) { m.Expiry, m.Timing.Expiry = far, far }))
	h.msg(single("s", func(m *Message) { m.Expiry = far }))
	if len(*sets) != 2 {
		t.Fatalf("deadline sets = %v, want 2", *sets)
	}
	for _, at := range *sets {
		if !at.Equal(group.MaxIndexedDeadline()) {
			t.Fatalf("indexed deadline %v, want %v", at, group.MaxIndexedDeadline())
		}
	}
	next, ok := h.r.NextDeadline()
	if !ok || !next.Equal(group.PassDeadline(far)) {
		t.Fatalf("NextDeadline = %v %v, want the exact instant", next, ok)
	}
	// Ticking at the clamped instant changes nothing and rewrites nothing.
	h.now = group.MaxIndexedDeadline()
	*sets = nil
	h.tick()
	if len(*sets) != 0 || len(h.r.Groups()) != 2 {
		t.Fatalf("tick at the clamp: sets %v, groups %d", *sets, len(h.r.Groups()))
	}
	h.restart()
	if next2, _ := h.r.NextDeadline(); !next2.Equal(next) {
		t.Fatalf("after restart NextDeadline = %v, want %v", next2, next)
	}
	h.msg(seq("g", 1, func(m *Message) { m.Expiry = far }))
	if len(*sets) != 0 {
		t.Fatalf("recovered receiver re-indexed an unchanged deadline: %v", *sets)
	}
}

// Recovery adds a stored segment in one step however long it is; two
// overlapping segments are a corrupt store.
func TestRecoverSegments(t *testing.T) {
	meta := encodeMeta(nil, &gstate{pattern: group.ReplyResponse})
	key := func(k group.Kind, n uint64) group.Key {
		return group.Key{Role: group.RoleReceiver, GroupID: "g", Generation: 1, Kind: k, Number: n}
	}
	recs := func(segs ...group.Range) func(func(group.Key, []byte) bool) {
		return func(yield func(group.Key, []byte) bool) {
			if !yield(key(group.KindMeta, 0), meta) {
				return
			}
			for _, s := range segs {
				if !yield(key(group.KindReceived, s.From), encodeSeg(nil, s.To)) {
					return
				}
			}
		}
	}
	r, err := Recover(Config{}, recs(group.Range{From: 0, To: 1 << 40}, group.Range{From: 1<<40 + 1, To: ^uint64(0)}))
	if err != nil {
		t.Fatal(err)
	}
	if gi, _ := r.Group("g"); len(gi.Ranges) != 1 || gi.Ranges[0] != (group.Range{From: 0, To: ^uint64(0)}) {
		t.Fatalf("ranges = %v", gi.Ranges)
	}
	if _, err := Recover(Config{}, recs(group.Range{From: 0, To: 10}, group.Range{From: 5, To: 20})); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("overlap: err = %v, want ErrCorrupt", err)
	}
}

// A waiting ack is stored as a KindReply record with code 0; a "reported"
// ack is garbage.
func TestPendingAckCodec(t *testing.T) {
	fr, err := decodeFault(encodeFault(nil, faultRec{}))
	if err != nil || fr != (faultRec{}) {
		t.Fatalf("round trip: %+v %v", fr, err)
	}
	if _, err := decodeFault(encodeFault(nil, faultRec{reported: true})); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("reported ack: err = %v", err)
	}
}

// Under AckOnDelivery with the Response pattern no ack comes out of Taken
// (no HTTP exchange is open, gateway notes); Callback acks still go out.
func TestTakenAckNotInReply(t *testing.T) {
	r, _ := New(Config{AckOnDelivery: true})
	rd := r.Message(t0, seq("g", 0))
	if rd.Reply != nil || len(rd.Deliver) != 1 {
		t.Fatalf("message: reply %v, deliver %d", rd.Reply, len(rd.Deliver))
	}
	rd = r.Taken(t0, rd.Deliver[0].Ref)
	if rd.Reply != nil {
		t.Fatalf("Taken produced a Reply: %+v", rd.Reply)
	}
	rd = r.Message(t0, seq("c", 0, cb("http://cb/c")))
	rd = r.Taken(t0, rd.Deliver[0].Ref)
	if rd.Reply != nil || len(rd.Callbacks) != 1 || replyStr(rd.Callbacks[0].Reply) != "c[0]" {
		t.Fatalf("callback ack at Taken: reply %v, callbacks %+v", rd.Reply, rd.Callbacks)
	}
}
