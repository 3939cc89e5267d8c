package rmp_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/wsrkit/wsrkit/internal/heapfloor"
)

// TestMain runs the package under the heap floor that `wsrkit serve` sets
// (-gc-heap-floor) when WSRKIT_GC_HEAP_FLOOR names one in bytes, as
// scripts/peer-bench.sh does; without it the collector runs as GOGC says,
// as in a process that embeds a Node.
func TestMain(m *testing.M) {
	stop := func() {}
	if v := os.Getenv("WSRKIT_GC_HEAP_FLOOR"); v != "" {
		floor, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "WSRKIT_GC_HEAP_FLOOR=%q: want bytes\n", v)
			os.Exit(2)
		}
		stop = heapfloor.Start(floor)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}
