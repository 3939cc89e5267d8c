package sim

import (
	"runtime"
	"testing"
	"time"
)

// TestRunClosesItsStores: a pebble world, with its crash clones and WAL
// faults, leaves no store open (each keeps goroutines and memory), so a
// campaign of thousands of seeds runs in constant memory.
func TestRunClosesItsStores(t *testing.T) {
	before := runtime.NumGoroutine()
	res := newResult()
	for seed := uint64(1); res.StoreFault == 0 || res.Crashes == 0; seed++ {
		if seed > 20 {
			t.Fatalf("20 seeds without a crash and a store fault: %s", res.Summary())
		}
		res.Add(Run(seed, Options{Pebble: true, Groups: 6, MaxPerGroup: 4, Chaos: 30 * time.Second}))
	}
	if len(res.Violations) > 0 {
		t.Fatal(res.Violations[0])
	}
	after := runtime.NumGoroutine()
	for i := 0; i < 200 && after > before; i++ {
		time.Sleep(10 * time.Millisecond) // a closed pebble's goroutines end soon after Close
		after = runtime.NumGoroutine()
	}
	if after > before {
		t.Fatalf("%d goroutines before %d seeds over pebble, %d after: a store was left open", before, res.Seeds, after)
	}
}
