package sim

import (
	"testing"
	"time"
)

// TestRunIsDeterministic: a seed replays to the same counts, over memstore
// and over pebble with its crash clones and WAL faults, so that a
// violation's seed reproduces it.
func TestRunIsDeterministic(t *testing.T) {
	for _, pebble := range []bool{false, true} {
		opt := Options{Pebble: pebble, Groups: 12, MaxPerGroup: 6, Chaos: 40 * time.Second}
		for seed := uint64(11); seed < 14; seed++ {
			a, b := Run(seed, opt), Run(seed, opt)
			if a.Summary() != b.Summary() {
				t.Errorf("seed %d pebble=%v replays differently:\n%s\n%s", seed, pebble, a.Summary(), b.Summary())
			}
			if a.Events == 0 || a.Submitted == 0 {
				t.Errorf("seed %d pebble=%v: an empty world proves nothing: %s", seed, pebble, a.Summary())
			}
		}
	}
}
