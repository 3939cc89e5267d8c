package receiver

import (
	"errors"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

func TestUsableURL(t *testing.T) { // R19, R63
	for u, want := range map[string]bool{
		"http://a/cb": true, "HTTPS://a:8443/x?y": true, "https://a": true,
		"": false, "ftp://a": false, "http://": false, "http:///x": false, "http://a b": false, "/rel": false,
	} {
		if got := usableURL(u); got != want {
			t.Errorf("usableURL(%q) = %v, want %v", u, got, want)
		}
	}
}

func TestBackoff(t *testing.T) {
	b := Backoff{Initial: time.Second, Factor: 2, Max: 5 * time.Second}
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second} {
		if got := b.Delay(i + 1); got != want {
			t.Errorf("Delay(%d) = %v, want %v", i+1, got, want)
		}
	}
}

func TestConfigRefusesNegativeLimits(t *testing.T) {
	if _, err := New(Config{MaxHeldTotal: -1}); !errors.Is(err, ErrConfig) {
		t.Fatalf("err = %v, want ErrConfig", err)
	}
}

func TestMetaRoundTrip(t *testing.T) {
	g := &gstate{singleton: false, flags: group.Flags{AckRequested: true, MessageOrder: true}, pattern: group.ReplyCallback,
		bits: plainZeroBit}
	g.buf.reset(7, false)
	g.setReplyTo("http://a/cb")
	g.lc = group.Lifecycle{Timing: group.Timing{Expiry: t0, MaxIdle: group.Fixed(time.Minute), HasMaxIdle: true},
		LastActivity: t0.Add(time.Second), MaxExpiry: t0.Add(time.Hour), HasLast: true, Last: 9,
		Terminated: true, TerminatedAt: t0.Add(2 * time.Second), Rule: group.RuleT2, RemoveAt: t0.Add(3 * time.Hour)}
	var back gstate
	if err := decodeMeta(encodeMeta(nil, g), &back); err != nil {
		t.Fatal(err)
	}
	g.lc.Ordered = true
	if back.lc != g.lc || back.flags != g.flags || back.pattern != g.pattern || back.replyURL() != "http://a/cb" || !back.has(plainZeroBit) {
		t.Fatalf("round trip:\n%+v\n%+v", back.lc, g.lc)
	}
	if n, ok := back.buf.Next(); n != 7 || !ok {
		t.Fatalf("next = %d %v", n, ok)
	}
	// Every truncation is an error, never a panic.
	v := encodeMeta(nil, g)
	for i := range v {
		if err := decodeMeta(v[:i], &gstate{}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated at %d: %v", i, err)
		}
	}
}

func TestRecoverRefusesOrphanRecords(t *testing.T) {
	recs := func(yield func(group.Key, []byte) bool) {
		yield(group.Key{Role: group.RoleReceiver, GroupID: "g", Generation: 1, Kind: group.KindHeld, Number: 3}, encodeMsg(nil, t0, content{}))
	}
	if _, err := Recover(Config{}, recs); !errors.Is(err, errRecord) {
		t.Fatalf("err = %v", err)
	}
}

// Restart with a hand-off in flight: Recover hands it out again at once
// (R92), and the deadline says so.
func TestRecoverRedeliversUnconfirmed(t *testing.T) {
	h := newHarness(t, Config{})
	h.holdTake = true
	h.msg(seq("g", 0))
	h.restart()
	at, ok := h.r.NextDeadline()
	if !ok || at.After(h.now) {
		t.Fatalf("deadline %v %v, want due now", at, ok)
	}
	rd := h.r.Tick(h.now)
	if len(rd.Deliver) != 1 || rd.Deliver[0].Ref.Number != 0 {
		t.Fatalf("deliver = %+v", rd.Deliver)
	}
}

// Persist comes with every promise: an ack's message is stored in the same
// Ready (D8, R41).
func TestAckComesWithItsPersist(t *testing.T) {
	r, _ := New(Config{})
	rd := r.Message(t0, seq("g", 0))
	var stored bool
	for _, m := range rd.Persist {
		if m.Op == group.OpPut && m.Key.Kind == group.KindDelivery && m.Key.Number == 0 {
			stored = true
		}
	}
	if !stored || rd.Reply == nil {
		t.Fatalf("ack without its persisted delivery: %+v", rd.Persist)
	}
	if rd.Reply.Entries[0].Ranges[0].Fault != 0 {
		t.Fatal("want an ack")
	}
	_ = faults.GroupAborted
}
