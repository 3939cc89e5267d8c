package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/internal/benchkit"
	"github.com/wsrkit/wsrkit/rmp/admin"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/soap"
)

const pageGroups = 100_000

// BenchmarkGroupsPage100k measures one page of GET /v1/groups, through
// the gateway's handler, with 100,000 receiving groups in state (#21: a
// page answers in ≤ 50 ms): 90,000 with number 0 delivered, 10,000
// holding number 1 behind the gap of 0. Setup (the groups arrive through
// /rmp, 16 at a time) is not timed; run with -benchtime 20x.
func BenchmarkGroupsPage100k(b *testing.B) {
	cfg := DefaultConfig()
	cfg.DataDir = b.TempDir()
	if shm, err := os.MkdirTemp("/dev/shm", "wsrkit-bench-"); err == nil {
		cfg.DataDir = shm // a tmpfs: the setup's 100,000 commits need no disk
		defer os.RemoveAll(shm)
	}
	cfg.MaxOpenGroups, cfg.MaxOpenGroupsPerPeer = 2*pageGroups, 2*pageGroups
	g, err := Open(cfg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close(b.Context())
	h := g.Handler()
	work := make(chan int)
	var wg sync.WaitGroup
	var failed sync.Once
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				n := uint64(0)
				if i%10 == 9 {
					n = 1
				}
				env, _ := soap.AppendRequestEnvelope(nil, soap.SOAP11, &soap.Request{
					MessageID:    soap.MessageID{GroupID: fmt.Sprintf("urn:bench:page:%06d", i), Sequence: &soap.SequenceNum{Number: n}},
					ExpiryTime:   time.Now().Add(time.Hour).UTC().Truncate(time.Second),
					ReplyPattern: soap.ReplyPattern{Value: group.ReplyResponse},
					Flags:        group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: true},
				}, []byte("<o/>"))
				if st := postEnvelope(h, "", env); st != http.StatusOK {
					failed.Do(func() { b.Errorf("group %d: HTTP %d", i, st) })
				}
			}
		}()
	}
	for i := range pageGroups {
		work <- i
	}
	close(work)
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	get := func(b *testing.B, query string) groupsJSON {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/groups?"+query, nil))
		var out groupsJSON
		if rec.Code != 200 || json.NewDecoder(bytes.NewReader(rec.Body.Bytes())).Decode(&out) != nil {
			b.Fatalf("%s: HTTP %d %s", query, rec.Code, rec.Body.String())
		}
		return out
	}
	mid := get(b, "limit=1000")
	for range 49 {
		mid = get(b, "limit=1000&after="+*mid.Next)
	}
	// The straightforward full scan (every group's view, filtered,
	// sorted, as GET /v1/groups did before the Listings), for the ratio.
	b.Run("fullscan", func(b *testing.B) {
		q, _ := parseGroupQuery(url.Values{"limit": {"100"}})
		cpu := benchkit.CPUTime()
		for b.Loop() {
			var out groupsJSON
			g.Node().Admin(b.Context(), func(a admin.Engine, _ time.Time) { out = referencePage(a, q) })
			if out.Total != pageGroups {
				b.Fatalf("%d groups", out.Total)
			}
		}
		reportPage(b, cpu)
	})
	for _, c := range pageQueries(*mid.Next) {
		b.Run(c.name, func(b *testing.B) {
			var out groupsJSON
			cpu := benchkit.CPUTime()
			for b.Loop() {
				out = get(b, c.query)
			}
			if len(out.Groups) == 0 || out.Total == 0 {
				b.Fatalf("%s: an empty page", c.query)
			}
			reportPage(b, cpu)
		})
	}
}

// pageQueries are the console's kinds of page, middle the after= of the
// 50,000th group.
func pageQueries(middle string) []struct{ name, query string } {
	return []struct{ name, query string }{
		{"first", "limit=100"},
		{"middle", "limit=100&after=" + middle},
		{"q", "limit=100&q=page:0999"},
		{"gap", "limit=100&gap=true"},
		{"state", "limit=100&state=open"},
		{"role", "limit=100&role=receiver"},
		{"held", "limit=100&sort=held"},
		{"lastActivity", "limit=100&sort=lastActivity"},
		{"nextDeadline", "limit=100&sort=nextDeadline"},
	}
}

// reportPage reports the wall-clock and the process CPU time per page;
// on a shared machine the CPU time is the steadier of the two.
func reportPage(b *testing.B, cpuBefore time.Duration) {
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/page")
	b.ReportMetric(float64((benchkit.CPUTime()-cpuBefore).Microseconds())/1e3/float64(b.N), "cpu-ms/page")
}
