//go:build unix

package benchkit

import (
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/soap"
)

// TestEnvelopeIsTheMessageOfPerfLimits: the envelope parses as number n of
// gid, ordered exactly-once, and is ≈1.5 KB.
func TestEnvelopeIsTheMessageOfPerfLimits(t *testing.T) {
	b := Envelope(t, "urn:g", 7)
	if len(b) < 1400 || len(b) > 1700 {
		t.Fatalf("envelope is %d bytes, want ≈1.5 KB", len(b))
	}
	env, err := soap.Parse(b, soap.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := env.Request
	if r.MessageID.GroupID != "urn:g" || r.MessageID.Sequence == nil || r.MessageID.Sequence.Number != 7 ||
		!r.Flags.AckRequested || !r.Flags.DuplicateElimination || !r.Flags.MessageOrder {
		t.Fatalf("request %+v", r)
	}
}

// TestCPUTimeAdvances: burning CPU moves the clock.
func TestCPUTimeAdvances(t *testing.T) {
	t0 := CPUTime()
	deadline := time.Now().Add(2 * time.Second)
	x := 0
	for CPUTime()-t0 < 5*time.Millisecond && time.Now().Before(deadline) {
		for i := range 100000 {
			x += i
		}
	}
	if CPUTime() == t0 {
		t.Fatalf("CPU time did not advance (%d)", x)
	}
}
