package receiver

import (
	"testing"
	"time"
)

// The action a message arrived with reaches the consumer with it, whether
// it was delivered at once, held out of order, or recovered from the store
// after a restart (SOAP 1.1 §6.1.1: a service may dispatch on it).
func TestActionTravelsWithTheMessage(t *testing.T) {
	h := newHarness(t, Config{})
	var got []string
	h.onReady = func(rd Ready) {
		for _, d := range rd.Deliver {
			got = append(got, refStr(d.Ref)+" "+d.Action)
		}
	}
	m1 := seq("g", 1, ordered)
	m1.Action = "urn:op:cancel"
	h.msg(m1) // held behind 0
	h.restart()
	m0 := seq("g", 0, ordered)
	m0.Action = "urn:op:order"
	h.holdTake = true
	h.msg(m0)
	h.restart() // both stored as deliveries, neither confirmed
	h.holdTake = false
	h.at(time.Second)
	h.tick()
	h.tick()
	want := []string{"g#1/0 urn:op:order", "g#1/0 urn:op:order", "g#1/1 urn:op:cancel"}
	if len(got) != len(want) {
		t.Fatalf("deliveries %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("deliveries %q, want %q", got, want)
		}
	}
}

// A held message's action counts against the byte bounds like its payload
// (D15): the bound is on what the buffer keeps.
func TestActionCountsAgainstHeldBytes(t *testing.T) {
	h := newHarness(t, Config{MaxHeldBytesPerGroup: 10})
	m := seq("g", 1, ordered)
	m.Payload = []byte("12345")
	m.Action = "urn:123456"
	h.msg(m)
	if len(h.log) == 0 || h.log[len(h.log)-1] == "" {
		t.Fatal("no effect logged")
	}
	if got := h.r.heldBytes; got != 0 {
		t.Fatalf("held %d bytes, want the message refused (15 bytes over a 10-byte bound)", got)
	}
}

func TestMsgRecordKeepsTheActionAndReadsOldRecords(t *testing.T) {
	for _, c := range []content{{payload: []byte("<e/>")}, {payload: []byte("<e/>"), action: "urn:a"}} {
		at, got, err := decodeMsg(encodeMsg(nil, t0, c))
		if err != nil || !at.Equal(t0) || string(got.payload) != string(c.payload) || got.action != c.action {
			t.Fatalf("round trip of %+v: %v %+v %v", c, at, got, err)
		}
	}
	// A record without the action field (written before actions were kept)
	// is byte-identical to one with an empty action.
	old := encodeMsg(nil, t0, content{payload: []byte("<e/>")})
	if _, got, err := decodeMsg(old); err != nil || got.action != "" {
		t.Fatalf("old record: %+v %v", got, err)
	}
	// An explicit empty action is never written, so it is corrupt.
	bad := append(encodeMsg(nil, t0, content{payload: []byte("<e/>")}), 0)
	if _, _, err := decodeMsg(bad); err == nil {
		t.Fatal("an empty action field decoded")
	}
}
