// Package lbtest is the load balancer of the cluster tests: it spreads
// requests over live gateways round robin, as one with health checks
// would, and answers 503 (no ack: a WS-R sender resends, R36) when the
// chosen instance does not answer in time.
package lbtest

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"time"
)

// Front is a round-robin reverse proxy over a changing set of base URLs.
// Safe for concurrent use.
type Front struct {
	client *http.Client

	mu   sync.Mutex
	urls []string
	next int
}

// New returns a Front over urls whose exchanges are bounded by timeout.
func New(timeout time.Duration, urls ...string) *Front {
	return &Front{client: &http.Client{Timeout: timeout}, urls: append([]string(nil), urls...)}
}

// Add puts u in the rotation.
func (f *Front) Add(u string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.urls = append(f.urls, u)
}

// Remove takes u out of the rotation, as a failed health check would.
func (f *Front) Remove(u string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, x := range f.urls {
		if x == u {
			f.urls = append(f.urls[:i], f.urls[i+1:]...)
			return
		}
	}
}

// ServeHTTP forwards r to the next instance and copies its answer back:
// status, Content-Type and body. No instance, or none answering, is 503.
func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	if len(f.urls) == 0 {
		f.mu.Unlock()
		http.Error(w, "no instance in rotation", http.StatusServiceUnavailable)
		return
	}
	u := f.urls[f.next%len(f.urls)]
	f.next++
	f.mu.Unlock()
	req, err := http.NewRequestWithContext(r.Context(), r.Method, u+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := f.client.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(answer)
}
