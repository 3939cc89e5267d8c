package rmp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/admin"
	"github.com/wsrkit/wsrkit/rmp/clock"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/memstore"
	"github.com/wsrkit/wsrkit/store/pebblestore"
)

// collector is a consumer and an outcome handler that records what it got.
type collector struct {
	mu        sync.Mutex
	delivered []string
	outcomes  map[string]string
	failFirst int // refuse this many deliveries first
	changed   chan struct{}
}

func newCollector() *collector {
	return &collector{outcomes: map[string]string{}, changed: make(chan struct{}, 1)}
}

func (c *collector) poke() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *collector) Deliver(_ context.Context, d Delivery) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failFirst > 0 {
		c.failFirst--
		return nil, fmt.Errorf("consumer busy")
	}
	c.delivered = append(c.delivered, bodyText(d.Payload))
	c.poke()
	return nil, nil
}

func (c *collector) HandleOutcome(_ context.Context, o sender.Outcome) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outcomes[fmt.Sprintf("%s/%d", o.Ref.GroupID, o.Ref.Number)] = outcomeText(o)
	c.poke()
	return nil
}

// waitFor waits until cond holds, failing the test after a generous bound.
func (c *collector) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		c.mu.Lock()
		ok := cond()
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-c.changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func nodeConfig(id string, st store.Store, c *collector) NodeConfig {
	cfg := engineConfig(id)
	cfg.Sender.Retry = sender.RetryPolicy{Interval: 100 * time.Millisecond, Backoff: 1, MaxInterval: time.Second, MaxRetries: 50}
	cfg.Receiver.DeliveryRetry.Initial = 50 * time.Millisecond
	return NodeConfig{Engine: cfg, Store: st, Consumer: c, Outcomes: c, Outbound: loopbackOnly}
}

// nodeMetrics reads n's counters, its commits included, through Admin.
func nodeMetrics(ctx context.Context, n *Node) (admin.Metrics, error) {
	var m admin.Metrics
	err := n.Admin(ctx, func(a admin.Engine, _ time.Time) { m = a.Metrics() })
	return m, err
}

// loopbackOnly lets test nodes call each other on loopback (#18: the
// default policy refuses loopback destinations).
var loopbackOnly = outbound.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}

func TestNodeOverLoopbackAllPatternsAndVersions(t *testing.T) {
	// R72, R74, R77, R84: one receiver node behind an httptest server; a
	// sender node submits under each reply pattern in SOAP 1.1 and 1.2.
	rc := newCollector()
	rn, err := Open(nodeConfig("r", memstore.New(memstore.Options{}), rc))
	require.NoError(t, err)
	rsrv := httptest.NewServer(rn)
	defer rsrv.Close()

	sc := newCollector()
	scfg := nodeConfig("s", memstore.New(memstore.Options{}), sc)
	scfg.Engine.Sender.PollInterval = 100 * time.Millisecond
	var sn *Node
	ssrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sn.ServeHTTP(w, r) }))
	defer ssrv.Close()
	scfg.Engine.ReplyTo = ssrv.URL
	sn, err = Open(scfg)
	require.NoError(t, err)

	ctx := context.Background()
	i := 0
	for _, pat := range []group.ReplyPattern{group.ReplyResponse, group.ReplyCallback, group.ReplyPoll} {
		for _, v := range []soap.Version{soap.SOAP11, soap.SOAP12} {
			sub := submission("", i, false)
			sub.To = rsrv.URL
			sub.Pattern = pat
			sub.Version = v
			_, err := sn.Submit(ctx, sub)
			require.NoError(t, err)
			i++
		}
	}
	sc.waitFor(t, "six acknowledgements", func() bool { return len(sc.outcomes) == 6 })
	for k, o := range sc.outcomes {
		require.Equal(t, "- acknowledged", o, k)
	}
	rc.waitFor(t, "six deliveries", func() bool { return len(rc.delivered) == 6 })
	require.ElementsMatch(t, []string{"m0", "m1", "m2", "m3", "m4", "m5"}, rc.delivered)
	require.NoError(t, sn.Close(ctx))
	require.NoError(t, rn.Close(ctx))
	_, err = sn.Submit(ctx, submission("", 9, false))
	require.ErrorIs(t, err, ErrClosed)
}

func TestNodeRestartOnPebbleAndFailingConsumer(t *testing.T) {
	// R89, R91, R92, D8: a receiver whose consumer fails at first, closed
	// and reopened on the same pebble directory in the middle of an ordered
	// group; every message is delivered once, in order.
	dir := t.TempDir()
	openPebble := func() store.Store {
		st, err := pebblestore.Open(pebblestore.Options{Dir: dir})
		require.NoError(t, err)
		return st
	}
	rc := newCollector()
	rc.failFirst = 2
	ep := &nodeEndpoint{}
	srv := httptest.NewServer(ep)
	defer srv.Close()
	rn, err := Open(nodeConfig("r", openPebble(), rc))
	require.NoError(t, err)
	ep.set(rn)

	sc := newCollector()
	sn, err := Open(nodeConfig("s", memstore.New(memstore.Options{}), sc))
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 10 {
		sub := submission("orders", i, i == 9)
		sub.To = srv.URL
		_, err := sn.Submit(ctx, sub)
		require.NoError(t, err)
		if i == 4 {
			require.NoError(t, ep.set(nil).Close(ctx))
			rn, err = Open(nodeConfig("r", openPebble(), rc))
			require.NoError(t, err)
			ep.set(rn)
		}
	}
	sc.waitFor(t, "ten outcomes", func() bool { return len(sc.outcomes) == 10 })
	rc.waitFor(t, "ten deliveries", func() bool { return len(rc.delivered) >= 10 })
	time.Sleep(100 * time.Millisecond)
	rc.mu.Lock()
	require.Equal(t, []string{"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"}, rc.delivered)
	rc.mu.Unlock()
	require.NoError(t, sn.Close(ctx))
	require.NoError(t, rn.Close(ctx))
}

func TestNodeFakeClockRunsHoursInMilliseconds(t *testing.T) {
	// D10, D26: with a fake clock and an unreachable receiver, a message is
	// resent on the retry schedule and fails as expired after its one-hour
	// lifetime, without waiting an hour.
	clk := clock.NewFake(epoch)
	sc := newCollector()
	cfg := nodeConfig("s", memstore.New(memstore.Options{}), sc)
	cfg.Clock = clk
	cfg.Engine.Sender.Retry = sender.RetryPolicy{Interval: 5 * time.Minute, Backoff: 1, MaxInterval: 5 * time.Minute, MaxRetries: 100}
	n, err := Open(cfg)
	require.NoError(t, err)
	defer n.Close(context.Background())
	sub := submission("", 1, false)
	sub.To = "http://127.0.0.1:1/rmp" // nothing listens there
	sub.Lifetime = time.Hour
	_, err = n.Submit(context.Background(), sub)
	require.NoError(t, err)
	start := time.Now()
	for range 13 {
		clk.Add(5 * time.Minute)
		require.NoError(t, n.Sync(context.Background()))
	}
	sc.waitFor(t, "the expiry outcome", func() bool { return len(sc.outcomes) == 1 })
	for _, o := range sc.outcomes {
		require.Equal(t, "- failed expired", o)
	}
	require.Less(t, time.Since(start), 15*time.Second, "an hour of protocol time must not take real time")
	m, err := nodeMetrics(context.Background(), n)
	require.NoError(t, err)
	require.Greater(t, m.Retries, uint64(0), "resends happened on the fake clock")
}

func TestServeHTTPRefusesNonPostAndLargeBodies(t *testing.T) {
	cfg := nodeConfig("r", memstore.New(memstore.Options{}), newCollector())
	cfg.MaxBody = 64
	n, err := Open(cfg)
	require.NoError(t, err)
	defer n.Close(context.Background())
	srv := httptest.NewServer(n)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	resp, err = http.Post(srv.URL, "text/xml; charset=utf-8", strings.NewReader(strings.Repeat("x", 200)))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
}

func TestNodeDeferredDeliveryIsConfirmedLaterAndSurvivesRestart(t *testing.T) {
	// R92, D14: an inbox-style consumer defers; an ordered group's next
	// message waits until the first is confirmed; a restart before the
	// confirmation hands the message out again.
	st := memstore.New(memstore.Options{})
	var mu sync.Mutex
	var got []Delivery
	consumer := ConsumerFunc(func(_ context.Context, d Delivery) ([]byte, error) {
		mu.Lock()
		got = append(got, d)
		mu.Unlock()
		return nil, ErrDeferred
	})
	open := func() *Node {
		n, err := Open(NodeConfig{Outbound: loopbackOnly, Engine: engineConfig("r"), Store: reopenable{st}, Consumer: consumer})
		require.NoError(t, err)
		return n
	}
	rn := open()
	ep := &nodeEndpoint{n: rn}
	srv := httptest.NewServer(ep)
	defer srv.Close()
	sc := newCollector()
	sn, err := Open(nodeConfig("s", memstore.New(memstore.Options{}), sc))
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 2 {
		sub := submission("g", i, i == 1)
		sub.To = srv.URL
		_, err := sn.Submit(ctx, sub)
		require.NoError(t, err)
	}
	sc.waitFor(t, "two acks (durable acceptance, D8)", func() bool { return len(sc.outcomes) == 2 })
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	waitUntil(t, func() bool { return count() == 1 })
	time.Sleep(50 * time.Millisecond)
	require.Equal(t, 1, count(), "the second waits until the first is confirmed")

	// Restart before confirming: the first is handed out again.
	require.NoError(t, rn.Close(ctx))
	rn = open()
	ep.set(rn)
	waitUntil(t, func() bool { return count() == 2 })
	mu.Lock()
	first := got[1]
	mu.Unlock()
	require.Equal(t, "m0", bodyText(first.Payload))
	require.NoError(t, rn.Confirm(ctx, first.Ref, nil))
	waitUntil(t, func() bool { return count() == 3 })
	mu.Lock()
	require.Equal(t, "m1", bodyText(got[2].Payload))
	mu.Unlock()
	require.NoError(t, rn.Close(ctx))
	require.NoError(t, sn.Close(ctx))
}

// nodeEndpoint serves HTTP for the Node a test put behind it, so that the
// server keeps its URL across restarts; with none it answers 503, as a
// node that stopped does (the sender resends).
type nodeEndpoint struct {
	mu sync.Mutex
	n  *Node
}

// set puts n behind the endpoint and returns the Node it replaces.
func (e *nodeEndpoint) set(n *Node) *Node {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.n
	e.n = n
	return old
}

func (e *nodeEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	n := e.n
	e.mu.Unlock()
	if n == nil {
		http.Error(w, "restarting", http.StatusServiceUnavailable)
		return
	}
	n.ServeHTTP(w, r)
}

// reopenable keeps a memstore usable across Node restarts (Close is a no-op).
type reopenable struct{ store.Store }

func (reopenable) Close() error { return nil }

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestNodeBusinessResponseRidesWithTheAck(t *testing.T) {
	// R73, R45, D18: under the Response pattern the consumer's business
	// response comes back in the same HTTP response as the RM-Reply; a
	// duplicate gets the cached response without a second delivery.
	delivered := 0
	var mu sync.Mutex
	n, err := Open(NodeConfig{Outbound: loopbackOnly, Store: memstore.New(memstore.Options{}), Consumer: ConsumerFunc(
		func(_ context.Context, d Delivery) ([]byte, error) {
			mu.Lock()
			delivered++
			mu.Unlock()
			return []byte(`<q:Price xmlns:q="urn:q">12.5</q:Price>`), nil
		})})
	require.NoError(t, err)
	defer n.Close(context.Background())
	srv := httptest.NewServer(n)
	defer srv.Close()
	req := `<S11:Envelope xmlns:S11="http://schemas.xmlsoap.org/soap/envelope/" xmlns:wsrm="http://docs.oasis-open.org/wsrm/2004/06/ws-reliability-1.1.xsd">
<S11:Header><wsrm:Request S11:mustUnderstand="1"><wsrm:MessageId groupId="mid:quote-1@test"/>
<wsrm:ExpiryTime>2999-01-01T00:00:00Z</wsrm:ExpiryTime><wsrm:ReplyPattern><wsrm:Value>Response</wsrm:Value></wsrm:ReplyPattern>
<wsrm:AckRequested/><wsrm:DuplicateElimination/></wsrm:Request></S11:Header>
<S11:Body><q:GetQuote xmlns:q="urn:q"/></S11:Body></S11:Envelope>`
	post := func() *soap.Envelope {
		resp, err := http.Post(srv.URL, "text/xml; charset=utf-8", strings.NewReader(req))
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		b := new(strings.Builder)
		_, err = io.Copy(b, resp.Body)
		require.NoError(t, err)
		env, err := soap.Parse([]byte(b.String()), soap.ParseOptions{})
		require.NoError(t, err)
		return env
	}
	for i := range 2 {
		env := post()
		require.NotNil(t, env.Response, "attempt %d: the RM-Reply", i)
		require.Equal(t, "mid:quote-1@test", env.Response.Replies[0].GroupID)
		require.Zero(t, env.Response.Replies[0].Fault, "an ack")
		require.Contains(t, string(env.BodyContent()), "12.5", "attempt %d: the business response (R73, R45)", i)
	}
	mu.Lock()
	require.Equal(t, 1, delivered, "the duplicate is not delivered again (D18)")
	mu.Unlock()
}

// TestNodeCountsCommits: Metrics.Commits counts the store batches the Node
// committed: a Submit returns after its own (R21), so it grows by at least
// one per Submit.
func TestNodeCountsCommits(t *testing.T) {
	n, err := Open(nodeConfig("s", memstore.New(memstore.Options{}), newCollector()))
	require.NoError(t, err)
	defer n.Close(context.Background())
	m0, err := nodeMetrics(context.Background(), n)
	require.NoError(t, err)
	for i := range 3 {
		sub := submission("", 1, false)
		sub.To = "http://127.0.0.1:1/rmp"
		_, err = n.Submit(context.Background(), sub)
		require.NoError(t, err)
		m, err := nodeMetrics(context.Background(), n)
		require.NoError(t, err)
		require.GreaterOrEqual(t, m.Commits, m0.Commits+uint64(i+1), "after Submit %d", i+1)
	}
}

// TestServeInboundAfterRouting: a router reads Inbound.GroupID of a parsed
// request (a reliable message, an RM-Reply, a PollRequest; nothing for a
// body that is not SOAP) and hands the same parse to ServeInbound, which
// answers and delivers as ServeHTTP does.
func TestServeInboundAfterRouting(t *testing.T) {
	rc := newCollector()
	n, err := Open(nodeConfig("r", memstore.New(memstore.Options{}), rc))
	require.NoError(t, err)
	defer n.Close(context.Background())
	var routed []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		in := parseInbound(r.Header.Get("Content-Type"), "", body, soap.ParseOptions{})
		routed = append(routed, in.GroupID())
		n.ServeInbound(w, r, in)
	}))
	defer srv.Close()

	req := &soap.Request{
		MessageID:    soap.MessageID{GroupID: "urn:routed", Sequence: &soap.SequenceNum{Number: 0}},
		ExpiryTime:   time.Now().Add(time.Hour).UTC().Truncate(time.Second),
		ReplyPattern: soap.ReplyPattern{Value: group.ReplyResponse},
		Flags:        group.Flags{AckRequested: true},
	}
	env, err := soap.AppendRequestEnvelope(nil, soap.SOAP11, req, []byte(`<p:b xmlns:p="urn:p">m0</p:b>`))
	require.NoError(t, err)
	resp, err := http.Post(srv.URL, soap.ContentTypeSOAP11, bytes.NewReader(env))
	require.NoError(t, err)
	ack, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(ack), `groupId="urn:routed"`)
	rc.waitFor(t, "the delivery", func() bool { return len(rc.delivered) == 1 })
	require.Contains(t, rc.delivered[0], ">m0</p:b>")
	require.NotContains(t, rc.delivered[0], "MessageId", "delivered without its wsrm header")

	poll, err := soap.AppendEnvelope(nil, soap.SOAP11, soap.Headers{PollRequest: &soap.PollRequest{
		Refs: []group.PollRef{{GroupID: "urn:polled"}}}}, faults.Extended, nil)
	require.NoError(t, err)
	resp, err = http.Post(srv.URL, soap.ContentTypeSOAP11, bytes.NewReader(poll))
	require.NoError(t, err)
	resp.Body.Close()
	resp, err = http.Post(srv.URL, soap.ContentTypeSOAP11, strings.NewReader("not xml"))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode, "a malformed envelope is a SOAP Fault")
	require.Equal(t, []string{"urn:routed", "urn:polled", ""}, routed)
}

// TestNodeLazyCommits: a batch nothing waits for (here the record that a
// delivery was taken) costs no synced commit of its own: it waits for the
// next commit that must be synced (one commit carries both), for
// LazyCommitDelay, or for Close, which commits it, so a reopened node does
// not hand the message out again.
func TestNodeLazyCommits(t *testing.T) {
	ctx := context.Background()
	st := reopenable{memstore.New(memstore.Options{})}
	rc := newCollector()
	rcfg := nodeConfig("r", st, rc)
	rcfg.LazyCommitDelay = time.Hour
	rn, err := Open(rcfg)
	require.NoError(t, err)
	ep := &nodeEndpoint{n: rn}
	srv := httptest.NewServer(ep)
	defer srv.Close()
	sc := newCollector()
	sn, err := Open(nodeConfig("s", memstore.New(memstore.Options{}), sc))
	require.NoError(t, err)
	defer sn.Close(ctx)

	sub := submission("orders", 0, false)
	sub.To = srv.URL
	_, err = sn.Submit(ctx, sub)
	require.NoError(t, err)
	rc.waitFor(t, "the delivery", func() bool { return len(rc.delivered) == 1 })
	committed := rn.commit.committed.Load() // the accept, released before the hand-off
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, committed, rn.commit.committed.Load(), "Taken alone is held, not committed")
	require.NoError(t, rn.Sync(ctx))
	require.Equal(t, committed+1, rn.commit.committed.Load(), "Sync's commit carries the held Taken")

	// A second message: its Taken is held again, then committed by Close.
	sub = submission("orders", 1, false)
	sub.To = srv.URL
	_, err = sn.Submit(ctx, sub)
	require.NoError(t, err)
	rc.waitFor(t, "the second delivery", func() bool { return len(rc.delivered) == 2 })
	sc.waitFor(t, "both acknowledgements", func() bool { return len(sc.outcomes) == 2 })
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, rn.Close(ctx))

	again := newCollector()
	rcfg = nodeConfig("r", st, again)
	rcfg.LazyCommitDelay = 30 * time.Millisecond
	rn2, err := Open(rcfg)
	require.NoError(t, err)
	defer rn2.Close(ctx)
	ep.set(rn2)
	require.NoError(t, rn2.Sync(ctx))
	time.Sleep(200 * time.Millisecond)
	again.mu.Lock()
	require.Empty(t, again.delivered, "Close committed the held Taken: nothing is handed out again")
	again.mu.Unlock()

	// With a short delay a held batch is committed on its own.
	sub = submission("orders", 2, false)
	sub.To = srv.URL
	_, err = sn.Submit(ctx, sub)
	require.NoError(t, err)
	again.waitFor(t, "the third delivery", func() bool { return len(again.delivered) == 1 })
	committed = rn2.commit.committed.Load()
	waitUntil(t, func() bool { return rn2.commit.committed.Load() == committed+1 })
}

// parkedTransport holds every POST until its context ends.
type parkedTransport struct{}

func (parkedTransport) Do(ctx context.Context, _ outbound.Post) (outbound.PostResult, error) {
	<-ctx.Done()
	return outbound.PostResult{}, ctx.Err()
}

// A busy node (CommitSiblings exchanges in progress) lets a synced commit
// wait CommitDelay for more work, so two submissions 50 ms apart share one
// commit; a node that is not busy commits each at once.
func TestNodeCommitDelayWhenBusy(t *testing.T) {
	ctx := context.Background()
	cfg := nodeConfig("s", memstore.New(memstore.Options{}), newCollector())
	cfg.Transport = parkedTransport{}
	cfg.Engine.Sender.Retry.Interval, cfg.Engine.Sender.Retry.MaxInterval = time.Hour, time.Hour // no resend meanwhile
	cfg.CommitDelay = 400 * time.Millisecond
	cfg.CommitSiblings = 8
	n, err := Open(cfg)
	require.NoError(t, err)
	defer n.Close(ctx)
	require.NoError(t, n.Sync(ctx))

	submitTwo := func(key string) (commits uint64) {
		t.Helper()
		before := n.commit.committed.Load()
		var wg sync.WaitGroup
		for i := range 2 {
			if i > 0 {
				time.Sleep(50 * time.Millisecond)
			}
			wg.Go(func() {
				_, err := n.Submit(ctx, submission(key, i, false))
				require.NoError(t, err)
			})
		}
		wg.Wait()
		return n.commit.committed.Load() - before
	}
	require.Equal(t, uint64(2), submitTwo("idle"), "not busy: each submission commits at once")
	waitUntil(t, func() bool { return n.busy.Load() == 2 }) // the two parked POSTs
	n.busy.Add(int64(cfg.CommitSiblings))                   // as if 8 exchanges were in progress
	require.Equal(t, uint64(1), submitTwo("busy"), "busy: the first commit waits for the second submission")
	n.busy.Add(-int64(cfg.CommitSiblings))

	cfg.CommitDelay = -1
	cfg.Store = memstore.New(memstore.Options{})
	n2, err := Open(cfg)
	require.NoError(t, err)
	defer n2.Close(ctx)
	require.NoError(t, n2.Sync(ctx))
	n2.busy.Add(100)
	n = n2
	require.Equal(t, uint64(2), submitTwo("off"), "a negative CommitDelay never waits")
}

// R73 end to end: the receiving node's consumer answers with a business
// response; the sending node's producer gets it on the Acknowledged
// outcome of that very message.
func TestNodeOutcomeCarriesTheBusinessResponse(t *testing.T) {
	ctx := context.Background()
	rn, err := Open(NodeConfig{Outbound: loopbackOnly, Store: memstore.New(memstore.Options{}), Consumer: ConsumerFunc(
		func(_ context.Context, d Delivery) ([]byte, error) {
			return fmt.Appendf(nil, `<q:Price xmlns:q="urn:q">%d</q:Price>`, 10+d.Ref.Number), nil
		})})
	require.NoError(t, err)
	defer rn.Close(ctx)
	srv := httptest.NewServer(rn)
	defer srv.Close()
	got := make(chan sender.Outcome, 4)
	sn, err := Open(NodeConfig{Outbound: loopbackOnly, Engine: engineConfig("s"), Store: memstore.New(memstore.Options{}),
		Outcomes: OutcomeFunc(func(_ context.Context, o sender.Outcome) error { got <- o; return nil })})
	require.NoError(t, err)
	defer sn.Close(ctx)
	for i := range 2 {
		sub := submission("quotes", i, false)
		sub.To = srv.URL
		ref, err := sn.Submit(ctx, sub)
		require.NoError(t, err)
		select {
		case o := <-got:
			require.Equal(t, ref, o.Ref)
			require.Equal(t, sender.Acknowledged, o.Kind)
			// The Body's content, each element standalone: it carries the
			// namespace declarations in scope (soap.Envelope.BodyContent).
			require.True(t, strings.HasPrefix(string(o.Response), `<q:Price xmlns:q="urn:q"`), "%s", o.Response)
			require.True(t, strings.HasSuffix(string(o.Response), fmt.Sprintf(`>%d</q:Price>`, 10+i)), "%s", o.Response)
		case <-time.After(10 * time.Second):
			t.Fatalf("no outcome for message %d", i)
		}
	}
}
