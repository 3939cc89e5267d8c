package rmp

import (
	"strings"
	"sync"
)

// sendQueue keeps the Node's POSTs beyond its transport's limit per
// destination (outbound.DestinationLimit) in a queue instead of a
// goroutine each. With 64 groups and a window of 16 a sender has up to
// 1,024 POSTs due to one receiver and 16 connections to it: the POSTs
// waiting for a connection were goroutines parked in the transport,
// whose stacks every garbage collection scanned (≈ 5 % of the CPU,
// #22). Now at most limit goroutines per destination send, each taking
// the next POST of its destination, in the order they were released,
// when its exchange ends.
type sendQueue struct {
	limit int // ≤ 0: no queue, a goroutine per POST
	mu    sync.Mutex
	dests map[string]*destSends // only destinations with a POST in progress
}

// destSends is one destination's POSTs: active ones sending, the rest
// waiting in order.
type destSends struct {
	active  int
	waiting []Outbound
	head    int // waiting[head:] are still to send
}

// add queues o and reports whether a new sending goroutine should take it
// (the destination has fewer than limit).
func (q *sendQueue) add(o Outbound) bool {
	if q.limit <= 0 {
		return true
	}
	key := destination(o.Post.URL)
	q.mu.Lock()
	defer q.mu.Unlock()
	d := q.dests[key]
	if d == nil {
		if q.dests == nil {
			q.dests = map[string]*destSends{}
		}
		d = &destSends{}
		q.dests[key] = d
	}
	if d.active < q.limit {
		d.active++
		return true
	}
	if len(d.waiting) == cap(d.waiting) && d.head >= cap(d.waiting)/2 {
		// The sent half is reused, not grown past: under a steady
		// backlog the queue never empties, and the slice grew by every
		// POST since it last did (#22).
		n := copy(d.waiting, d.waiting[d.head:])
		clear(d.waiting[n:])
		d.waiting, d.head = d.waiting[:n], 0
	}
	d.waiting = append(d.waiting, o)
	return false
}

// next is the POST to send after one to url ended, false when none
// waits (the goroutine then ends).
func (q *sendQueue) next(url string) (Outbound, bool) {
	if q.limit <= 0 {
		return Outbound{}, false
	}
	key := destination(url)
	q.mu.Lock()
	defer q.mu.Unlock()
	d := q.dests[key]
	if d.head < len(d.waiting) {
		o := d.waiting[d.head]
		d.waiting[d.head] = Outbound{} // its body is garbage once sent
		d.head++
		if d.head == len(d.waiting) {
			d.waiting, d.head = d.waiting[:0], 0
		}
		return o, true
	}
	if d.active--; d.active == 0 {
		delete(q.dests, key) // bounded by the POSTs in progress: ReplyTo URLs come from peers
	}
	return Outbound{}, false
}

// destination is rawURL up to its path, query or fragment: scheme, user
// information and host. It tells destinations apart at least as finely as
// outbound.Origin does, so a queue never holds back a POST that the
// transport would send at once.
func destination(rawURL string) string {
	i := strings.Index(rawURL, "://")
	if i < 0 {
		return rawURL
	}
	if j := strings.IndexAny(rawURL[i+3:], "/?#"); j >= 0 {
		return rawURL[:i+3+j]
	}
	return rawURL
}
