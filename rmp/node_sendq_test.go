package rmp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/store/memstore"
)

func TestSendQueueKeepsOrderPerDestination(t *testing.T) {
	q := sendQueue{limit: 2}
	post := func(url string, i int) Outbound {
		return Outbound{Post: outbound.Post{URL: url, Body: []byte{byte(i)}}}
	}
	a, b := "http://a.test/rm", "http://b.test:8080?x=1"
	var started []int
	for i := range 5 {
		if q.add(post(a, i)) {
			started = append(started, i)
		}
	}
	require.True(t, q.add(post(b, 9)), "another destination has its own limit")
	require.Equal(t, []int{0, 1}, started, "only limit POSTs of a destination start")
	var next []int
	for {
		o, ok := q.next(a)
		if !ok {
			break
		}
		next = append(next, int(o.Post.Body[0]))
	}
	require.Equal(t, []int{2, 3, 4}, next, "the waiting POSTs go in the order they came")
	_, ok := q.next(a) // the second sending goroutine ends too
	require.False(t, ok)
	require.NotContains(t, q.dests, destination(a), "an idle destination is forgotten")
	_, ok = q.next(b)
	require.False(t, ok)
	require.Empty(t, q.dests)

	for url, want := range map[string]string{
		"http://h.test/rm":         "http://h.test",
		"https://u@h.test:8443?q":  "https://u@h.test:8443",
		"http://h.test#frag":       "http://h.test",
		"http://h.test":            "http://h.test",
		"not a url":                "not a url",
		"HTTP://H.TEST/upper/case": "HTTP://H.TEST",
	} {
		require.Equal(t, want, destination(url), url)
	}
}

// limitedTransport makes at most limit exchanges at once
// (outbound.DestinationLimit), each held until release, and records the
// bodies in the order they were sent.
type limitedTransport struct {
	limit   int
	release chan struct{}
	mu      sync.Mutex
	active  int
	most    int
	bodies  []string
}

func (l *limitedTransport) MaxPerDestination() int { return l.limit }

func (l *limitedTransport) Do(ctx context.Context, p outbound.Post) (outbound.PostResult, error) {
	l.mu.Lock()
	l.active++
	l.most = max(l.most, l.active)
	l.bodies = append(l.bodies, string(p.Body))
	l.mu.Unlock()
	defer func() { l.mu.Lock(); l.active--; l.mu.Unlock() }()
	select {
	case <-l.release:
		return outbound.PostResult{Status: 503}, nil // no ack: the message stays pending
	case <-ctx.Done():
		return outbound.PostResult{}, ctx.Err()
	}
}

func (l *limitedTransport) sent() (n, most int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.bodies), l.most
}

// A Node whose transport makes 2 exchanges at once per destination keeps
// the other POSTs in its queue, in the order they were released, and
// sends each when an exchange ends (#22): no more than 2 are ever in the
// transport, and every one is sent.
// Under a steady backlog (the queue never empties) the queue's memory
// stays that of the POSTs waiting, in order, however many went through.
func TestSendQueueUnderBacklogStaysBounded(t *testing.T) {
	q := sendQueue{limit: 1}
	url := "http://a.test/rm"
	post := func(i int) Outbound { return Outbound{Post: outbound.Post{URL: url, SOAPAction: fmt.Sprint(i)}} }
	require.True(t, q.add(post(0)))
	for i := 1; i <= 3; i++ {
		require.False(t, q.add(post(i)))
	}
	want := 1
	for i := 4; i < 10000; i++ {
		require.False(t, q.add(post(i)))
		o, ok := q.next(url)
		require.True(t, ok)
		require.Equal(t, fmt.Sprint(want), o.Post.SOAPAction, "in the order they came")
		want++
	}
	d := q.dests[destination(url)]
	require.LessOrEqual(t, cap(d.waiting), 16, "the slice grew with every POST sent")
}

func TestNodeQueuesPostsBeyondTheTransportLimit(t *testing.T) {
	ctx := context.Background()
	tr := &limitedTransport{limit: 2, release: make(chan struct{})}
	cfg := nodeConfig("s", memstore.New(memstore.Options{}), newCollector())
	cfg.Transport = tr
	cfg.Engine.Sender.Retry.Interval, cfg.Engine.Sender.Retry.MaxInterval = time.Hour, time.Hour // no resend meanwhile
	n, err := Open(cfg)
	require.NoError(t, err)
	defer n.Close(ctx)
	require.Equal(t, 2, n.sends.limit)

	const total = 6
	for i := range total {
		_, err := n.Submit(ctx, submission("", i, false))
		require.NoError(t, err)
	}
	waitUntil(t, func() bool {
		n.sends.mu.Lock()
		defer n.sends.mu.Unlock()
		d := n.sends.dests[destination("http://receiver.test/rmp")]
		return d != nil && len(d.waiting)-d.head == total-2
	})
	waitUntil(t, func() bool { s, _ := tr.sent(); return s == 2 }) // the two taken reach the transport
	n.sends.mu.Lock()
	d := n.sends.dests[destination("http://receiver.test/rmp")]
	require.Equal(t, total-2, len(d.waiting)-d.head, "the POSTs beyond the limit wait in the node's queue")
	n.sends.mu.Unlock()
	// One exchange ends at a time, and the next release waits for the
	// POST it let in: two ending at once would race for the queue's next
	// and reach the transport in either order.
	for i := range total {
		tr.release <- struct{}{}
		waitUntil(t, func() bool { s, _ := tr.sent(); return s == min(total, i+3) })
	}
	_, most := tr.sent()
	require.Equal(t, 2, most, "never more exchanges at once than the transport's limit")
	tr.mu.Lock()
	bodies := append([]string(nil), tr.bodies...)
	tr.mu.Unlock()
	if len(bodies) > 1 && strings.Contains(bodies[0], "<p>m1</p>") {
		bodies[0], bodies[1] = bodies[1], bodies[0] // the first two start at once, on two goroutines
	}
	for i, b := range bodies {
		require.Contains(t, b, fmt.Sprintf("<p>m%d</p>", i), "POST %d went out of order", i)
	}
	waitUntil(t, func() bool {
		n.sends.mu.Lock()
		defer n.sends.mu.Unlock()
		return len(n.sends.dests) == 0
	})
}

// countingTransport answers every POST at once with a 503 (no ack: the
// message stays pending) and counts them.
type countingTransport struct{ posts atomic.Int32 }

func (c *countingTransport) Do(context.Context, outbound.Post) (outbound.PostResult, error) {
	c.posts.Add(1)
	return outbound.PostResult{Status: 503}, nil
}

// A sender goroutine outlives its exchange and takes the next POST (#22:
// its stack stays grown); it ends when the node closes.
func TestNodeReusesSenderGoroutines(t *testing.T) {
	ctx := context.Background()
	tr := &countingTransport{}
	cfg := nodeConfig("s", memstore.New(memstore.Options{}), newCollector())
	cfg.Transport = tr
	cfg.Engine.Sender.Retry.Interval, cfg.Engine.Sender.Retry.MaxInterval = time.Hour, time.Hour // no resend meanwhile
	n, err := Open(cfg)
	require.NoError(t, err)
	for i := range 3 {
		_, err := n.Submit(ctx, submission("", i, false))
		require.NoError(t, err)
		waitUntil(t, func() bool { return tr.posts.Load() == int32(i+1) && n.idleSenders.Load() == 1 })
	}
	require.NoError(t, n.Close(ctx))
	require.Zero(t, n.idleSenders.Load(), "the idle sender ended with the node")
}
