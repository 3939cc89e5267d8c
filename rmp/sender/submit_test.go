package sender

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

var ackReq = group.Flags{AckRequested: true}

// R04, R05, R06, R08, R09, D2: numbers from 0 by 1 in a keyed group; every
// singleton gets a fresh mid: group id; ids never repeat.
func TestNumberingAndIDs_R04_R05_R06_R08_R09_D2(t *testing.T) {
	h := newHarness(t, testConfig())
	a := h.submit(Submission{GroupKey: "k", Flags: ackReq, Payload: []byte("a")})
	b := h.submit(Submission{GroupKey: "k", Flags: ackReq, Payload: []byte("b")})
	c := h.submit(Submission{GroupKey: "k", Flags: ackReq, Payload: []byte("c")})
	s1 := h.submit(Submission{Flags: ackReq, Payload: []byte("s1")})
	s2 := h.submit(Submission{Flags: ackReq, Payload: []byte("s2")})
	eq(t, []uint64{a.Number, b.Number, c.Number}, []uint64{0, 1, 2}, "numbers")
	eq(t, a.GroupID, b.GroupID, "same key, same group")
	eq(t, a.GroupID, "mid:0.test@wsrkit", "group id")
	eq(t, []bool{s1.Singleton, s2.Singleton, a.Singleton}, []bool{true, true, false}, "singletons")
	if s1.GroupID == s2.GroupID || s1.GroupID == a.GroupID {
		t.Fatalf("ids reused: %s %s %s", a.GroupID, s1.GroupID, s2.GroupID)
	}
	eq(t, len(h.sent), 5, "first transmissions happen at submit")
	tr := h.sent[3]
	eq(t, tr.Header.Sequenced, false, "a singleton has no SequenceNum (R06)")
	eq(t, h.sent[2].Header.Number, uint64(2), "header number")
}

// R07, R13, R16, R18, D10 and the field limits: clear errors, no effects.
func TestSubmitValidation_R07_R13_R16_R18_D10(t *testing.T) {
	h := newHarness(t, testConfig())
	ge := t0.Add(time.Hour)
	cases := []struct {
		name string
		sub  Submission
	}{
		{"R07 MessageOrder without a group", Submission{Flags: group.Flags{MessageOrder: true}}},
		{"R13 both timing parameters", Submission{GroupKey: "k", Timing: group.Timing{Expiry: ge, HasMaxIdle: true, MaxIdle: group.Fixed(time.Minute)}}},
		{"R16 ExpiryTime after groupExpiryTime", Submission{GroupKey: "k", Timing: group.Timing{Expiry: ge}, Expiry: ge.Add(time.Second)}},
		{"R18 Callback without ReplyTo", Submission{Pattern: group.ReplyCallback}},
		{"R17 unknown pattern", Submission{Pattern: 9}},
		{"D10 already expired", Submission{Expiry: t0.Add(-time.Nanosecond)}},
		{"timing on a singleton", Submission{Timing: group.Timing{Expiry: ge}}},
		{"last on a singleton", Submission{Last: true}},
		{"zero idle duration", Submission{GroupKey: "k", Timing: group.Timing{HasMaxIdle: true}}},
		{"negative lifetime", Submission{Lifetime: -time.Second}},
		{"long action", Submission{Action: strings.Repeat("a", 5000)}},
	}
	for _, c := range cases {
		err := h.submitErr(c.sub)
		if !errors.Is(err, ErrInvalidSubmission) {
			t.Errorf("%s: got %v, want ErrInvalidSubmission", c.name, err)
		}
	}
	cfg := testConfig()
	cfg.DefaultLifetime = 0
	h2 := newHarness(t, cfg)
	if err := h2.submitErr(Submission{}); !errors.Is(err, ErrInvalidSubmission) {
		t.Errorf("no expiry and no default lifetime: %v", err)
	}
	// D10: an ExpiryTime equal to now has not passed yet (group.Passed).
	h.submit(Submission{Expiry: t0, Flags: ackReq})
	eq(t, h.s.Stats().Pending, 1, "expiry == now is accepted")
}

// R14, R20: later messages of a group carry the group's parameters.
func TestGroupParamsMustMatch_R14_R20(t *testing.T) {
	h := newHarness(t, testConfig())
	h.submit(Submission{GroupKey: "k", Flags: ackReq, Timing: group.Timing{HasMaxIdle: true, MaxIdle: group.Fixed(time.Minute)}})
	for _, sub := range []Submission{
		{GroupKey: "k", Flags: group.Flags{AckRequested: true, DuplicateElimination: true}, Timing: group.Timing{HasMaxIdle: true, MaxIdle: group.Fixed(time.Minute)}},
		{GroupKey: "k", Flags: ackReq, Timing: group.Timing{HasMaxIdle: true, MaxIdle: group.Fixed(time.Hour)}},
		{GroupKey: "k", Flags: ackReq, To: "http://other/", Timing: group.Timing{HasMaxIdle: true, MaxIdle: group.Fixed(time.Minute)}},
	} {
		if err := h.submitErr(sub); !errors.Is(err, ErrGroupParams) {
			t.Errorf("%+v: got %v", sub, err)
		}
	}
	r := h.submit(Submission{GroupKey: "k", Flags: ackReq, Timing: group.Timing{HasMaxIdle: true, MaxIdle: group.Fixed(time.Minute)}})
	eq(t, r.Number, uint64(1), "matching submission joins the group")
	eq(t, h.sent[1].Header.Timing.HasMaxIdle, true, "timing on every message (R14)")
}

// R21, R89: the outbound record (byte-exact payload) and the group meta are
// in the Persist of the Ready whose Send transmits the message.
func TestPersistBeforeFirstSend_R21(t *testing.T) {
	h := newHarness(t, testConfig())
	payload := []byte("<env>\x00\xff</env>")
	ref, rd, err := h.s.Submit(t0, Submission{To: "http://r/", GroupKey: "k", Flags: ackReq, Payload: payload})
	noErr(t, err)
	eq(t, len(rd.Send), 1, "one transmission")
	var gotOutbound, gotMeta, gotInstance bool
	for _, m := range rd.Persist {
		switch {
		case m.Op == group.OpPut && m.Key == groupKey(ref.GroupID, group.KindOutbound, 0):
			gotOutbound = true
			om, err := decodeOutbound(m.Value)
			noErr(t, err)
			eq(t, om.payload, payload, "stored payload byte-exact")
		case m.Op == group.OpPut && m.Key == groupKey(ref.GroupID, group.KindMeta, 0):
			gotMeta = true
		case m.Op == group.OpPut && m.Key == instanceKey:
			gotInstance = true
		}
	}
	eq(t, []bool{gotOutbound, gotMeta, gotInstance}, []bool{true, true, true}, "outbound, meta, counters persisted")
	if !bytes.Equal(rd.Send[0].Payload, payload) {
		t.Fatal("payload changed")
	}
	// Without AckRequested nothing is kept: sent once, the singleton ends.
	_, rd, err = h.s.Submit(t0, Submission{To: "http://r/", Payload: payload})
	noErr(t, err)
	eq(t, len(rd.Send), 1, "sent once")
	eq(t, h.s.Stats().Pending, 1, "not pending")
	eq(t, rd.Events[len(rd.Events)-1].Kind, EventRemoved, "singleton without ack removed at once")
}

// D2, R11: the message that takes the sender's maximum number (2^63-1: the
// upper half of the KindOutbound number space holds retry state) carries
// last="true" and the key opens a new group afterwards.
func TestMaxNumberClosesGroup_D2_R11(t *testing.T) {
	h := newHarness(t, testConfig())
	ref := h.submit(Submission{GroupKey: "k", Flags: ackReq})
	// Rewrite the stored counter to just below the maximum and recover.
	k := groupKey(ref.GroupID, group.KindMeta, 0)
	g, id, err := decodeMeta(h.st.recs[k])
	noErr(t, err)
	g.next = maxNumber
	h.st.recs[k] = encodeMeta(nil, g, id)
	delete(h.st.recs, groupKey(ref.GroupID, group.KindOutbound, 0))
	h.restart()
	r := h.submit(Submission{GroupKey: "k", Flags: ackReq})
	eq(t, r.Number, uint64(math.MaxInt64), "takes the maximum")
	last := h.sent[len(h.sent)-1]
	eq(t, last.Header.Last, true, "last=true at the maximum")
	n := h.submit(Submission{GroupKey: "k", Flags: ackReq})
	if n.GroupID == r.GroupID || n.Number != 0 {
		t.Fatalf("after the maximum the key opens a new group at 0, got %+v", n)
	}
}

// R12, R34: after last="true" nothing follows in the group; the key opens a
// new group.
func TestLastClosesKey_R12_R34(t *testing.T) {
	h := newHarness(t, testConfig())
	a := h.submit(Submission{GroupKey: "k", Flags: ackReq})
	b := h.submit(Submission{GroupKey: "k", Flags: ackReq, Last: true})
	c := h.submit(Submission{GroupKey: "k", Flags: ackReq})
	eq(t, a.GroupID, b.GroupID, "last joins the group")
	eq(t, h.sent[1].Header.Last, true, "last flag sent")
	if c.GroupID == a.GroupID || c.Number != 0 {
		t.Fatalf("closed key must open a new group: %+v", c)
	}
}

// Limits: ErrBoundsFull and nothing accepted.
func TestBounds(t *testing.T) {
	cfg := testConfig()
	cfg.Limits = Limits{MaxPending: 3, MaxPendingBytes: 100, MaxPendingPerDest: 2, MaxPendingBytesPerDest: 60, MaxOutbox: 2, MaxGroups: 10}
	h := newHarness(t, cfg)
	h.submit(Submission{To: "a", Flags: ackReq, Payload: make([]byte, 30)})
	h.submit(Submission{To: "a", Flags: ackReq, Payload: make([]byte, 30)})
	if err := h.submitErr(Submission{To: "a", Flags: ackReq, Payload: []byte{1}}); !errors.Is(err, ErrBoundsFull) {
		t.Fatalf("per-destination count: %v", err)
	}
	if err := h.submitErr(Submission{To: "b", Flags: ackReq, Payload: make([]byte, 41)}); !errors.Is(err, ErrBoundsFull) {
		t.Fatalf("total bytes: %v", err)
	}
	h.submit(Submission{To: "b", Flags: ackReq, Payload: make([]byte, 40)})
	if err := h.submitErr(Submission{To: "c", Flags: ackReq}); !errors.Is(err, ErrBoundsFull) {
		t.Fatalf("total count: %v", err)
	}
	eq(t, h.s.Stats(), Stats{Groups: 3, Pending: 3, PendingBytes: 100, Timers: 3}, "nothing accepted beyond bounds")
	// The outbox bound: outcomes the producer has not handled refuse submits.
	h.hold = true
	h.reply(group.Reply{GroupID: "mid:0.test@wsrkit"}, group.Reply{GroupID: "mid:1.test@wsrkit"})
	eq(t, h.s.Stats().Outbox, 2, "two unhandled outcomes")
	if err := h.submitErr(Submission{To: "c", Flags: ackReq}); !errors.Is(err, ErrBoundsFull) {
		t.Fatalf("outbox full: %v", err)
	}
	cfg.Limits.MaxPayloadBytes = 5
	h2 := newHarness(t, cfg)
	if err := h2.submitErr(Submission{Payload: make([]byte, 6)}); !errors.Is(err, ErrInvalidSubmission) {
		t.Fatalf("payload limit: %v", err)
	}
}

func TestConfigValidation(t *testing.T) {
	bad := []Config{
		{},
		{InstanceID: "a b"},
		{InstanceID: "x", Retry: RetryPolicy{Interval: time.Second, Backoff: 0.5, MaxInterval: time.Second}},
		{InstanceID: "x", Retry: RetryPolicy{Interval: time.Second, Backoff: 1, MaxInterval: time.Millisecond}},
		{InstanceID: "x", Retry: RetryPolicy{Interval: time.Second, Backoff: 1, MaxInterval: time.Second, Jitter: 1}},
		{InstanceID: "x", Limits: Limits{MaxPending: -1}},
		{InstanceID: "x", Destinations: map[string]Destination{"d": {Retry: RetryPolicy{Interval: -1}}}},
	}
	for i, c := range bad {
		if _, err := New(c); err == nil {
			t.Errorf("config %d accepted: %+v", i, c)
		}
	}
	_ = faults.MessageExpired
}
