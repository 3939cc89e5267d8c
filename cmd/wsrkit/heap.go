package main

import (
	"flag"
	"os"

	"github.com/wsrkit/wsrkit/internal/gateway"
	"github.com/wsrkit/wsrkit/internal/heapfloor"
)

// defaultHeapFloor is -gc-heap-floor's default. Moving messages, the
// gateway allocates about 23 KB per message over a live heap of about
// 20 MB, and under GOGC=100 a sixth of its CPU went to collecting; a
// 64 MiB floor collects about a third as often (GC percent ≈ 220 at that
// heap), and changes nothing once the live heap passes 32 MiB; a heap
// that grows faster than the floor follows is held at twice the floor
// (heapfloor, BENCHMARKS.md, #22).
const defaultHeapFloor = 64 << 20

// heapFloorFlag is -gc-heap-floor: bytes with an optional KiB/MiB/GiB
// suffix, 0 for none.
type heapFloorFlag int64

func (f *heapFloorFlag) String() string { return gateway.FormatBytes(int64(*f)) }

func (f *heapFloorFlag) Set(s string) error {
	v, err := gateway.ParseBytes(s)
	if err != nil {
		return err
	}
	*f = heapFloorFlag(v)
	return nil
}

// registerHeapFloor defines -gc-heap-floor on fs.
func registerHeapFloor(fs *flag.FlagSet) *heapFloorFlag {
	f := heapFloorFlag(defaultHeapFloor)
	fs.Var(&f, "gc-heap-floor", "heap the Go collector may grow to before it collects, bytes with optional KiB/MiB/GiB suffix; 0 = GOGC alone; ignored when GOGC is set")
	return &f
}

// startHeapFloor keeps this process's heap goal at or above floor bytes
// (heapfloor) unless the operator set GOGC, which is kept; the returned
// func ends it.
func startHeapFloor(floor int64) (stop func()) {
	if os.Getenv("GOGC") != "" || floor <= 0 {
		return func() {}
	}
	return heapfloor.Start(uint64(floor))
}
