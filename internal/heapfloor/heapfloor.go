// Package heapfloor keeps the Go collector's heap goal at or above a
// floor. A gateway moving messages allocates about 23 KB per message over
// a live heap of about 20 MB: under GOGC=100 it collects every 20 MB or
// so, tens of times a second, and a sixth of its CPU went to the
// collector (BENCHMARKS.md, #22). After every collection the floor sets
// the GC percent so that the next goal is the larger of GOGC's goal and
// the floor. It costs at most the floor in heap beyond what GOGC alone
// would let grow, and nothing once the live heap is past half the floor:
// the collector then runs as GOGC says. While it raises the percent, a
// memory limit of twice the floor (beside the runtime's other memory)
// bounds a heap that grows faster than the percent follows; a lower
// GOMEMLIMIT still caps every goal.
//
// The setting is the process's: one floor holds at a time.
package heapfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// maxPercent bounds the percent a floor sets over a near-empty heap; the
// goal is then still the floor, reached from a few MB of live heap.
const maxPercent = 100_000

// maxFloor bounds a floor (16 TiB), so that the arithmetic below cannot
// overflow.
const maxFloor = 1 << 44

// minLive is the smallest live heap a percent is worked out from: the
// runtime's own minimum goal is 4 MB (at GOGC=100).
const minLive = 1 << 20

// Percent is the GC percent whose goal for live bytes of live heap is the
// larger of base's goal, live × (1 + base/100), and floor. A negative base
// (collection off) and a zero floor are kept as they are.
func Percent(base int, live, floor uint64) int {
	if base < 0 || floor == 0 {
		return base
	}
	live, floor = max(live, minLive), min(floor, maxFloor)
	if base >= maxPercent || live >= floor || (floor-live)*100 <= live*uint64(base) {
		return base
	}
	p := ((floor-live)*100 + live - 1) / live // rounded up: the goal reaches the floor
	return int(min(p, maxPercent))
}

var (
	mu     sync.Mutex
	active *state // the floor that holds, nil when none
)

type state struct {
	floor     uint64
	base      int   // the GC percent before Start, restored by stop
	baseLimit int64 // the memory limit before Start (GOMEMLIMIT), restored by stop
	set       int   // the percent last set
	limit     int64 // the memory limit last set
	sample    []metrics.Sample
}

// The metrics apply reads, in this order.
var sampleNames = []string{
	"/gc/heap/live:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/objects:bytes",
}

// sentinel is allocated after every collection and dropped at once: its
// cleanup runs after the next collection. It is larger than the tiny
// allocator's 16 bytes, which would keep it alive beside its neighbours.
type sentinel struct{ _ [4]uint64 }

// Start keeps the heap goal at or above floor bytes until stop is called,
// which restores the GC percent and memory limit found at Start. It does nothing, and its
// stop nothing, when floor is 0, when collection is off, or while another
// floor holds.
func Start(floor uint64) (stop func()) {
	mu.Lock()
	defer mu.Unlock()
	if floor == 0 || active != nil {
		return func() {}
	}
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if base < 0 {
		return func() {}
	}
	s := &state{floor: floor, base: base, set: base, sample: make([]metrics.Sample, len(sampleNames))}
	s.baseLimit = debug.SetMemoryLimit(-1)
	s.limit = s.baseLimit
	for i, n := range sampleNames {
		s.sample[i].Name = n
	}
	active = s
	s.apply()
	s.arm()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if active == s {
			active = nil
			debug.SetGCPercent(s.base)
			debug.SetMemoryLimit(s.baseLimit)
		}
	}
}

// arm has afterGC run once the next collection is done.
func (s *state) arm() {
	runtime.AddCleanup(new(sentinel), (*state).afterGC, s)
}

func (s *state) afterGC() {
	mu.Lock()
	defer mu.Unlock()
	if active != s {
		return // stopped: the chain ends here
	}
	s.apply()
	s.arm()
}

// apply sets the percent for the live heap the last collection marked,
// unless it is within 1/16 of the one set (each set recomputes the goal
// under the heap lock; a small drift is not worth it).
//
// The percent is one collection late: a live heap that grows fast meets
// the percent set for a small one, and its goal would be that many times
// its size (a flood of requests tripled the gateway's peak RSS). So while
// the floor raises the percent, a memory limit holds the heap near the
// floor: the runtime's other memory plus twice the floor, room for the
// heap's fragmentation and what is not yet swept. Under the floods of
// cmd/wsrkit's tests the peak RSS was 133-156 MiB with a 64 MiB floor,
// against 70-116 MiB under GOGC alone, and 265-298 MiB without the limit.
// The collection it brings on when the heap outgrows that sees the larger
// heap, and the floor hands the collector back to GOGC and GOMEMLIMIT.
func (s *state) apply() {
	metrics.Read(s.sample)
	u := func(i int) uint64 {
		if v := s.sample[i].Value; v.Kind() == metrics.KindUint64 {
			return v.Uint64()
		}
		return 0
	}
	live, total, released, objects := u(0), u(1), u(2), u(3)
	p := Percent(s.base, live, s.floor)
	limit := s.baseLimit
	if p != s.base {
		other := total - released - min(objects, total-released)
		limit = min(s.baseLimit, int64(min(other+2*s.floor, maxFloor*2)))
	}
	// The limit first when it tightens, last when it loosens: the goal is
	// never above either bound for a moment.
	if limit < s.limit {
		debug.SetMemoryLimit(limit)
		s.limit = limit
	}
	if d := p - s.set; p == s.base && s.set != s.base || d*16 > s.set || -d*16 > s.set {
		debug.SetGCPercent(p)
		s.set = p
	}
	if limit != s.limit {
		debug.SetMemoryLimit(limit)
		s.limit = limit
	}
}
