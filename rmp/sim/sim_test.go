package sim

import (
	"flag"
	"testing"
	"time"
)

var (
	flagSeeds = flag.Int("sim.seeds", 0, "number of seeds to run (0: the CI set)")
	flagSeed  = flag.Uint64("sim.seed", 1, "first seed")
	flagEvery = flag.Int("sim.pebble-every", 8, "every n-th seed runs over pebble on MemFS")
)

// TestSim runs the simulation over a fixed seed set (or -sim.seeds seeds
// from -sim.seed) and fails with the seed and trace of every violation.
func TestSim(t *testing.T) {
	seeds := *flagSeeds
	if seeds == 0 {
		seeds = 200
		if testing.Short() {
			seeds = 20
		}
	}
	total := newResult()
	start := time.Now()
	for i := range seeds {
		seed := *flagSeed + uint64(i)
		res := Run(seed, Options{Pebble: *flagEvery > 0 && seed%uint64(*flagEvery) == 0})
		total.Add(res)
		for _, v := range res.Violations {
			t.Errorf("%s\nreproduce: go test ./rmp/sim -run Sim -sim.seed=%d -sim.seeds=1 -v", v, seed)
		}
		if len(total.Violations) > 20 {
			t.Fatalf("stopping after %d violations", len(total.Violations))
		}
	}
	t.Logf("%s(wall %v)", total.Summary(), time.Since(start).Round(time.Millisecond))
}
