package rmp

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/rmp/admin"
	"github.com/wsrkit/wsrkit/rmp/clock"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/soap"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/memstore"
	"github.com/wsrkit/wsrkit/store/pebblestore"
)

// singletonEnvelope is a singleton reliable message (D1) expiring at expiry.
func singletonEnvelope(t testing.TB, gid string, expiry time.Time) []byte {
	req := &soap.Request{
		MessageID:    soap.MessageID{GroupID: gid},
		ExpiryTime:   expiry,
		ReplyPattern: soap.ReplyPattern{Value: group.ReplyResponse},
		Flags:        group.Flags{AckRequested: true, DuplicateElimination: true},
	}
	b, err := soap.AppendRequestEnvelope(nil, soap.SOAP11, req, []byte("<p>x</p>"))
	require.NoError(t, err)
	return b
}

// fillInbox stores count singletons accepted and handed out but never
// confirmed: what an inbox-mode gateway holds when nobody deletes. The
// pure engine receives them; its Persist goes to st in batches within the
// store's limits.
func fillInbox(t testing.TB, cfg Config, st store.Store, count int, expiry time.Time) {
	e, err := LoadEngine(cfg, st)
	require.NoError(t, err)
	flush := func() {
		rd := e.Ready()
		require.NoError(t, st.Apply(rd.Persist))
		e.Advance()
	}
	for i := range count {
		e.Receive(epoch, uint64(i+1), soap.ContentTypeSOAP11, singletonEnvelope(t, fmt.Sprintf("urn:inbox:%07d", i), expiry))
		if i%1000 == 999 {
			flush()
		}
	}
	flush()
}

// deferringConsumer keeps every delivery waiting (an inbox) and counts the
// distinct messages it was handed.
type deferringConsumer struct {
	mu   sync.Mutex
	seen map[receiver.DeliveryRef]bool
}

func (c *deferringConsumer) Deliver(_ context.Context, d Delivery) ([]byte, error) {
	c.mu.Lock()
	c.seen[d.Ref] = true
	c.mu.Unlock()
	return nil, ErrDeferred
}

func (c *deferringConsumer) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

// testRestartsServeFullInbox fills st past the store's batch limit, then
// opens a Node on it three times: each time every message is handed out
// again (R92) and the node keeps running; the last round confirms them all.
func testRestartsServeFullInbox(t *testing.T, st store.Store, count int, confirm bool) {
	cfg := engineConfig("r")
	cfg.Receiver.MaxGroups = count + 10
	expiry := epoch.Add(time.Hour)
	fillInbox(t, cfg, st, count, expiry)
	ctx := context.Background()
	for round := range 3 {
		c := &deferringConsumer{seen: map[receiver.DeliveryRef]bool{}}
		n, err := Open(NodeConfig{Engine: cfg, Store: reopenable{st}, Clock: clock.NewFake(epoch.Add(time.Duration(round) * time.Minute)), Consumer: c})
		require.NoError(t, err)
		deadline := time.Now().Add(5 * time.Minute) // a bound, not a speed check: CI machines vary
		for c.count() < count && n.Err() == nil && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		require.NoError(t, n.Err(), "round %d", round)
		require.Equal(t, count, c.count(), "round %d: every waiting message handed out again", round)
		if round == 2 && confirm {
			refs := make([]receiver.DeliveryRef, 0, count)
			for ref := range c.seen {
				refs = append(refs, ref)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < len(refs); i += 8 {
						if err := n.Confirm(ctx, refs[i], nil); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			require.NoError(t, <-errs)
			var open int
			require.NoError(t, n.Admin(ctx, func(a admin.Engine, _ time.Time) { open = len(a.ReceivingGroups()) }))
			require.Equal(t, count, open, "confirmed singletons stay until their ExpiryTime (D17)")
		}
		require.NoError(t, n.Close(ctx))
	}
	if !confirm {
		return
	}
	// After the last round nothing waits: a fresh engine hands out nothing.
	e, err := LoadEngine(cfg, st)
	require.NoError(t, err)
	e.Tick(epoch.Add(3 * time.Minute))
	require.Empty(t, e.Ready().Deliver)
}

func TestRestartServesInboxBeyondBatchLimit(t *testing.T) {
	// #18 item 1: more singletons waiting in the inbox than one store
	// batch may carry; every restart hands them all out again.
	st, err := pebblestore.Open(pebblestore.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	defer st.Close()
	testRestartsServeFullInbox(t, st, store.DefaultMaxBatchMutations+1000, true)
}

func TestRestartServes200kInbox(t *testing.T) {
	// Three times the batch limit (each restart's re-offer takes several
	// commits).
	st, err := pebblestore.Open(pebblestore.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	defer st.Close()
	testRestartsServeFullInbox(t, st, 200_000, false)
}

func TestNodeTickOverMoreDueGroupsThanOneBatch(t *testing.T) {
	// #18 item 1: 70,000 singletons taken by the consumer all expire at
	// the same instant; removing them (D17) is one Tick's work, committed
	// in several batches. A restart afterwards finds none.
	st, err := pebblestore.Open(pebblestore.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	defer st.Close()
	const count = 70_000
	cfg := engineConfig("r")
	cfg.Receiver.MaxGroups = count + 10
	e, err := LoadEngine(cfg, st)
	require.NoError(t, err)
	for i := range count {
		e.Receive(epoch, uint64(i+1), soap.ContentTypeSOAP11, singletonEnvelope(t, fmt.Sprintf("urn:due:%07d", i), epoch.Add(time.Hour)))
		if i%1000 == 999 || i == count-1 {
			for e.HasReady() {
				rd := e.Ready()
				require.NoError(t, st.Apply(rd.Persist))
				e.Advance()
				for _, d := range rd.Deliver {
					e.Taken(epoch, d.Ref)
				}
			}
		}
	}
	clk := clock.NewFake(epoch)
	ctx := context.Background()
	n, err := Open(NodeConfig{Engine: cfg, Store: reopenable{st}, Clock: clk})
	require.NoError(t, err)
	open := func(n *Node) int {
		var k int
		require.NoError(t, n.Admin(ctx, func(a admin.Engine, _ time.Time) { k = len(a.ReceivingGroups()) }))
		return k
	}
	require.Equal(t, count, open(n))
	before, err := nodeMetrics(ctx, n)
	require.NoError(t, err)
	clk.Add(2 * time.Hour)
	require.NoError(t, n.Sync(ctx))
	waitUntil(t, func() bool { return n.Err() != nil || open(n) == 0 })
	require.NoError(t, n.Err())
	after, err := nodeMetrics(ctx, n)
	require.NoError(t, err)
	require.Greater(t, after.Commits-before.Commits, uint64(count/store.DefaultMaxBatchMutations), "the removals took several batches")
	require.NoError(t, n.Close(ctx))
	e, err = LoadEngine(cfg, st)
	require.NoError(t, err)
	require.Empty(t, e.Admin().ReceivingGroups())
}

// seqEnvelope is number n of ordered or unordered group gid, Callback-free
// Response pattern, expiring at expiry.
func seqEnvelope(t testing.TB, gid string, n uint64, ordered bool, expiry time.Time) []byte {
	req := &soap.Request{
		MessageID:    soap.MessageID{GroupID: gid, Sequence: &soap.SequenceNum{Number: n}},
		ExpiryTime:   expiry,
		ReplyPattern: soap.ReplyPattern{Value: group.ReplyResponse},
		Flags:        group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: ordered},
	}
	b, err := soap.AppendRequestEnvelope(nil, soap.SOAP11, req, []byte("<p>x</p>"))
	require.NoError(t, err)
	return b
}

// pagedEngine is an engine whose steps persist at most budget mutations
// (plus one message's), reopened from its store after every page: a crash
// between any two pages.
type pagedEngine struct {
	t      *testing.T
	cfg    Config
	st     store.Store
	e      *Engine
	budget int
	// discarded counts the discard events per group number.
	discarded map[string]int
	pages     int
}

func newPagedEngine(t *testing.T, budget int) *pagedEngine {
	cfg := engineConfig("r")
	cfg.Receiver.MaxStepMutations = budget
	p := &pagedEngine{t: t, cfg: cfg, st: memstore.New(memstore.Options{}), budget: budget, discarded: map[string]int{}}
	p.crash()
	return p
}

func (p *pagedEngine) crash() {
	e, err := LoadEngine(p.cfg, p.st)
	require.NoError(p.t, err)
	p.e = e
}

// apply commits the Ready, checking its size, and reopens the engine; it
// reports whether the Ready persisted more than deadlines (a restart makes
// waiting hand-offs due at once, which moves their group's deadline).
func (p *pagedEngine) apply() bool {
	rd := p.e.Ready()
	require.LessOrEqual(p.t, len(rd.Persist), p.budget+8, "one page")
	require.NoError(p.t, p.st.Apply(rd.Persist))
	p.e.Advance()
	for _, ev := range rd.Events {
		if r := ev.Receiver; r != nil && r.Kind == receiver.EventDiscarded {
			p.discarded[fmt.Sprintf("%s#%d", r.Group.GroupID, r.Number)]++
		}
	}
	p.pages++
	p.crash()
	for _, m := range rd.Persist {
		if m.Op != group.OpSetDeadline {
			return true
		}
	}
	return false
}

// run ticks at now, a page at a time, until a Tick changes no record.
func (p *pagedEngine) run(now time.Time) {
	for range 10_000 {
		if d, ok := p.e.NextDeadline(); !ok || d.After(now) {
			return
		}
		p.e.Tick(now)
		if !p.apply() {
			return
		}
	}
	p.t.Fatal("work never finished")
}

func TestPagedDiscardsSurviveACrashAfterEveryPage(t *testing.T) {
	// #18 item 1: an ordered group holding 300 messages behind a gap, an
	// unordered group with 300 waiting hand-offs, and one deleted by the
	// operator with 300: every discard happens exactly once, in pages of
	// the step budget, although the engine restarts after each page (D14,
	// D12, R51).
	p := newPagedEngine(t, 16)
	exp := epoch.Add(time.Minute)
	for n := uint64(1); n <= 300; n++ {
		p.e.Receive(epoch, n, soap.ContentTypeSOAP11, seqEnvelope(t, "urn:held", n, true, exp))
		p.e.Receive(epoch, 1000+n, soap.ContentTypeSOAP11, seqEnvelope(t, "urn:pending", n, false, exp))
		p.e.Receive(epoch, 2000+n, soap.ContentTypeSOAP11, seqEnvelope(t, "urn:deleted", n, false, epoch.Add(time.Hour)))
		rd := p.e.Ready()
		require.NoError(t, p.st.Apply(rd.Persist))
		p.e.Advance() // deliveries stay in flight: an inbox that never confirms
	}
	p.crash() // in-flight hand-offs are waiting again
	now := epoch.Add(time.Second)
	require.True(t, p.e.Admin().AbortReceiving(now, "urn:deleted"))
	p.apply()
	p.run(now)
	p.run(epoch.Add(2 * time.Minute))
	for _, g := range []string{"urn:held", "urn:pending", "urn:deleted"} {
		for n := 1; n <= 300; n++ {
			require.Equal(t, 1, p.discarded[fmt.Sprintf("%s#%d", g, n)], "%s#%d discarded once", g, n)
		}
	}
	require.Greater(t, p.pages, 3*300*2/16, "the work took many pages")
	v, ok := admin.Group(p.e.Admin(), "urn:held", admin.Receiving)
	require.True(t, ok)
	require.Zero(t, v.Held)
}
