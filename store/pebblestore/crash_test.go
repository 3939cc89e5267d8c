package pebblestore_test

import (
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/wsrkit/wsrkit/store/pebblestore"
)

// TestCrashConsistency applies batches from concurrent workers and takes
// crash clones of the filesystem while they run (only synced data is sure
// to survive; a seeded random share of unsynced data does). Reopening each
// clone must show every batch whose Apply had returned, and no batch in part.
func TestCrashConsistency(t *testing.T) {
	const workers = 4
	crashes := 60
	switch {
	case os.Getenv(longEnv) != "":
		crashes = 1000
	case testing.Short():
		crashes = 20
	}
	fs := vfs.NewCrashableMem()
	s, err := pebblestore.Open(pebblestore.Options{Dir: "db", FS: fs, MemTableSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	var acked [workers]atomic.Int64 // batches whose Apply returned nil
	var total atomic.Int64
	// permits: one per batch; the crash loop hands out a few, then crashes
	// while they are being applied.
	permits := make(chan struct{}, 1<<16)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				if _, ok := <-permits; !ok {
					return
				}
				if err := s.Apply(workBatch(w, i)); err != nil {
					errs <- err
					return
				}
				acked[w].Store(int64(i + 1))
				total.Add(1)
			}
		})
	}
	rng := rand.New(rand.NewPCG(2026, 11))
	for c := range crashes {
		// Release a seeded number of batches, wait for some of them, and
		// crash while the others may be in flight.
		n := 1 + rng.IntN(24)
		target := total.Load() + int64(rng.IntN(n))
		for range n {
			permits <- struct{}{}
		}
		for total.Load() < target && len(errs) == 0 {
			time.Sleep(20 * time.Microsecond)
		}
		var before [workers]int64
		for w := range workers {
			before[w] = acked[w].Load()
		}
		pct := rng.IntN(101)
		clone := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rand.New(rand.NewPCG(uint64(c), 1))})
		r, err := pebblestore.Open(pebblestore.Options{Dir: "db", FS: clone})
		if err != nil {
			t.Fatalf("crash %d (unsynced %d%%): reopen: %v", c, pct, err)
		}
		counts := checkWorkload(t, r, workers)
		for w := range workers {
			if int64(counts[w]) < before[w] {
				t.Fatalf("crash %d (unsynced %d%%): worker %d has %d batches; %d were acknowledged", c, pct, w, counts[w], before[w])
			}
		}
		if err := r.Close(); err != nil {
			t.Fatalf("crash %d: close: %v", c, err)
		}
	}
	close(permits)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Apply: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d crashes over %d batches", crashes, total.Load())
}
