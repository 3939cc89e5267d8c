package heapfloor

import (
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

const mib = 1 << 20

// goal is the runtime's heap goal for a live heap at percent p.
func goal(live uint64, p int) uint64 { return live + live*uint64(p)/100 }

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		base        int
		live, floor uint64
		want        int
	}{
		{100, 20 * mib, 64 * mib, 220},      // the gateway under load: 20 + 44 = 64
		{100, 40 * mib, 64 * mib, 100},      // GOGC's 80 MB goal is past the floor
		{100, 32 * mib, 64 * mib, 100},      // exactly at it
		{300, 10 * mib, 64 * mib, 540},      // the operator's base below the floor
		{100, 0, 64 * mib, 6300},            // nothing marked yet: worked out from 1 MiB
		{-1, 20 * mib, 64 * mib, -1},        // collection off stays off
		{100, 20 * mib, 0, 100},             // no floor
		{100, 1 * mib, 1 << 40, maxPercent}, // bounded
	} {
		if got := Percent(c.base, c.live, c.floor); got != c.want {
			t.Errorf("Percent(%d, %d MiB, %d MiB) = %d, want %d", c.base, c.live/mib, c.floor/mib, got, c.want)
		}
	}
	// For any heap, the goal is the floor's or the base's, whichever is larger.
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		base, live, floor := r.IntN(500), minLive+r.Uint64N(1<<32), 1+r.Uint64N(1<<34)
		p := Percent(base, live, floor)
		g := goal(live, p)
		switch {
		case goal(live, base) >= floor:
			if p != base {
				t.Fatalf("Percent(%d, %d, %d) = %d; the base's goal is past the floor", base, live, floor, p)
			}
		case p == maxPercent:
			if g > floor {
				t.Fatalf("Percent(%d, %d, %d) = the bound, with a goal %d past the floor", base, live, floor, g)
			}
		case g < floor || g > floor+live/100+1:
			t.Fatalf("Percent(%d, %d, %d) = %d: goal %d, not just at the floor", base, live, floor, p, g)
		}
	}
}

// percent reads the GC percent without changing it.
func percent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// eventually collects until cond holds, failing after a few seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: GC percent %d", what, percent())
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// TestFloorFollowsTheLiveHeap: under a floor far above the test's heap
// the percent rises; with a live heap past half the floor, collections
// bring it back to the base; once that heap is dropped it rises again;
// stop restores the base, and later collections leave it there.
func TestFloorFollowsTheLiveHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	stop := Start(96 * mib)
	defer stop()
	if p := percent(); p <= 100 {
		t.Fatalf("GC percent %d under a 96 MiB floor over a test's heap", p)
	}
	// The limit that bounds a fast-growing heap: twice the floor beside
	// the runtime's other memory, which a test's is well below.
	if l := limit(); l < 192*mib || l > 192*mib+64*mib {
		t.Fatalf("memory limit %d MiB under a 96 MiB floor", l/mib)
	}
	hold := make([][]byte, 64)
	for i := range hold {
		hold[i] = make([]byte, mib)
	}
	eventually(t, "64 MiB live under a 96 MiB floor", func() bool { return percent() == 100 && limit() == math.MaxInt64 })
	runtime.KeepAlive(hold)
	hold = nil
	eventually(t, "the 64 MiB dropped", func() bool { return percent() > 100 && limit() < math.MaxInt64 })
	stop()
	if p, l := percent(), limit(); p != 100 || l != math.MaxInt64 {
		t.Fatalf("GC percent %d, memory limit %d after stop, want the base 100 and none", p, l)
	}
	for range 3 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if p := percent(); p != 100 {
		t.Fatalf("GC percent %d after stop and collections, want 100", p)
	}
}

// limit reads the memory limit without changing it.
func limit() int64 { return debug.SetMemoryLimit(-1) }

// TestOperatorsLimitHolds: a GOMEMLIMIT below the floor's own limit is
// kept, and restored by stop.
func TestOperatorsLimitHolds(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(80 * mib))
	stop := Start(512 * mib)
	if p, l := percent(), limit(); p <= 100 || l != 80*mib {
		t.Fatalf("GC percent %d, memory limit %d MiB under a 512 MiB floor and GOMEMLIMIT=80MiB", p, l/mib)
	}
	stop()
	if l := limit(); l != 80*mib {
		t.Fatalf("memory limit %d MiB after stop, want the operator's 80", l/mib)
	}
}

// TestOneFloorHolds: a second Start while one holds changes nothing, its
// stop neither; the base is the operator's percent, not 100.
func TestOneFloorHolds(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	stop := Start(512 * mib)
	first := percent()
	if first <= 150 {
		t.Fatalf("GC percent %d under a 512 MiB floor", first)
	}
	Start(1 << 40)()
	if p := percent(); p != first {
		t.Fatalf("a second floor moved the percent from %d to %d", first, p)
	}
	stop()
	if p := percent(); p != 150 {
		t.Fatalf("GC percent %d after stop, want the operator's 150", p)
	}
}

// TestCollectionOffStaysOff: with GOGC=off a floor would turn collection
// back on; it does nothing.
func TestCollectionOffStaysOff(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	stop := Start(64 * mib)
	defer stop()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("GC percent %d, want collection still off", p)
	}
}
