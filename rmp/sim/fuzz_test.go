package sim

import (
	"testing"
	"time"
)

// FuzzSim runs a small world per input: the seed draws the faults and the
// workload, the other arguments size it. Any violation fails the input,
// which then replays as a regular seed (-sim.seed) with the same Options.
func FuzzSim(f *testing.F) {
	f.Add(uint64(1), uint8(6), uint8(6), false)
	f.Add(uint64(1045), uint8(12), uint8(10), false)
	f.Add(uint64(8), uint8(4), uint8(3), true)
	f.Fuzz(func(t *testing.T, seed uint64, groups, perGroup uint8, pebble bool) {
		opt := Options{Pebble: pebble, Groups: 1 + int(groups%16), MaxPerGroup: 1 + int(perGroup%12), Chaos: 30 * time.Second, MaxEvents: 300_000}
		res := Run(seed, opt)
		refused := 0
		for _, n := range res.Refused {
			refused += n
		}
		if len(res.Violations) == 0 && res.Submitted+refused != len(makeWorkloadFor(seed, opt).msgs) {
			t.Fatalf("seed %d %+v: %d submitted and %d refused of %d planned", seed, opt, res.Submitted, refused, len(makeWorkloadFor(seed, opt).msgs))
		}
		for _, v := range res.Violations {
			t.Errorf("Options %+v: %s", opt, v)
		}
	})
}
