//go:build unix

package rmp_test

// End-to-end benchmarks over loopback HTTP and their ceilings, measured in
// one run so that every goal is a same-run ratio (perf-limits.md):
//
//   - BenchmarkEndToEndHTTP: a sender Node and a receiver Node, ordered
//     exactly-once groups (AckRequested, DuplicateElimination, MessageOrder,
//     Response pattern, D8: the ack means durably stored), one message in
//     flight per group; latency is Submit → acknowledged outcome.
//   - BenchmarkEndToEndStreamHTTP: the same nodes, producers that submit
//     the next message once the previous one is stored (R21), up to
//     streamWindow without an outcome per group.
//   - BenchmarkReceiverHTTP: plain net/http clients POSTing reliable
//     messages to a receiver Node; the same client as the ceilings.
//   - BenchmarkCeilingPipelineHTTP: the minimal receiver: net/http, etree
//     parse, one pebble Set+Sync, a constant ack.
//   - BenchmarkCeilingHTTP, BenchmarkCeilingPebbleSync,
//     BenchmarkCeilingEtreeParse: the raw parts.
//
// Metrics: msg/s, p50-µs/p99-µs (per-message round trip as the client sees
// it), cpu-µs/msg (getrusage of the whole process: both nodes and the
// clients), and WAL-B/msg (pebble WAL bytes per message). scripts/bench.sh
// runs them in interleaved rounds and writes BENCHMARKS.md.

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/internal/benchkit"
	"github.com/wsrkit/wsrkit/internal/testpki"
	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/admin"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/memstore"
	"github.com/wsrkit/wsrkit/store/pebblestore"
)

var benchGroups = []int{1, 8, 64}

// benchBody and benchEnvelope are the ≈1.5 KB message of perf-limits.md §1.
var benchBody = benchkit.Body

func benchEnvelope(tb testing.TB, gid string, n uint64) []byte { return benchkit.Envelope(tb, gid, n) }

var cpuTime = benchkit.CPUTime

// latencies collects durations from many goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

// report adds name-p50-µs and name-p99-µs ("p50-µs" for an empty name).
func (l *latencies) report(b *testing.B, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return
	}
	slices.Sort(l.d)
	if name != "" {
		name += "-"
	}
	pct := func(p int) float64 {
		return float64(l.d[min(len(l.d)-1, len(l.d)*p/100)].Nanoseconds()) / 1e3
	}
	b.ReportMetric(pct(50), name+"p50-µs")
	b.ReportMetric(pct(99), name+"p99-µs")
}

// load runs b.N operations over c goroutines, goroutine g calling op(g, i)
// for its i-th operation (so one goroutine is one in-order group), and
// reports msg/s, the operation's p50/p99 latency and CPU µs per message.
// drain, when set, runs inside the timed region after the last operation
// (work the operations started that must finish, such as deliveries).
func load(b *testing.B, c int, op func(g int, i uint64) error, drain func() error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var lat latencies
	errs := make(chan error, c)
	b.ResetTimer()
	cpu0, start := cpuTime(), time.Now()
	for g := range c {
		wg.Go(func() {
			for i := uint64(0); next.Add(1) <= int64(b.N); i++ {
				t0 := time.Now()
				if err := op(g, i); err != nil {
					errs <- fmt.Errorf("group %d message %d: %w", g, i, err)
					return
				}
				lat.add(time.Since(t0))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	if drain != nil {
		if err := drain(); err != nil {
			b.Fatal(err)
		}
	}
	elapsed, cpu := time.Since(start), cpuTime()-cpu0
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msg/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/msg")
	lat.report(b, "")
}

// benchClient is a keep-alive client with a connection per group.
func benchClient(b *testing.B, conns int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = conns
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: time.Minute}
}

// postAck POSTs one envelope and checks that the answer is a 200 envelope
// that is not a SOAP Fault.
func postAck(cl *http.Client, url string, body []byte) error {
	resp, err := cl.Post(url, soap.ContentTypeSOAP11, bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	ans, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || bytes.Contains(ans, []byte("Fault")) {
		return fmt.Errorf("answer %d: %.300s", resp.StatusCode, ans)
	}
	return nil
}

// openStore opens a durable pebble store on a real directory, or a memory
// store.
func openStore(b *testing.B, kind string) store.Store {
	if kind == "mem" {
		return memstore.New(memstore.Options{})
	}
	st, err := pebblestore.Open(pebblestore.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// walBytes is the pebble WAL bytes written so far; 0 for other stores.
func walBytes(st store.Store) uint64 {
	if p, ok := st.(*pebblestore.Store); ok {
		return p.DB().Metrics().WAL.BytesWritten
	}
	return 0
}

// orderCheck is a consumer that checks exactly-once, in-order delivery per
// group (D14, D18) and counts deliveries.
type orderCheck struct {
	mu        sync.Mutex
	next      map[string]uint64
	delivered int
	bad       error
	changed   chan struct{}
}

func newOrderCheck() *orderCheck {
	return &orderCheck{next: map[string]uint64{}, changed: make(chan struct{}, 1)}
}

func (o *orderCheck) Deliver(_ context.Context, d rmp.Delivery) ([]byte, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	gid := d.Ref.Group.GroupID
	if d.Ref.Number != o.next[gid] && o.bad == nil {
		o.bad = fmt.Errorf("group %s: delivered %d, want %d", gid, d.Ref.Number, o.next[gid])
	}
	o.next[gid] = d.Ref.Number + 1
	o.delivered++
	select {
	case o.changed <- struct{}{}:
	default:
	}
	return nil, nil
}

// waitDelivered waits until n messages were delivered, in order.
func (o *orderCheck) waitDelivered(n int) error {
	deadline := time.After(2 * time.Minute)
	for {
		o.mu.Lock()
		got, bad := o.delivered, o.bad
		o.mu.Unlock()
		if bad != nil {
			return bad
		}
		if got > n {
			return fmt.Errorf("%d deliveries for %d messages", got, n)
		}
		if got == n {
			return nil
		}
		select {
		case <-o.changed:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			return fmt.Errorf("%d of %d messages delivered", got, n)
		}
	}
}

// timedHandler records how long h takes per request.
func timedHandler(h http.Handler, lat *latencies) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		h.ServeHTTP(w, r)
		lat.add(time.Since(t0))
	})
}

func receiverNode(b *testing.B, st store.Store, c *orderCheck) *rmp.Node {
	n, err := rmp.Open(rmp.NodeConfig{Store: st, Consumer: c})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.Close(context.Background()) })
	return n
}

// BenchmarkReceiverHTTP: net/http clients, one per group, POST ordered
// exactly-once messages to a receiver Node; each waits for its ack (D8)
// before sending the group's next number. Every message is delivered once,
// in order, before the clock stops.
func BenchmarkReceiverHTTP(b *testing.B) {
	for _, kind := range []string{"pebble", "mem"} {
		for _, groups := range benchGroups {
			b.Run(fmt.Sprintf("store=%s/groups=%d", kind, groups), func(b *testing.B) {
				st := openStore(b, kind)
				check := newOrderCheck()
				srv := httptest.NewServer(receiverNode(b, st, check))
				defer srv.Close()
				cl := benchClient(b, groups)
				gids := make([]string, groups)
				for g := range gids {
					gids[g] = fmt.Sprintf("urn:bench:recv:%d", g)
				}
				wal0 := walBytes(st)
				load(b, groups, func(g int, i uint64) error {
					return postAck(cl, srv.URL, benchEnvelope(b, gids[g], i))
				}, func() error { return check.waitDelivered(b.N) })
				if kind == "pebble" {
					b.ReportMetric(float64(walBytes(st)-wal0)/float64(b.N), "WAL-B/msg")
				}
			})
		}
	}
}

// outcomeRouter hands each acknowledged outcome to the producer of its
// group key ("g<index>").
type outcomeRouter struct{ ch []chan sender.Outcome }

func (r *outcomeRouter) HandleOutcome(_ context.Context, o sender.Outcome) error {
	g, err := strconv.Atoi(strings.TrimPrefix(o.GroupKey, "g"))
	if err != nil || g < 0 || g >= len(r.ch) {
		return fmt.Errorf("outcome for unknown key %q", o.GroupKey)
	}
	r.ch[g] <- o
	return nil
}

// BenchmarkEndToEndHTTP: a sender Node submits into ordered exactly-once
// groups (one producer per group, each waiting for its message's
// acknowledged outcome before submitting the next); a receiver Node behind
// a loopback HTTP server accepts, acknowledges and delivers. Reported
// besides the end-to-end p50/p99: submit-* (Submit until durably stored at
// the sender), recv-* (the receiver's HTTP handler), WAL bytes per message
// at each side, and resends (should be 0).
func BenchmarkEndToEndHTTP(b *testing.B) {
	for _, kind := range []string{"pebble", "mem"} {
		for _, groups := range benchGroups {
			for _, lp := range latePollRuns(groups) {
				b.Run(fmt.Sprintf("store=%s/groups=%d%s", kind, groups, lp.name), func(b *testing.B) {
					benchEndToEnd(b, kind, groups, lp.set)
				})
			}
		}
	}
}

func benchEndToEnd(b *testing.B, kind string, groups int, set func(*sender.Config)) {
	benchEndToEndOver(b, kind, groups, set, "plain")
}

// BenchmarkEndToEndHTTPMutualTLS is BenchmarkEndToEndHTTP at 64 groups
// over plain HTTP and over mutual TLS (the sender presents a client
// certificate, the receiver requires and verifies it; keep-alive, so the
// handshakes are paid once per connection), back to back in one run: the
// msg/s ratio is what TLS costs per message (#19). link=mtls keeps
// HTTP/1.1 with a connection per group like the plain run; link=mtls-h2
// negotiates HTTP/2 as the gateway's listener and client do (one
// connection, multiplexed).
func BenchmarkEndToEndHTTPMutualTLS(b *testing.B) {
	for _, kind := range []string{"pebble", "mem"} {
		for _, link := range []string{"plain", "mtls", "mtls-h2"} {
			b.Run(fmt.Sprintf("store=%s/groups=64/link=%s", kind, link), func(b *testing.B) {
				benchEndToEndOver(b, kind, 64, nil, link)
			})
		}
	}
}

// BenchmarkEndToEndH2C is BenchmarkEndToEndHTTP and
// BenchmarkEndToEndStreamHTTP at 64 groups on pebble over HTTP/1.1 (a
// connection per group, link=plain) and over cleartext HTTP/2 with prior
// knowledge (link=h2c: the server takes both, the client speaks only
// HTTP/2; one connection, multiplexed), back to back: whether HTTP/2
// between two wsrkit nodes costs less CPU per message (#22, BENCHMARKS.md
// "Findings on the RabbitMQ comparison": it costs more).
func BenchmarkEndToEndH2C(b *testing.B) {
	for _, link := range []string{"plain", "h2c"} {
		b.Run("shape=one-in-flight/store=pebble/groups=64/link="+link, func(b *testing.B) {
			benchEndToEndOver(b, "pebble", 64, nil, link)
		})
		b.Run("shape=stream/store=pebble/groups=64/link="+link, func(b *testing.B) {
			benchStreamOver(b, "pebble", 64, nil, oneAtATime, link)
		})
	}
}

func benchEndToEndOver(b *testing.B, kind string, groups int, set func(*sender.Config), link string) {
	router := &outcomeRouter{}
	for range groups {
		router.ch = append(router.ch, make(chan sender.Outcome, 1))
	}
	rig := newE2ERig(b, kind, groups, router, set, link)
	load(b, groups, func(g int, i uint64) error {
		ref, err := rig.submit(g)
		if err != nil {
			return err
		}
		select {
		case o := <-router.ch[g]:
			if o.Ref != ref || o.Kind != sender.Acknowledged {
				return fmt.Errorf("outcome %+v for %+v", o, ref)
			}
			return nil
		case <-time.After(time.Minute):
			return fmt.Errorf("no outcome for %+v", ref)
		}
	}, func() error { return rig.check.waitDelivered(b.N) })
	rig.report(b)
}

// latePolls is a late-fault polling setting of the sender (#23, D13): at
// 64 groups each end-to-end benchmark also runs with the polling off and
// with a PollRequest every 100 ms (no back-off), against the default (on:
// PollInterval 5 s, backing off to 2 min while answers are clean).
type latePolls struct {
	name string
	set  func(*sender.Config)
}

func latePollRuns(groups int) []latePolls {
	runs := []latePolls{{}}
	// WSRKIT_BENCH_LATE_POLLS=default runs the default setting only: a
	// -bench pattern cannot name a benchmark without its sub-benchmarks
	// (scripts/peer-bench.sh).
	if groups == 64 && os.Getenv("WSRKIT_BENCH_LATE_POLLS") != "default" {
		runs = append(runs,
			latePolls{"/late-polls=off", func(c *sender.Config) { c.NoLateFaultPolls = true }},
			latePolls{"/late-polls=100ms", func(c *sender.Config) {
				c.PollInterval, c.PollIntervalMax = 100*time.Millisecond, 100*time.Millisecond
			}})
		// WSRKIT_BENCH_ROTATE=k starts with the k-th: rounds that rotate
		// it spread the order's bias over the three (BENCHMARKS.md).
		if k, err := strconv.Atoi(os.Getenv("WSRKIT_BENCH_ROTATE")); err == nil && k > 0 {
			k %= len(runs)
			runs = append(runs[k:], runs[:k]...)
		}
	}
	return runs
}

// pollCounter is the sender's Transport counting its PollRequests and
// their bytes, request and response (#23).
type pollCounter struct {
	next         outbound.Transport
	polls, bytes atomic.Int64
}

var pollRequestTag = []byte("PollRequest")

// MaxPerDestination forwards the wrapped transport's limit
// (outbound.DestinationLimit), as a production wrapper does.
func (c *pollCounter) MaxPerDestination() int {
	if l, ok := c.next.(outbound.DestinationLimit); ok {
		return l.MaxPerDestination()
	}
	return 0
}

func (c *pollCounter) Do(ctx context.Context, p outbound.Post) (outbound.PostResult, error) {
	res, err := c.next.Do(ctx, p)
	if bytes.Contains(p.Body, pollRequestTag) {
		c.polls.Add(1)
		c.bytes.Add(int64(len(p.Body) + len(res.Body)))
	}
	return res, err
}

// e2eRig is a sender Node and a receiver Node behind a loopback HTTP
// server, each on its own store, for the end-to-end benchmarks.
type e2eRig struct {
	sn, rn             *rmp.Node
	url                string
	link               string
	http2              atomic.Int64 // requests the receiver got over HTTP/2
	polls              *pollCounter
	check              *orderCheck
	recvLat, submitLat latencies
	rst, sst           store.Store
	wal0r, wal0s       uint64
}

func newE2ERig(b *testing.B, kind string, groups int, outcomes rmp.OutcomeHandler, set func(*sender.Config), link string) *e2eRig {
	r := &e2eRig{rst: openStore(b, kind), sst: openStore(b, kind), check: newOrderCheck(), link: link}
	r.rn = receiverNode(b, r.rst, r.check)
	timed := timedHandler(r.rn, &r.recvLat)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.ProtoMajor == 2 {
			r.http2.Add(1)
		}
		timed.ServeHTTP(w, req)
	}))
	// The transport's default connections per destination, or one per
	// group where there are more groups.
	tc := outbound.Config{MaxPerDestination: max(outbound.DefaultMaxPerDestination, groups),
		Policy: &outbound.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}
	switch link {
	case "plain":
		srv.Start()
	case "h2c":
		var both, h2c http.Protocols
		both.SetHTTP1(true)
		both.SetUnencryptedHTTP2(true)
		h2c.SetUnencryptedHTTP2(true)
		srv.Config.Protocols = &both
		srv.Start()
		tc.Client = outbound.NewClient(tc)
		tc.Client.Transport.(*http.Transport).Protocols = &h2c
	default:
		ca := testpki.NewCA(b, "bench CA")
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server(b, "receiver").TLS},
			ClientCAs: ca.Pool(), ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
		srv.EnableHTTP2 = link == "mtls-h2"
		srv.StartTLS()
		tc.TLS = testpki.ClientConfig(ca.Pool(), ca.Client(b, "sender"))
	}
	b.Cleanup(srv.Close)
	r.url = srv.URL
	r.polls = &pollCounter{next: outbound.NewHTTPTransport(tc)}
	// Loopback destinations allowed for submissions too (#18's policy).
	cfg := rmp.NodeConfig{Store: r.sst, Outcomes: outcomes, Transport: r.polls, Outbound: *tc.Policy}
	cfg.Engine.Sender.InstanceID = "bench"
	if set != nil {
		set(&cfg.Engine.Sender)
	}
	sn, err := rmp.Open(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sn.Close(context.Background()) })
	r.sn = sn
	r.wal0r, r.wal0s = walBytes(r.rst), walBytes(r.sst)
	return r
}

// submit submits the next message of group g (key "g<g>"), ordered
// exactly-once under the Response pattern, and notes how long Submit took.
func (r *e2eRig) submit(g int) (sender.MessageRef, error) {
	t0 := time.Now()
	ref, err := r.sn.Submit(context.Background(), r.submission(g))
	if err == nil {
		r.submitLat.add(time.Since(t0))
	}
	return ref, err
}

func (r *e2eRig) submission(g int) rmp.Submission {
	return rmp.Submission{
		To: r.url, GroupKey: "g" + strconv.Itoa(g), Lifetime: time.Hour,
		Flags:   group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: true},
		Pattern: group.ReplyResponse, Payload: benchBody,
	}
}

// submitBatch submits the next k messages of group g with one SubmitBatch
// (#22) and notes how long it took.
func (r *e2eRig) submitBatch(g, k int) ([]sender.MessageRef, error) {
	subs := make([]rmp.Submission, k)
	for i := range subs {
		subs[i] = r.submission(g)
	}
	t0 := time.Now()
	refs, err := r.sn.SubmitBatch(context.Background(), subs)
	if err == nil {
		r.submitLat.add(time.Since(t0))
	}
	return refs, err
}

// report adds the submit and receiver latencies, WAL bytes and synced
// commits per message at each side and the sender's resends (should be 0).
// Commits are counted from the rig's start, warm-up included.
func (r *e2eRig) report(b *testing.B) {
	var rm, m admin.Metrics
	if err := r.rn.Admin(context.Background(), func(a admin.Engine, _ time.Time) { rm = a.Metrics() }); err != nil {
		b.Fatal(err)
	}
	r.submitLat.report(b, "submit")
	r.recvLat.report(b, "recv")
	if w := walBytes(r.rst); w > 0 {
		b.ReportMetric(float64(w-r.wal0r)/float64(b.N), "recv-WAL-B/msg")
		b.ReportMetric(float64(walBytes(r.sst)-r.wal0s)/float64(b.N), "send-WAL-B/msg")
	}
	if err := r.sn.Admin(context.Background(), func(a admin.Engine, _ time.Time) { m = a.Metrics() }); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(m.Retries), "resends")
	b.ReportMetric(float64(r.polls.polls.Load())*1000/float64(b.N), "polls/1k-msg")
	b.ReportMetric(float64(r.polls.bytes.Load())*1000/float64(b.N), "poll-B/1k-msg")
	b.ReportMetric(float64(m.Commits)/float64(m.Submitted), "send-commits/msg")
	b.ReportMetric(float64(rm.Commits)/float64(rm.Accepted), "recv-commits/msg")
	if h2 := r.http2.Load(); (h2 > 0) != (r.link == "h2c" || r.link == "mtls-h2") {
		b.Fatalf("link=%s: %d requests over HTTP/2", r.link, h2)
	}
}

// streamWindow is how many messages each producer of
// BenchmarkEndToEndStreamHTTP may have submitted without an outcome.
const streamWindow = 16

// streamRouter hands each outcome to its group's producer window and
// records Submit → outcome latency. A group's numbers are assigned in
// submission order from 0 (one producer per group), so the producer notes
// the start time under the number before calling Submit.
type streamRouter struct {
	groups []streamGroup
	lat    latencies
	mu     sync.Mutex
	bad    error
	done   atomic.Int64
	notify chan struct{}
}

type streamGroup struct {
	slots chan struct{}
	mu    sync.Mutex
	sent  map[uint64]time.Time
}

func (r *streamRouter) fail(err error) {
	r.mu.Lock()
	if r.bad == nil {
		r.bad = err
	}
	r.mu.Unlock()
}

func (r *streamRouter) HandleOutcome(_ context.Context, o sender.Outcome) error {
	g, err := strconv.Atoi(strings.TrimPrefix(o.GroupKey, "g"))
	if err != nil || g < 0 || g >= len(r.groups) {
		return fmt.Errorf("outcome for unknown key %q", o.GroupKey)
	}
	sg := &r.groups[g]
	sg.mu.Lock()
	t0, ok := sg.sent[o.Ref.Number]
	delete(sg.sent, o.Ref.Number)
	sg.mu.Unlock()
	if !ok || o.Kind != sender.Acknowledged {
		r.fail(fmt.Errorf("outcome %+v (submitted: %v)", o, ok))
	} else {
		r.lat.add(time.Since(t0))
	}
	<-sg.slots
	r.done.Add(1)
	select {
	case r.notify <- struct{}{}:
	default:
	}
	return nil
}

// waitOutcomes waits until n outcomes arrived, all acknowledged.
func (r *streamRouter) waitOutcomes(n int64) error {
	deadline := time.After(2 * time.Minute)
	for r.done.Load() < n {
		select {
		case <-r.notify:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			return fmt.Errorf("%d of %d outcomes", r.done.Load(), n)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bad
}

// BenchmarkEndToEndStreamHTTP is BenchmarkEndToEndHTTP with producers that
// do what Submit's contract allows: each submits its group's next message as
// soon as the previous one is durably stored (R21), keeping at most
// streamWindow messages without an outcome, and learns outcomes from the
// handler (D27). The three synced commits of a message (sender Submit,
// receiver accept D8, sender ack + outbox D27) then overlap with those of
// the messages around it instead of adding up. Latency is Submit →
// acknowledged outcome; the clock stops when every message has its
// outcome and was delivered once, in order.
func BenchmarkEndToEndStreamHTTP(b *testing.B) {
	for _, kind := range []string{"pebble", "mem"} {
		for _, groups := range benchGroups {
			for _, lp := range latePollRuns(groups) {
				b.Run(fmt.Sprintf("store=%s/groups=%d%s", kind, groups, lp.name), func(b *testing.B) {
					benchStream(b, kind, groups, lp.set)
				})
			}
		}
	}
}

// BenchmarkEndToEndBatchHTTP is BenchmarkEndToEndStreamHTTP with
// producers that hand over every free place of their window at once
// (Node.SubmitBatch, #22): one commit stores the run, instead of one
// commit and one round trip to the Node's loop per message.
func BenchmarkEndToEndBatchHTTP(b *testing.B) {
	for _, kind := range []string{"pebble", "mem"} {
		for _, groups := range benchGroups {
			b.Run(fmt.Sprintf("store=%s/groups=%d", kind, groups), func(b *testing.B) {
				benchStreamBy(b, kind, groups, nil, batched)
			})
		}
	}
}

// BenchmarkEndToEndPipelineHTTP is BenchmarkEndToEndStreamHTTP with
// producers that keep up to streamWindow messages handed over by
// Node.SubmitAsync and not yet durable, as scripts/peerbench's RabbitMQ
// publishers keep up to that many without a confirm (#22); the send
// window (a Node's default, 64) bounds what is on the wire. p50 is still Submit → outcome;
// submit-p50 is SubmitAsync → durable, the publish → confirm of RabbitMQ.
func BenchmarkEndToEndPipelineHTTP(b *testing.B) {
	for _, kind := range []string{"pebble", "mem"} {
		for _, groups := range benchGroups {
			b.Run(fmt.Sprintf("store=%s/groups=%d", kind, groups), func(b *testing.B) {
				benchStreamBy(b, kind, groups, nil, pipelined)
			})
		}
	}
}

func benchStream(b *testing.B, kind string, groups int, set func(*sender.Config)) {
	benchStreamBy(b, kind, groups, set, oneAtATime)
}

// How a producer of the streaming benchmarks hands its messages over.
type handOver int

const (
	oneAtATime handOver = iota // Submit, each durable before the next
	batched                    // every free place of the window in one SubmitBatch
	pipelined                  // SubmitAsync, up to streamWindow not yet durable
)

// pipelineBacklog is how many messages a pipelined producer may have
// without an outcome: a bound on memory and latency, as RabbitMQ's credit
// flow bounds a publisher. Two send windows (a Node's default, 64): one on
// the wire and one stored behind it, so that acks refill the window from
// the store. One window's worth made 1 group 0.85 times as fast, four no
// faster than two, with twice the latency.
const pipelineBacklog = 128

// produce submits group g's messages while next allows. One at a time or
// batched, it keeps at most streamWindow without an outcome; pipelined, at
// most streamWindow handed over and not yet durable (as a RabbitMQ
// publisher keeps messages without a confirm) and pipelineBacklog without
// an outcome.
func produce(rig *e2eRig, sg *streamGroup, g int, next *atomic.Int64, total int64, how handOver) error {
	if how == pipelined {
		return producePipelined(rig, sg, g, next, total)
	}
	n := uint64(0)
	for next.Add(1) <= total {
		sg.slots <- struct{}{}
		k := 1
		for how == batched && k < streamWindow && len(sg.slots) < cap(sg.slots) && next.Add(1) <= total {
			sg.slots <- struct{}{}
			k++
		}
		// Noted before Submit: the outcome may arrive before Submit
		// returns.
		sg.mu.Lock()
		for i := range uint64(k) {
			sg.sent[n+i] = time.Now()
		}
		sg.mu.Unlock()
		var refs []sender.MessageRef
		var err error
		if how == batched {
			refs, err = rig.submitBatch(g, k)
		} else {
			var ref sender.MessageRef
			ref, err = rig.submit(g)
			refs = []sender.MessageRef{ref}
		}
		if err != nil {
			return err
		}
		for _, ref := range refs {
			if ref.Number != n {
				return fmt.Errorf("group %d: message %d numbered %d", g, n, ref.Number)
			}
			n++
		}
	}
	return nil
}

// producePipelined is produce with SubmitAsync: it waits for the oldest
// message handed over to be durable only when streamWindow are on their
// way to the store.
func producePipelined(rig *e2eRig, sg *streamGroup, g int, next *atomic.Int64, total int64) error {
	type handed struct {
		p  *rmp.PendingSubmit
		t0 time.Time
	}
	var win []handed
	n := uint64(0)
	wait := func() error {
		h := win[0]
		win = win[1:]
		ref, err := h.p.Wait(context.Background())
		if err != nil {
			return err
		}
		rig.submitLat.add(time.Since(h.t0))
		if ref.Number != n {
			return fmt.Errorf("group %d: message %d numbered %d", g, n, ref.Number)
		}
		n++
		return nil
	}
	for i := uint64(0); next.Add(1) <= total; i++ {
		if len(win) == streamWindow {
			if err := wait(); err != nil {
				return err
			}
		}
		sg.slots <- struct{}{}
		t0 := time.Now()
		sg.mu.Lock()
		sg.sent[i] = t0
		sg.mu.Unlock()
		p, err := rig.sn.SubmitAsync(context.Background(), rig.submission(g))
		if err != nil {
			return err
		}
		win = append(win, handed{p, t0})
	}
	for len(win) > 0 {
		if err := wait(); err != nil {
			return err
		}
	}
	return nil
}

func benchStreamBy(b *testing.B, kind string, groups int, set func(*sender.Config), how handOver) {
	benchStreamOver(b, kind, groups, set, how, "plain")
}

func benchStreamOver(b *testing.B, kind string, groups int, set func(*sender.Config), how handOver, link string) {
	router := &streamRouter{groups: make([]streamGroup, groups), notify: make(chan struct{}, 1)}
	slots := streamWindow
	if how == pipelined {
		slots = pipelineBacklog
	}
	for g := range router.groups {
		router.groups[g] = streamGroup{slots: make(chan struct{}, slots), sent: map[uint64]time.Time{}}
	}
	rig := newE2ERig(b, kind, groups, router, set, link)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, groups)
	b.ResetTimer()
	cpu0, start := cpuTime(), time.Now()
	for g := range groups {
		wg.Go(func() {
			if err := produce(rig, &router.groups[g], g, &next, int64(b.N), how); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	if err := router.waitOutcomes(int64(b.N)); err != nil {
		b.Fatal(err)
	}
	if err := rig.check.waitDelivered(b.N); err != nil {
		b.Fatal(err)
	}
	elapsed, cpu := time.Since(start), cpuTime()-cpu0
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msg/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/msg")
	router.lat.report(b, "")
	rig.report(b)
}

// cannedAck is the constant answer of the ceilings: a 671-byte-class
// wsrm:Response envelope written once.
var cannedAck = func() []byte {
	b, err := soap.AppendResponseEnvelope(nil, soap.SOAP11, &soap.Response{Replies: []group.Reply{{
		GroupID: "urn:bench:ceiling", Sequenced: true, Ranges: []group.ReplyRange{{From: 0, To: 0}},
	}}}, faults.Extended, nil)
	if err != nil {
		panic(err)
	}
	return b
}()

// BenchmarkCeilingPipelineHTTP is the minimal receiver the issue names as
// the ceiling: plain net/http, etree parse of the envelope (groupId and
// number read from it), one pebble Set+Sync of the envelope on a real
// directory, a constant ack. Same clients and envelopes as
// BenchmarkReceiverHTTP.
func BenchmarkCeilingPipelineHTTP(b *testing.B) {
	for _, groups := range benchGroups {
		b.Run(fmt.Sprintf("groups=%d", groups), func(b *testing.B) {
			st, err := pebblestore.Open(pebblestore.Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4<<20))
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				doc := etree.NewDocument()
				if err := doc.ReadFromBytes(body); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				id := doc.FindElement("//MessageId")
				seq := doc.FindElement("//SequenceNum")
				if id == nil || seq == nil {
					http.Error(w, "no MessageId", http.StatusBadRequest)
					return
				}
				key := id.SelectAttrValue("groupId", "") + "/" + seq.SelectAttrValue("number", "")
				if err := st.RawSyncSet([]byte(key), body); err != nil {
					http.Error(w, err.Error(), http.StatusServiceUnavailable)
					return
				}
				w.Header().Set("Content-Type", soap.ContentTypeSOAP11)
				w.Write(cannedAck)
			})
			srv := httptest.NewServer(h)
			defer srv.Close()
			cl := benchClient(b, groups)
			wal0 := walBytes(st)
			load(b, groups, func(g int, i uint64) error {
				return postAck(cl, srv.URL, benchEnvelope(b, fmt.Sprintf("urn:bench:ceil:%d", g), i))
			}, nil)
			b.ReportMetric(float64(walBytes(st)-wal0)/float64(b.N), "WAL-B/msg")
		})
	}
}

// BenchmarkCeilingHTTP is the raw net/http loopback round trip: the same
// POST, a handler that drains the body and writes the constant ack.
func BenchmarkCeilingHTTP(b *testing.B) {
	for _, conc := range benchGroups {
		b.Run(fmt.Sprintf("groups=%d", conc), func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", soap.ContentTypeSOAP11)
				w.Write(cannedAck)
			}))
			defer srv.Close()
			cl := benchClient(b, conc)
			load(b, conc, func(g int, i uint64) error {
				return postAck(cl, srv.URL, benchEnvelope(b, fmt.Sprintf("urn:bench:http:%d", g), i))
			}, nil)
		})
	}
}

// BenchmarkCeilingPebbleSync is the raw pebble sync commit with group
// commit: c goroutines each writing the envelope with Set+Sync in a loop.
func BenchmarkCeilingPebbleSync(b *testing.B) {
	env := benchEnvelope(b, "urn:bench:pebble", 0)
	for _, c := range benchGroups {
		b.Run(fmt.Sprintf("groups=%d", c), func(b *testing.B) {
			st, err := pebblestore.Open(pebblestore.Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			wal0 := walBytes(st)
			load(b, c, func(g int, i uint64) error {
				return st.RawSyncSet(fmt.Appendf(nil, "urn:bench:pebble:%d/%d", g, i), env)
			}, nil)
			b.ReportMetric(float64(walBytes(st)-wal0)/float64(b.N), "WAL-B/msg")
		})
	}
}

// BenchmarkCeilingEtreeParse is the raw etree parse of the same envelope,
// one goroutine.
func BenchmarkCeilingEtreeParse(b *testing.B) {
	env := benchEnvelope(b, "urn:bench:etree", 0)
	b.SetBytes(int64(len(env)))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		doc := etree.NewDocument()
		if err := doc.ReadFromBytes(env); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/msg")
}

// burstCounter counts acknowledged outcomes and remembers the first other.
type burstCounter struct {
	acked atomic.Int64
	bad   atomic.Pointer[sender.Outcome]
}

func (c *burstCounter) HandleOutcome(_ context.Context, o sender.Outcome) error {
	if o.Kind != sender.Acknowledged {
		c.bad.CompareAndSwap(nil, &o)
	}
	c.acked.Add(1)
	return nil
}

// burstChunk is how many messages one SubmitBatch of
// BenchmarkEndToEndBurstHTTP hands over.
const burstChunk = 100

// BenchmarkEndToEndBurstHTTP: one producer hands an ordered group's
// messages over in SubmitBatch chunks of burstChunk without waiting for
// outcomes (at most MaxPendingPerGroup's default, 10,000, unacknowledged),
// with the sender's send window at a Node's default (64) and without one
// (#22): unbounded, every stored message is a POST at once, queued behind
// the transport's connections per destination with its retry clock
// running, and reaching the receiver in whatever order the connections
// free up; with a retry interval of 1 s, a queue that outlasts it is
// resent before it went out (resends). The clock stops when every message
// has its outcome and was delivered once, in order.
func BenchmarkEndToEndBurstHTTP(b *testing.B) {
	for _, w := range []struct {
		name   string
		window int
		retry  time.Duration // 0: the default policy
	}{{"window=default", 0, 0}, {"window=off", -1, 0}, {"window=default/retry=1s", 0, time.Second}, {"window=off/retry=1s", -1, time.Second}} {
		b.Run("store=pebble/groups=1/"+w.name, func(b *testing.B) {
			out := &burstCounter{}
			set := func(c *sender.Config) {
				c.Window = w.window
				if w.retry > 0 {
					c.Retry = sender.RetryPolicy{Interval: w.retry, Backoff: 2, MaxInterval: time.Minute, MaxRetries: 10}
				}
			}
			rig := newE2ERig(b, "pebble", 1, out, set, "plain")
			b.ResetTimer()
			cpu0, start := cpuTime(), time.Now()
			for sent := 0; sent < b.N; {
				k := min(burstChunk, b.N-sent)
				for int64(sent+k)-out.acked.Load() > 10000 {
					time.Sleep(time.Millisecond)
				}
				if _, err := rig.submitBatch(0, k); err != nil {
					b.Fatal(err)
				}
				sent += k
			}
			for deadline := time.Now().Add(2 * time.Minute); out.acked.Load() < int64(b.N); time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					b.Fatalf("%d of %d outcomes", out.acked.Load(), b.N)
				}
			}
			if o := out.bad.Load(); o != nil {
				b.Fatalf("outcome %+v", *o)
			}
			if err := rig.check.waitDelivered(b.N); err != nil {
				b.Fatal(err)
			}
			elapsed, cpu := time.Since(start), cpuTime()-cpu0
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msg/s")
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/msg")
			rig.report(b)
		})
	}
}
