package rmp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/rmp/clock"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/store/memstore"
)

// batchHandler takes outcomes in batches; its first call with more than
// one accepts only the first outcome and fails the rest.
type batchHandler struct {
	mu      sync.Mutex
	calls   [][]uint64
	handled []uint64
	failed  bool
}

func (h *batchHandler) HandleOutcome(ctx context.Context, o sender.Outcome) error {
	_, err := h.HandleOutcomes(ctx, []sender.Outcome{o})
	return err
}

func (h *batchHandler) HandleOutcomes(_ context.Context, os []sender.Outcome) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ns []uint64
	for _, o := range os {
		ns = append(ns, uint64(o.ID))
	}
	h.calls = append(h.calls, ns)
	if !h.failed && len(os) > 1 {
		h.failed = true
		h.handled = append(h.handled, ns[0])
		return 1, errors.New("disk full")
	}
	h.handled = append(h.handled, ns...)
	return len(os), nil
}

func (h *batchHandler) snapshot() ([][]uint64, []uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([][]uint64(nil), h.calls...), append([]uint64(nil), h.handled...)
}

// An OutcomeBatchHandler gets the outcomes waiting at once; those it did
// not accept are handed again, the accepted ones never (D27).
func TestNodeOutcomeBatches(t *testing.T) {
	ctx := context.Background()
	rn, err := Open(NodeConfig{Outbound: loopbackOnly, Store: memstore.New(memstore.Options{}), Consumer: ConsumerFunc(
		func(context.Context, Delivery) ([]byte, error) { return nil, nil })})
	require.NoError(t, err)
	defer rn.Close(ctx)
	srv := httptest.NewServer(rn)
	defer srv.Close()
	h := &batchHandler{}
	// The handler is held back with the first outcome until every other
	// message is acknowledged, so the other outcomes wait together. The
	// others are submitted only once the first is in the handler: acks that
	// came close together could otherwise share the first batch.
	gate, entered := make(chan struct{}), make(chan struct{})
	sn, err := Open(NodeConfig{Outbound: loopbackOnly, Engine: engineConfig("s"), Store: memstore.New(memstore.Options{}), RetryDelay: time.Millisecond,
		Outcomes: &gatedBatch{gate: gate, entered: entered, h: h}})
	require.NoError(t, err)
	defer sn.Close(ctx)
	var open sync.Once
	release := func() { open.Do(func() { close(gate) }) }
	defer release() // before Close: a failed check must not leave the loop stuck
	const n = 5
	for i := range n {
		sub := submission("", i, false)
		sub.To = srv.URL
		_, err := sn.Submit(ctx, sub)
		require.NoError(t, err)
		if i == 0 {
			select {
			case <-entered:
			case <-time.After(time.Minute):
				t.Fatal("the first outcome never reached the handler")
			}
		}
	}
	require.Eventually(t, func() bool { return len(sn.notifyQ) >= n-1 }, time.Minute, time.Millisecond)
	release()
	require.Eventually(t, func() bool { _, got := h.snapshot(); return len(got) == n }, time.Minute, time.Millisecond)
	calls, handled := h.snapshot()
	// The first outcome is taken as it comes; the others waited behind it
	// and come in one batch, whose refused part comes again, alone.
	require.Len(t, calls, 3, "%v", calls)
	require.Len(t, calls[0], 1, "%v", calls)
	require.Len(t, calls[1], n-1, "the waiting outcomes came in one batch: %v", calls)
	require.Equal(t, calls[1][1:], calls[2], "what was not accepted came again, nothing more: %v", calls)
	require.Len(t, handled, n)
}

// gatedBatch holds every call until gate is closed; entered is closed
// when the first call comes.
type gatedBatch struct {
	gate    chan struct{}
	entered chan struct{}
	once    sync.Once
	h       OutcomeBatchHandler
}

func (g *gatedBatch) HandleOutcome(ctx context.Context, o sender.Outcome) error {
	_, err := g.HandleOutcomes(ctx, []sender.Outcome{o})
	return err
}

func (g *gatedBatch) HandleOutcomes(ctx context.Context, os []sender.Outcome) (int, error) {
	g.once.Do(func() { close(g.entered) })
	<-g.gate
	return g.h.HandleOutcomes(ctx, os)
}

// With AwaitDelivery set, the answer to a request-response message that
// arrived out of order waits for its delivery and carries its own business
// response (R73); without it, the ack comes at once and alone.
func TestNodeHeldAnswerCarriesItsResponse(t *testing.T) {
	for _, wait := range []time.Duration{5 * time.Second, 0} {
		ctx := context.Background()
		rn, err := Open(NodeConfig{Store: memstore.New(memstore.Options{}), Clock: clock.NewFake(epoch), AwaitDelivery: wait, Consumer: ConsumerFunc(
			func(_ context.Context, d Delivery) ([]byte, error) {
				return fmt.Appendf(nil, `<q:Price xmlns:q="urn:q">%d</q:Price>`, 10+d.Ref.Number), nil
			})})
		require.NoError(t, err)
		srv := httptest.NewServer(rn)
		s := newSide(t, "sender", engineConfig("s"))
		for i := range 2 {
			_, err := s.e.Submit(epoch, submission("g", i, false))
			require.NoError(t, err)
		}
		s.drain(epoch)
		require.Len(t, s.sends, 2)
		post := func(o Outbound) string {
			resp, err := http.Post(srv.URL, o.Post.ContentType, bytes.NewReader(o.Post.Body))
			require.NoError(t, err)
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return string(b)
		}
		held := make(chan string, 1)
		go func() { held <- post(s.sends[1]) }() // number 1 first: held
		if wait > 0 {
			select {
			case a := <-held:
				t.Fatalf("the held message was answered before its delivery: %s", a)
			case <-time.After(200 * time.Millisecond):
			}
		} else {
			a := <-held
			require.NotContains(t, a, "q:Price", "acknowledged at once, alone")
			held <- a
		}
		require.Contains(t, post(s.sends[0]), ">10</q:Price>")
		a := <-held
		require.Contains(t, a, `<wsrm:Response`, "its ack")
		if wait > 0 {
			require.Contains(t, a, ">11</q:Price>", "the held message's own business response")
		} else {
			require.NotContains(t, a, "q:Price")
		}
		srv.Close()
		rn.Close(ctx)
	}
}
