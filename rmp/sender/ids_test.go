package sender

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Ids are made from seq and the instance id; only their canonical form
// names a group of this instance.
func TestParseID(t *testing.T) {
	for _, c := range []struct {
		id  string
		seq uint64
		ok  bool
	}{
		{"mid:0.test@wsrkit", 0, true},
		{"mid:42.test@wsrkit", 42, true},
		{"mid:18446744073709551615.test@wsrkit", math.MaxUint64, true},
		{"mid:18446744073709551616.test@wsrkit", 0, false}, // overflows
		{"mid:042.test@wsrkit", 0, false},                  // not canonical
		{"mid:.test@wsrkit", 0, false},
		{"mid:4.other@wsrkit", 0, false},
		{"mid:4.test@wsrki", 0, false},
		{"mid:4.test@wsrkitx", 0, false},
		{"mid:4test@wsrkit", 0, false},
		{"urn:4.test@wsrkit", 0, false},
		{"", 0, false},
	} {
		seq, ok := parseID(c.id, "test")
		if ok != c.ok || seq != c.seq {
			t.Errorf("parseID(%q) = %d, %v; want %d, %v", c.id, seq, ok, c.seq, c.ok)
		}
		if c.ok {
			eq(t, groupID("test", seq), c.id, "groupID inverts parseID")
		}
	}
}

// compareIDs orders groups exactly as their id strings, foreign ids
// included, without making the strings.
func TestCompareIDsIsStringOrder(t *testing.T) {
	var gs []*groupState
	for _, seq := range []uint64{0, 1, 2, 9, 10, 11, 19, 99, 100, 101, 1000, 123456789, math.MaxUint64} {
		gs = append(gs, &groupState{seq: seq})
	}
	for _, id := range []string{"mid:5.a@wsrkit", "mid:10.zz@wsrkit", "urn:other"} {
		gs = append(gs, &groupState{seq: 7, x: &gextra{id: id}})
	}
	for _, a := range gs {
		for _, b := range gs {
			want := strings.Compare(idString("1.2", a), idString("1.2", b))
			if got := compareIDs("1.2", a, b); got != want {
				t.Fatalf("compareIDs(%s, %s) = %d, want %d", idString("1.2", a), idString("1.2", b), got, want)
			}
		}
	}
}

// compareSeqText is the order of the texts "<seq>." for seqs of every
// length (seeded random pairs, sharing prefixes often).
func TestCompareSeqText(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	text := func(x uint64) string { return strconv.FormatUint(x, 10) + "." }
	for range 20000 {
		a := r.Uint64() >> r.UintN(64)
		b := a
		switch r.UintN(3) {
		case 0:
			b = r.Uint64() >> r.UintN(64)
		case 1:
			b = a*10 + r.Uint64N(10) // a's text is a prefix of b's
		case 2:
			b = a / 10
		}
		if got, want := compareSeqText(a, b), strings.Compare(text(a), text(b)); got != want {
			t.Fatalf("compareSeqText(%d, %d) = %d, want %d", a, b, got, want)
		}
	}
}

// The id cache gives every group its own id, however many share a slot.
func TestIDCacheSlots(t *testing.T) {
	s, err := New(testConfig())
	noErr(t, err)
	a, b := &groupState{seq: 3}, &groupState{seq: 3 + idCacheSize}
	for range 2 {
		eq(t, s.idOf(a), "mid:3.test@wsrkit", "a")
		eq(t, s.idOf(b), groupID("test", 3+idCacheSize), "b")
	}
}

// A store written under another instance id (R05: ids are never reused):
// the recovered groups keep their ids — acks and resends use them, Groups
// lists them — and new groups take new numbers under the new instance id.
// A stored id is kept in the extra state; restarts keep it.
func TestRecoverUnderAnotherInstance(t *testing.T) {
	h := newHarness(t, testConfig())
	a := h.submit(Submission{GroupKey: "a", Flags: ackReq, Payload: []byte("0")})
	b := h.submit(Submission{GroupKey: "b", Flags: ackReq, Payload: []byte("0")})
	eq(t, []string{a.GroupID, b.GroupID}, []string{"mid:0.test@wsrkit", "mid:1.test@wsrkit"}, "ids")
	h.cfg.InstanceID = "next"
	h.restart()
	for _, ref := range []MessageRef{a, b} {
		g := h.s.group(ref.GroupID)
		if g == nil || g.foreignID() != ref.GroupID {
			t.Fatalf("group %s not recovered under its id: %+v", ref.GroupID, g)
		}
	}
	eq(t, h.s.group("mid:0.next@wsrkit") == nil, true, "seq 0 of the new instance names no group")
	c := h.submit(Submission{GroupKey: "c", Flags: ackReq, Payload: []byte("0")})
	eq(t, c.GroupID, "mid:2.next@wsrkit", "new group id")
	h.reply(ack(a.GroupID, 0, 0))
	eq(t, h.outcomesOf(a.GroupID), []outcomeLine{{Number: 0, Kind: Acknowledged}}, "acked under the stored id")
	h.restart()
	h.run(2 * time.Second) // b's first resend
	if trs := h.sendsOf(b.GroupID, 0); len(trs) == 0 || trs[len(trs)-1].Header.GroupID != b.GroupID {
		t.Fatalf("b not resent under its id: %+v", trs)
	}
	var ids []string
	for _, gi := range h.s.Groups() {
		ids = append(ids, gi.GroupID)
	}
	eq(t, ids, []string{"mid:0.test@wsrkit", "mid:1.test@wsrkit", "mid:2.next@wsrkit"}, "Groups")
	if g := h.s.group(c.GroupID); g == nil || g.x != nil {
		t.Fatalf("a group of this instance stores its id: %+v", g)
	}
}
