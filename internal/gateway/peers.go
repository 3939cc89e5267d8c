package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wsrkit/wsrkit/rmp/admin"
	"github.com/wsrkit/wsrkit/rmp/outbound"
)

// maxTrackedPeers bounds the destinations peerTracker remembers: callback
// ReplyTo URLs are chosen by peers, so their number is not ours to trust.
const maxTrackedPeers = 4096

// peerTracker wraps the RMP transport and remembers, per destination URL,
// how its last exchanges went (GET /v1/peers, #21). In memory only.
type peerTracker struct {
	outbound.Transport
	now func() time.Time
	mu  sync.Mutex
	by  map[string]*peerSeen
}

// peerSeen is what one destination's exchanges showed.
type peerSeen struct {
	// ok: the last exchange got an HTTP answer below 500.
	ok          bool
	lastAnswer  time.Time // the last HTTP answer of any status
	lastFailure time.Time // the last exchange without an answer, or a 5xx
	failure     string
	touched     time.Time
}

func newPeerTracker(t outbound.Transport, now func() time.Time) *peerTracker {
	return &peerTracker{Transport: t, now: now, by: map[string]*peerSeen{}}
}

// MaxPerDestination forwards the wrapped transport's limit, so that the
// Node queues the POSTs beyond it (outbound.DestinationLimit); 0 when it
// has none.
func (p *peerTracker) MaxPerDestination() int {
	if l, ok := p.Transport.(outbound.DestinationLimit); ok {
		return l.MaxPerDestination()
	}
	return 0
}

func (p *peerTracker) Do(ctx context.Context, post outbound.Post) (outbound.PostResult, error) {
	res, err := p.Transport.Do(ctx, post)
	if errors.Is(err, context.Canceled) {
		return res, err // shutting down: says nothing about the peer
	}
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.by[post.URL]
	if s == nil {
		p.evictLocked()
		s = &peerSeen{}
		p.by[post.URL] = s
	}
	s.touched = now
	switch {
	case err != nil:
		s.ok, s.lastFailure, s.failure = false, now, err.Error()
	case res.Status >= 500:
		s.ok, s.lastAnswer, s.lastFailure, s.failure = false, now, now, fmt.Sprintf("HTTP %d", res.Status)
	default:
		s.ok, s.lastAnswer = true, now
	}
	return res, err
}

// evictLocked makes room by forgetting the destination touched longest
// ago (ties by URL: no map order decides).
func (p *peerTracker) evictLocked() {
	if len(p.by) < maxTrackedPeers {
		return
	}
	var oldest string
	for u, s := range p.by {
		if o := p.by[oldest]; oldest == "" || s.touched.Before(o.touched) || (s.touched.Equal(o.touched) && u < oldest) {
			oldest = u
		}
	}
	delete(p.by, oldest)
}

func (p *peerTracker) seen(url string) (peerSeen, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.by[url]
	if !ok {
		return peerSeen{}, false
	}
	return *s, true
}

func (p *peerTracker) urls() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	us := make([]string, 0, len(p.by))
	for u := range p.by {
		us = append(us, u)
	}
	return us
}

// PeerJSON is one destination of GET /v1/peers.
type PeerJSON struct {
	// To is the destination URL (password masked).
	To string `json:"to"`
	// Reachable: the last exchange got an HTTP answer below 500; null
	// when none was made since the gateway started.
	Reachable *bool `json:"reachable"`
	// LastContact is the last HTTP answer; LastFailure and LastError the
	// last exchange without one (or a 5xx) and why.
	LastContact *string `json:"lastContact"`
	LastFailure *string `json:"lastFailure"`
	LastError   string  `json:"lastError,omitempty"`
	// Groups in state sending there, their unacknowledged messages
	// (pending) and those of them sent more than once (retrying: the retry
	// backlog, D26).
	Groups   int `json:"groups"`
	Pending  int `json:"pending"`
	Retrying int `json:"retrying"`
	// NoAck is the last reason a pending message's transmission brought
	// no ack ("HTTP 200 without wsrm:Response"…), if one is known.
	NoAck string `json:"noAck,omitempty"`
}

// handlePeers answers every destination the sending side has groups for
// or this instance exchanged with (messages, polls, callbacks), sorted.
func (g *Gateway) handlePeers(w http.ResponseWriter, r *http.Request) {
	by := map[string]*PeerJSON{}
	get := func(to string) *PeerJSON {
		p := by[to]
		if p == nil {
			p = &PeerJSON{To: to}
			by[to] = p
		}
		return p
	}
	for _, sn := range g.nodes() {
		err := sn.node.Admin(r.Context(), func(a admin.Engine, _ time.Time) {
			for _, d := range a.Destinations() {
				p := get(d.To)
				p.Groups += d.Groups
				p.Pending += d.Pending
				p.Retrying += d.Resending
				p.NoAck = max(p.NoAck, d.LastError)
			}
		})
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
	}
	for _, u := range g.peers.urls() {
		get(u)
	}
	out := make([]PeerJSON, 0, len(by))
	for u, p := range by {
		if s, ok := g.peers.seen(u); ok {
			p.Reachable = &s.ok
			p.LastContact, p.LastFailure, p.LastError = optTime(s.lastAnswer), optTime(s.lastFailure), s.failure
		}
		p.To = outbound.Redact(u)
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b PeerJSON) int { return strings.Compare(a.To, b.To) })
	writeJSON(w, http.StatusOK, map[string]any{"peers": out})
}

// optTime is apiTime, null for the zero Time.
func optTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := apiTime(t)
	return &s
}
