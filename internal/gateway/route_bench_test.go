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
)

// BenchmarkRouteHTTP: 64 concurrent plain SOAP clients, each waiting for
// its answer before the next call, POST to a -route of gateway A (pebble),
// which sends reliably to gateway B (pebble) delivering to an in-process
// SOAP service; each client gets the service's business response back.
// Compare its msg/s with rmp's BenchmarkEndToEndHTTP (store=pebble,
// groups=64) in the same run (BENCHMARKS.md "Transparent routes").
func BenchmarkRouteHTTP(b *testing.B) {
	for _, ordered := range []bool{false, true} {
		b.Run(fmt.Sprintf("ordered=%v", ordered), func(b *testing.B) {
			const clients = 64
			svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/xml; charset=utf-8")
				io.WriteString(w, `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><r:Placed xmlns:r="urn:r">ok</r:Placed></s:Body></s:Envelope>`)
			}))
			defer svc.Close()
			start := func(mod func(*Config)) *Server {
				cfg := DefaultConfig()
				cfg.Listen, cfg.DataDir = "127.0.0.1:0", b.TempDir()
				mod(&cfg)
				s, err := Start(cfg, Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Shutdown(b.Context()) })
				return s
			}
			gb := start(func(c *Config) { c.Deliver = svc.URL })
			ga := start(func(c *Config) { c.Routes = map[string]string{"svc": gb.URL() + "/rmp"} })
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
			payload := []byte(`<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><r:Place xmlns:r="urn:r"><item>` +
				string(bytes.Repeat([]byte("x"), 1400)) + `</item></r:Place></s:Body></s:Envelope>`)
			var next atomic.Int64
			var lat []time.Duration
			var mu sync.Mutex
			var wg sync.WaitGroup
			b.ResetTimer()
			cpu0, t0 := cpuTime(), time.Now()
			for c := range clients {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						req, _ := http.NewRequest(http.MethodPost, ga.URL()+"/soap/svc", bytes.NewReader(payload))
						req.Header.Set("Content-Type", "text/xml; charset=utf-8")
						req.Header.Set("SOAPAction", `"urn:r/Place"`)
						if ordered {
							req.Header.Set(HeaderGroupKey, fmt.Sprintf("client-%d", c))
						}
						s := time.Now()
						resp, err := client.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						body, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if resp.StatusCode != 200 || !bytes.Contains(body, []byte(">ok</r:Placed>")) {
							b.Errorf("answer %d %s", resp.StatusCode, body)
							return
						}
						mu.Lock()
						lat = append(lat, time.Since(s))
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			elapsed, cpu := time.Since(t0), cpuTime()-cpu0
			b.StopTimer()
			if len(lat) == 0 {
				return
			}
			slices.Sort(lat)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msg/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds()), "p99-µs")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/msg")
			b.ReportMetric(0, "ns/op")
		})
	}
}
