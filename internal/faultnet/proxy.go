// Package faultnet is a faulty HTTP link for demos and tests: a reverse
// proxy that, with seeded randomness, drops, duplicates, delays and so
// reorders requests and responses between two RMPs.
package faultnet

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Config sets the faults of a Proxy. Rates are probabilities in [0, 1].
type Config struct {
	// Target is the base URL requests are forwarded to; the request's path
	// and query are appended.
	Target string
	// DropRequest: the request never reaches the target; the client's
	// connection is closed without a response.
	DropRequest float64
	// DropResponse: the target processes the request, but its response is
	// lost: the client's connection is closed.
	DropResponse float64
	// Duplicate: the request is forwarded a second time, later.
	Duplicate float64
	// MaxDelay: each forward waits a random time up to MaxDelay, which
	// reorders concurrent requests.
	MaxDelay time.Duration
	// Seed seeds the fault decisions.
	Seed uint64
	// Client forwards requests; nil means http.DefaultClient.
	Client *http.Client
	// MaxBody bounds request bodies (default 8 MiB).
	MaxBody int64
}

// Stats counts what the proxy did.
type Stats struct {
	Requests, DroppedRequests, DroppedResponses, Duplicates, ForwardErrors int64
}

// Proxy is an http.Handler that forwards to Config.Target through faults.
type Proxy struct {
	cfg Config

	mu  sync.Mutex
	rng *rand.Rand // guarded by mu

	requests, droppedReq, droppedResp, dups, fwdErr atomic.Int64
	wg                                              sync.WaitGroup
}

// New returns a Proxy for cfg.
func New(cfg Config) *Proxy {
	if cfg.Client == nil {
		cfg.Client = http.DefaultClient
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 8 << 20
	}
	return &Proxy{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}
}

// Stats returns the counters so far.
func (p *Proxy) Stats() Stats {
	return Stats{
		Requests: p.requests.Load(), DroppedRequests: p.droppedReq.Load(),
		DroppedResponses: p.droppedResp.Load(), Duplicates: p.dups.Load(), ForwardErrors: p.fwdErr.Load(),
	}
}

// Wait waits for duplicate forwards still in flight.
func (p *Proxy) Wait() { p.wg.Wait() }

type decision struct {
	dropReq, dropResp, dup bool
	delay, dupDelay        time.Duration
}

func (p *Proxy) decide() decision {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := decision{
		dropReq:  p.rng.Float64() < p.cfg.DropRequest,
		dropResp: p.rng.Float64() < p.cfg.DropResponse,
		dup:      p.rng.Float64() < p.cfg.Duplicate,
	}
	if p.cfg.MaxDelay > 0 {
		d.delay = time.Duration(p.rng.Int64N(int64(p.cfg.MaxDelay) + 1))
		d.dupDelay = time.Duration(p.rng.Int64N(int64(p.cfg.MaxDelay) + 1))
	}
	return d
}

// ServeHTTP forwards r through the configured faults.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, p.cfg.MaxBody))
	if err != nil {
		http.Error(w, "faultnet: request body: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	d := p.decide()
	if d.dup {
		p.dups.Add(1)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			time.Sleep(d.dupDelay)
			if resp, err := p.forward(r, body); err == nil {
				resp.Body.Close()
			}
		}()
	}
	time.Sleep(d.delay)
	if d.dropReq {
		p.droppedReq.Add(1)
		abort(w)
		return
	}
	resp, err := p.forward(r, body)
	if err != nil {
		p.fwdErr.Add(1)
		abort(w)
		return
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil || d.dropResp {
		if d.dropResp {
			p.droppedResp.Add(1)
		}
		abort(w)
		return
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(respBody)
}

func (p *Proxy) forward(r *http.Request, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(r.Method, p.cfg.Target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for _, h := range []string{"Content-Type", "SOAPAction"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	return p.cfg.Client.Do(req)
}

// abort closes the client's connection without a response, as a lost
// message or a lost response looks to the sender.
func abort(http.ResponseWriter) {
	panic(http.ErrAbortHandler)
}
