package pebblestore_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/pebblestore"
)

// longEnv, when set, makes the crash and fault sweeps exhaustive.
const longEnv = "WSRKIT_STORE_LONG"

// TestErrorSweep fails the n-th filesystem operation, for n = 0, 1, 2, …,
// of a workload (open, synced batches, close) until the workload completes
// with nothing injected. Every injected failure must surface as an error
// from Open, Apply or Close (never a panic, never silent success), and the
// filesystem reopened without injection must hold whole batches only, every
// acknowledged one included.
func TestErrorSweep(t *testing.T) {
	const workers = 2
	batches := 6
	if os.Getenv(longEnv) != "" {
		batches = 40
	}
	errorsSeen, fatalSeen := 0, 0
	var unopenable []string
	defer func() {
		if len(unopenable) > 0 {
			t.Logf("never-acknowledged stores left unopenable: %q", unopenable)
		}
	}()
	for n := int32(0); ; n++ {
		mem := vfs.NewCrashableMem()
		inj := &errorfs.Counter{Injector: errorfs.OnIndex(n)}
		acked, err := faultyRun(mem, inj, workers, batches)
		injected := inj.Load() > 0
		if !injected && err != nil {
			t.Fatalf("op %d: error without injection: %v", n, err)
		}
		if err != nil {
			errorsSeen++
		}
		if errors.Is(err, store.ErrFailed) {
			fatalSeen++
		}
		// An injected failure without an error is one pebble handled
		// (a retried or optional operation); the state check still applies.
		// Check the filesystem as the failure left it, and as a power loss
		// right after would leave it (only synced data).
		what := fmt.Sprintf("op %d (%s)", n, inj)
		checkAfterFault(t, what+", as left", mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(uint64(n), 0))}), workers, acked, err, &unopenable)
		checkAfterFault(t, what+", after power loss", mem.CrashClone(vfs.CrashCloneCfg{}), workers, acked, err, &unopenable)
		if !injected {
			t.Logf("swept %d operations; %d failures surfaced as errors, %d of them stopped the store (ErrFailed)", n, errorsSeen, fatalSeen)
			if errorsSeen == 0 || fatalSeen == 0 {
				t.Fatalf("the sweep did not reach both error paths")
			}
			return
		}
	}
}

// checkAfterFault reopens fs without injection and checks that it holds
// whole batches only, at least the acked ones.
func checkAfterFault(t *testing.T, what string, fs vfs.FS, workers, acked int, runErr error, unopenable *[]string) {
	t.Helper()
	s, rerr := pebblestore.Open(pebblestore.Options{Dir: "db", FS: fs})
	if rerr != nil {
		if acked > 0 {
			t.Fatalf("%s: reopen after %d acknowledged batches: %v", what, acked, rerr)
		}
		// Open failed while creating the store: a directory in
		// which nothing was ever acknowledged may stay unopenable
		// (pebble refuses a half-created store rather than guess).
		*unopenable = append(*unopenable, fmt.Sprintf("%s: %v", what, rerr))
		return
	}
	counts := checkWorkload(t, s, workers)
	got := 0
	for _, c := range counts {
		got += c
	}
	if got < acked {
		t.Fatalf("%s: %d batches survive; %d were acknowledged (run error: %v)", what, got, acked, runErr)
	}
	if cerr := s.Close(); cerr != nil {
		t.Fatalf("%s: close after reopen: %v", what, cerr)
	}
}

// faultyRun opens a store on errorfs over mem, applies batches round-robin
// over the workers (each batch synced) and closes it. It returns the number
// of acknowledged batches and the first error.
func faultyRun(mem vfs.FS, inj errorfs.Injector, workers, batches int) (acked int, err error) {
	s, err := pebblestore.Open(pebblestore.Options{Dir: "db", FS: errorfs.Wrap(mem, inj)})
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := s.Close(); err == nil {
			err = cerr
		}
	}()
	for i := range batches {
		for w := range workers {
			if err := s.Apply(workBatch(w, i)); err != nil {
				// After a failed Apply the store may be stopped: every
				// later call must fail too.
				if errors.Is(err, store.ErrFailed) {
					if e2 := s.Apply(workBatch(w, i)); !errors.Is(e2, store.ErrFailed) {
						return acked, fmt.Errorf("Apply after a fatal error = %v; want ErrFailed", e2)
					}
				}
				return acked, err
			}
			acked++
		}
	}
	return acked, nil
}
