//go:build unix

package gateway

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/internal/benchkit"
	"github.com/wsrkit/wsrkit/internal/lbtest"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/etcdstore/etcdtest"
)

// BenchmarkGateways: ordered exactly-once traffic (AckRequested,
// DuplicateElimination, MessageOrder, Response pattern; D8: the ack means
// durably stored) from 32 concurrent groups, one message in flight per
// group, through a round-robin load balancer into 1, 2 and 3 gateways on
// the 3-member embedded etcd cluster (-shards 16) and into one gateway on
// pebble, in one run. Deliveries go to a -deliver sink and are drained
// inside the timed region. Metrics: msg/s, p50/p99 of the exchange, CPU
// µs per message (getrusage of the whole process: gateways, etcd members,
// clients), shard-store commits per message and the share of requests
// forwarded to another gateway.
func BenchmarkGateways(b *testing.B) {
	etcd := etcdtest.StartTB(b, etcdtest.Options{Members: 3})
	for _, tc := range []struct {
		name string
		n    int
		etcd bool
	}{{"pebble-1", 1, false}, {"etcd-1", 1, true}, {"etcd-2", 2, true}, {"etcd-3", 3, true}} {
		b.Run(tc.name, func(b *testing.B) {
			var delivered atomic.Int64
			sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				delivered.Add(1)
			}))
			defer sink.Close()
			var commits atomic.Int64
			fr := lbtest.New(2 * time.Second)
			prefix := fmt.Sprintf("/bench/%s/%d/", tc.name, b.N)
			var gws []*Server
			for i := range tc.n {
				cfg := loopbackConfig()
				cfg.Listen, cfg.DataDir, cfg.Deliver = "127.0.0.1:0", b.TempDir(), sink.URL
				if tc.etcd {
					cfg.Store, cfg.EtcdEndpoints, cfg.EtcdPrefix = StoreEtcd, etcd.Endpoints, prefix
					cfg.NodeID, cfg.LeaseTTL, cfg.BalanceInterval = fmt.Sprintf("b%d", i), 5*time.Second, 100*time.Millisecond
				}
				s, err := Start(cfg, Options{WrapShardStore: func(_ int, st store.Store) store.Store { return &counting{Store: st, n: &commits} }})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Shutdown(b.Context())
				gws = append(gws, s)
				fr.Add(s.URL())
			}
			if tc.etcd { // wait for the spread: 16 shards, counts within one
				for deadline := time.Now().Add(30 * time.Second); ; {
					total, lo, hi := 0, 16, 0
					for _, s := range gws {
						k := len(s.nodes())
						total, lo, hi = total+k, min(lo, k), max(hi, k)
					}
					if total == 16 && hi-lo <= 1 {
						break
					}
					if time.Now().After(deadline) {
						b.Fatalf("shards not spread: %d held, %d..%d", total, lo, hi)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			lb := httptest.NewServer(fr)
			defer lb.Close()
			const groups = 32
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: groups}}
			var next atomic.Int64
			var lat []time.Duration
			var mu sync.Mutex
			var wg sync.WaitGroup
			commits.Store(0)
			for _, s := range gws {
				s.forwards.Store(0)
			}
			b.ResetTimer()
			cpu0, start := cpuTime(), time.Now()
			for g := range groups {
				wg.Go(func() {
					gid := fmt.Sprintf("urn:bench:%s:%d:%d", tc.name, b.N, g)
					for n := uint64(0); next.Add(1) <= int64(b.N); n++ {
						env := benchEnvelope(b, gid, n)
						t0 := time.Now()
						for try := 0; ; try++ {
							resp, err := client.Post(lb.URL+"/rmp", "text/xml; charset=utf-8", bytes.NewReader(env))
							if err == nil {
								io.Copy(io.Discard, resp.Body)
								resp.Body.Close()
								if resp.StatusCode == 200 {
									break
								}
							}
							if try > 100 {
								b.Errorf("group %d message %d: no ack (%v)", g, n, err)
								return
							}
							time.Sleep(10 * time.Millisecond) // 503 while a shard moves: resend
						}
						mu.Lock()
						lat = append(lat, time.Since(t0))
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			for delivered.Load() < int64(b.N) {
				time.Sleep(time.Millisecond)
			}
			elapsed, cpu := time.Since(start), cpuTime()-cpu0
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msg/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds()), "p99-µs")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/msg")
			if tc.etcd {
				b.ReportMetric(float64(commits.Load())/float64(b.N), "commits/msg")
				var fwd uint64
				for _, s := range gws {
					fwd += s.forwards.Load()
				}
				b.ReportMetric(float64(fwd)/float64(b.N), "forwarded/msg")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// counting counts a shard store's commits.
type counting struct {
	store.Store
	n *atomic.Int64
}

func (c *counting) Apply(batch []group.Mutation) error {
	c.n.Add(1)
	return c.Store.Apply(batch)
}

var (
	benchEnvelope = benchkit.Envelope
	cpuTime       = benchkit.CPUTime
)
