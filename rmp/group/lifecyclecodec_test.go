package group

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// TestLifecycleCodec: both LastOrders round-trip every stored field, differ
// only in where HasLast stands, write the Rule as one byte, and refuse an
// unknown Rule; every truncation is an error.
func TestLifecycleCodec(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	l := Lifecycle{
		Timing:       Timing{Expiry: t0.Add(time.Hour), HasMaxIdle: true, MaxIdle: Duration{Years: 1, Clock: time.Second}},
		LastActivity: t0, MaxExpiry: t0.Add(time.Minute), Last: 300, HasLast: true,
		Terminated: true, TerminatedAt: t0.Add(2 * time.Second), Rule: RuleSingleton, RemoveAt: t0.Add(3 * time.Hour),
	}
	var enc [2][]byte
	for _, o := range []LastOrder{HasLastFirst, LastFirst} {
		e := NewRecordEncoder(nil)
		e.Timing(l.Timing)
		e.Termination(&l, o)
		enc[o] = e.Encoded()
		d := NewRecordDecoder(enc[o])
		var back Lifecycle
		back.Timing = d.Timing()
		d.Termination(&back, o)
		if err := d.End(); err != nil || back != l {
			t.Fatalf("order %d: %v\n%+v\n%+v", o, err, back, l)
		}
		for i := range enc[o] {
			d := NewRecordDecoder(enc[o][:i])
			d.Timing()
			d.Termination(&back, o)
			if d.End() == nil {
				t.Fatalf("order %d: truncated at %d decodes", o, i)
			}
		}
	}
	// The two orders differ in exactly the HasLast/Last bytes.
	if len(enc[0]) != len(enc[1]) || bytes.Equal(enc[0], enc[1]) {
		t.Fatalf("orders: %x %x", enc[0], enc[1])
	}
	// Rule is the byte before RemoveAt's instant (1, varint, uvarint).
	e := NewRecordEncoder(nil)
	e.Time(l.RemoveAt)
	ruleAt := len(enc[0]) - len(e.Encoded()) - 1
	if enc[0][ruleAt] != byte(RuleSingleton) {
		t.Fatalf("rule byte %x", enc[0][ruleAt])
	}
	bad := bytes.Clone(enc[1])
	bad[ruleAt] = byte(RuleSingleton) + 1
	d := NewRecordDecoder(bad)
	d.Timing()
	d.Termination(&Lifecycle{}, LastFirst)
	if err := d.End(); !errors.Is(err, ErrCorruptRecord) {
		t.Fatalf("unknown rule: %v", err)
	}
}
