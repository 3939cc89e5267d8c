package outbound

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Timeout bounds every exchange, body included, however many exchanges
// before it reused their context (watch.go, #22): a peer that sends its
// header and then never finishes the body is cut off after Timeout, the
// exchange after it gets a live context, and one parent's exchanges in a
// row share one watch.
func TestHTTPTransportTimeoutBoundsEachReusedExchange(t *testing.T) {
	srv := trickleServer(t)
	// Exempt, the server is called through net/http (h1 makes the plain
	// http:// exchanges of the others; TestH1TimeoutBoundsEachExchange).
	tr := NewHTTPTransport(Config{Policy: &Policy{Exempt: []string{srv.URL}}, Timeout: 300 * time.Millisecond})
	ctx := context.Background()
	do := func(path string) error {
		done := make(chan error, 1)
		go func() {
			res, err := tr.Do(ctx, Post{URL: srv.URL + path})
			if err == nil && string(res.Body) != "<ack/>" {
				err = errors.New("body " + string(res.Body))
			}
			done <- err
		}()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the exchange outlived its Timeout", path)
			return nil
		}
	}
	for round := range 2 {
		for range 3 {
			if err := do("/"); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		tr.mu.Lock()
		idle := len(tr.watches)
		tr.mu.Unlock()
		if idle != 1 {
			t.Fatalf("round %d: %d idle watches after exchanges in a row, want 1 reused", round, idle)
		}
		if err := do("/trickle"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("round %d: trickling body err = %v, want the Timeout (deadline exceeded)", round, err)
		}
		tr.mu.Lock()
		idle = len(tr.watches)
		tr.mu.Unlock()
		if idle != 0 {
			t.Fatalf("round %d: the watch that fired was kept", round)
		}
	}
}

// trickleServer answers <ack/>, but at /trickle a header announcing 100
// bytes and 4 of them, and then nothing until the test ends.
func trickleServer(t *testing.T) *httptest.Server {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/trickle" {
			io.WriteString(w, "<ack/>")
			return
		}
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "<ack")
		w.(http.Flusher).Flush()
		<-hang
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hang) }) // runs first: Close waits for the handlers
	return srv
}

// A canceled parent ends its exchange, and its watch is not kept: the
// next exchange, under another parent, goes through.
func TestHTTPTransportCanceledParentIsNotReused(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			<-hang
		}
	}))
	defer srv.Close()
	defer close(hang)
	tr := NewHTTPTransport(Config{Policy: &Policy{Exempt: []string{srv.URL}}})
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := tr.Do(ctx, Post{URL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := tr.Do(ctx, Post{URL: srv.URL + "/hang"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the parent's cancellation", err)
	}
	if _, err := tr.Do(ctx, Post{URL: srv.URL}); !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: err = %v, want canceled (a kept watch would hide it)", err)
	}
	if _, err := tr.Do(context.Background(), Post{URL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, w := range tr.watches {
		if w.ctx.Err() != nil {
			t.Fatal("a canceled watch was kept")
		}
	}
}
