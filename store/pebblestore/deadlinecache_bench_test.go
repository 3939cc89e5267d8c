//go:build unix

package pebblestore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/wsrkit/wsrkit/internal/benchkit"
	"github.com/wsrkit/wsrkit/store/pebblestore"
)

// BenchmarkApplyDeadlineCache is the store's cost per "accept one message"
// (acceptBatch: three puts and the generation's new deadline) on hot
// groups, with the deadline cache (default size) and without it, on an
// in-memory filesystem so that no fsync hides the difference. One
// committer; groups round-robin. Shape set moves each deadline forward;
// set-clear clears it every other round, as an idle group's is: pebble's
// Get of a deleted reverse entry steps over every older version of that
// key still in the memtable. cpu-ns/op is the process's CPU time
// (getrusage, background flushes included), steadier than ns/op on a
// shared machine.
func BenchmarkApplyDeadlineCache(b *testing.B) {
	payload := make([]byte, payloadBytes)
	for _, shape := range []string{"set", "set-clear"} {
		for _, groups := range []int{1, 64} {
			for _, c := range []struct {
				name    string
				entries int
			}{{"on", 0}, {"off", -1}} {
				b.Run(fmt.Sprintf("%s/groups=%d/cache=%s", shape, groups, c.name), func(b *testing.B) {
					s, err := pebblestore.Open(pebblestore.Options{Dir: "db", FS: vfs.NewMem(), Logger: quiet{}, DeadlineCacheEntries: c.entries})
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { s.Close() })
					gids := make([]string, groups)
					for g := range gids {
						gids[g] = fmt.Sprintf("urn:uuid:%08d-0000-4000-8000-000000000000", g)
					}
					b.ReportAllocs()
					i := uint64(0)
					cpu0 := benchkit.CPUTime()
					for b.Loop() {
						batch := acceptBatch(gids[i%uint64(groups)], i, payload)
						if shape == "set-clear" && (i/uint64(groups))%2 == 1 {
							batch[len(batch)-1].At = time.Time{}
						}
						if err := s.Apply(batch); err != nil {
							b.Fatal(err)
						}
						i++
					}
					b.ReportMetric(float64((benchkit.CPUTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}
