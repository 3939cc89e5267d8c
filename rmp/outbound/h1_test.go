package outbound

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawServer answers each request on a connection with what answer
// returns for it (the request's head and body as read), and closes the
// connection after it when answer says so; it counts connections.
type rawServer struct {
	ln    net.Listener
	conns atomic.Int32
	mu    sync.Mutex
	reqs  [][]byte
}

func newRawServer(t *testing.T, answer func(n int, req []byte) (resp string, close bool)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			go s.serve(c, answer)
		}
	}()
	return s
}

func (s *rawServer) serve(c net.Conn, answer func(int, []byte) (string, bool)) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		var raw bytes.Buffer
		req.Write(&raw) // for the count only; the bytes on the wire are below
		body, _ := io.ReadAll(req.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, body)
		n := len(s.reqs)
		s.mu.Unlock()
		resp, closing := answer(n, body)
		if _, err := io.WriteString(c, resp); err != nil || closing {
			return
		}
	}
}

func (s *rawServer) url() string { return "http://" + s.ln.Addr().String() + "/rm?x=1" }

// wireCapture accepts one connection, records the request's bytes as
// they arrive until its body is in, and answers 200.
func wireCapture(t *testing.T) (url string, got <-chan []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var rec bytes.Buffer
		req, err := http.ReadRequest(bufio.NewReader(io.TeeReader(c, &rec)))
		if err != nil {
			ch <- nil
			return
		}
		io.ReadAll(req.Body)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		ch <- rec.Bytes()
	}()
	return "http://" + ln.Addr().String() + "/rm/in?a=b%20c", ch
}

// What a peer receives from h1 is, byte for byte, what net/http sends for
// the same POST: request line, Host, User-Agent, Content-Length, then the
// other fields sorted, then the body.
func TestH1SendsWhatNetHTTPSends(t *testing.T) {
	post := Post{ContentType: "text/xml; charset=utf-8", SOAP11: true, SOAPAction: `urn:a"b`, Body: []byte("<env>x</env>")}
	for _, empty := range []bool{false, true} {
		p := post
		if empty {
			p.Body = nil
		}
		var heads [2][]byte
		for i, viaNetHTTP := range []bool{false, true} {
			u, got := wireCapture(t)
			pol := loopbackOnly
			if viaNetHTTP {
				pol = Policy{Exempt: []string{strings.SplitN(u, "/rm", 2)[0]}}
			}
			tr := NewHTTPTransport(Config{Policy: &pol})
			p.URL = u
			res, err := tr.Do(context.Background(), p)
			if err != nil || res.Status != 200 || string(res.Body) != "ok" {
				t.Fatalf("net/http %v: %+v %v", viaNetHTTP, res, err)
			}
			// The port differs, one listener each.
			heads[i] = bytes.Replace(<-got, []byte(strings.TrimPrefix(strings.SplitN(u, "/rm", 2)[0], "http://")), []byte("ADDR"), 1)
			if d := tr.byURL[u]; (d.h1 != nil) == viaNetHTTP {
				t.Fatalf("net/http %v: sent by h1 %v", viaNetHTTP, d.h1 != nil)
			}
		}
		if !bytes.Equal(heads[0], heads[1]) {
			t.Fatalf("empty body %v:\nh1:       %q\nnet/http: %q", empty, heads[0], heads[1])
		}
		if !bytes.HasPrefix(heads[0], []byte("POST /rm/in?a=b%20c HTTP/1.1\r\nHost: ADDR\r\n")) {
			t.Fatalf("request line: %q", heads[0])
		}
	}
}

// Exchanges in a row share one connection; an answer with Connection:
// close, or a server that closed its side while the connection was idle,
// makes the next exchange dial a new one, and it succeeds.
func TestH1ReusesConnectionsUntilClosed(t *testing.T) {
	srv := newRawServer(t, func(n int, _ []byte) (string, bool) {
		switch n {
		case 4:
			return "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbye", false
		case 6:
			return "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ngone", true // closed without saying so
		}
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
	})
	tr := NewHTTPTransport(Config{Policy: &loopbackOnly})
	want := []struct {
		body  string
		conns int32
	}{{"ok", 1}, {"ok", 1}, {"ok", 1}, {"bye", 1}, {"ok", 2}, {"gone", 2}, {"ok", 3}, {"ok", 3}}
	for i, w := range want {
		if i == 6 {
			time.Sleep(50 * time.Millisecond) // the server's FIN arrives
		}
		res, err := tr.Do(context.Background(), Post{URL: srv.url(), Body: []byte("<m/>")})
		if err != nil || string(res.Body) != w.body {
			t.Fatalf("exchange %d: %q, %v; want %q", i+1, res.Body, err, w.body)
		}
		if c := srv.conns.Load(); c != w.conns {
			t.Fatalf("exchange %d: %d connections, want %d", i+1, c, w.conns)
		}
	}
}

// A chunked body, an informational answer before the final one, and
// gzip are read as net/http reads them; a 101 is no answer.
func TestH1ReadsChunkedInformationalAndGzip(t *testing.T) {
	srv := newRawServer(t, func(n int, _ []byte) (string, bool) {
		switch n {
		case 1:
			return "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n" +
				"HTTP/1.1 202 Accepted\r\nContent-Type: text/xml\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n<a/\r\n1\r\n>\r\n0\r\n\r\n", false
		case 2:
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n", false
		}
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
	})
	tr := NewHTTPTransport(Config{Policy: &loopbackOnly})
	res, err := tr.Do(context.Background(), Post{URL: srv.url()})
	if err != nil || res.Status != 202 || string(res.Body) != "<a/>" || res.ContentType != "text/xml" {
		t.Fatalf("chunked after 1xx: %+v %v", res, err)
	}
	if _, err := tr.Do(context.Background(), Post{URL: srv.url()}); err == nil || !strings.Contains(err.Error(), "101") {
		t.Fatalf("101: err = %v, want a refusal naming it", err)
	}
	if res, err := tr.Do(context.Background(), Post{URL: srv.url()}); err != nil || string(res.Body) != "ok" || srv.conns.Load() != 2 {
		t.Fatalf("after the 101: %q %v, %d connections (want 2: the upgraded one is not reused)", res.Body, err, srv.conns.Load())
	}
}

// A peer that streams header lines without end is cut off once the head
// passes its bound, not buffered.
func TestH1BoundsTheResponseHead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var sent atomic.Int64
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		go io.Copy(io.Discard, c)
		line := []byte("X-Filler: " + strings.Repeat("y", 1000) + "\r\n")
		io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		for {
			n, err := c.Write(line)
			if sent.Add(int64(n)); err != nil {
				return
			}
		}
	}()
	tr := NewHTTPTransport(Config{Policy: &loopbackOnly})
	_, err = tr.Do(context.Background(), Post{URL: "http://" + ln.Addr().String() + "/"})
	if err == nil || !strings.Contains(err.Error(), "headers exceeded") {
		t.Fatalf("err = %v, want the head bound", err)
	}
}

// The end of the caller's context ends an exchange in progress at once;
// the same context then fails at once, and another one goes through on
// a new connection.
func TestH1ContextEndsTheExchange(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	defer close(hang)
	tr := NewHTTPTransport(Config{Policy: &loopbackOnly})
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := tr.Do(ctx, Post{URL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	if _, err := tr.Do(ctx, Post{URL: srv.URL + "/hang"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the context's cancellation", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the exchange ended %v after its context", d)
	}
	if _, err := tr.Do(ctx, Post{URL: srv.URL}); !errors.Is(err, context.Canceled) {
		t.Fatalf("under the ended context: err = %v", err)
	}
	if res, err := tr.Do(context.Background(), Post{URL: srv.URL}); err != nil || string(res.Body) != "ok" {
		t.Fatalf("another context: %q %v", res.Body, err)
	}
}

// Timeout bounds a body that never finishes, for a new connection and a
// reused one, and the exchange after it goes through.
func TestH1TimeoutBoundsEachExchange(t *testing.T) {
	srv := trickleServer(t)
	tr := NewHTTPTransport(Config{Policy: &loopbackOnly, Timeout: 300 * time.Millisecond})
	for round := range 2 {
		for range 3 {
			if res, err := tr.Do(context.Background(), Post{URL: srv.URL}); err != nil || string(res.Body) != "<ack/>" {
				t.Fatalf("round %d: %q %v", round, res.Body, err)
			}
		}
		start := time.Now()
		if _, err := tr.Do(context.Background(), Post{URL: srv.URL + "/trickle"}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("round %d: trickling body err = %v, want the Timeout", round, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("round %d: Timeout 300ms, the exchange took %v", round, d)
		}
	}
}

// The pool keeps at most MaxIdleConns connections in all, and a header
// value that would split the head is not sent.
func TestH1PoolBoundsAndHeaderValues(t *testing.T) {
	release := make(chan struct{})
	var inFlight atomic.Int32
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inFlight.Add(1)
		<-release
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	tr := NewHTTPTransport(Config{Policy: &loopbackOnly, MaxIdleConns: 2, MaxPerDestination: 8})
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := tr.Do(context.Background(), Post{URL: srv.URL + "/" + strconv.Itoa(i)}); err != nil {
				t.Error(err)
			}
		}()
	}
	for inFlight.Load() < 5 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	tr.h1.mu.Lock()
	idle := tr.h1.nidle
	tr.h1.mu.Unlock()
	if conns.Load() != 5 || idle != 2 {
		t.Fatalf("%d connections, %d idle; want 5 and the bound 2", conns.Load(), idle)
	}
	for _, ct := range []string{"text/xml\r\nX-Injected: 1", "text/xml\nX: 1", "text/xml\x00"} {
		if _, err := tr.Do(context.Background(), Post{URL: srv.URL, ContentType: ct}); err == nil {
			t.Errorf("Content-Type %q was sent", ct)
		}
	}
	if inFlight.Load() != 5 {
		t.Fatalf("%d requests reached the server, want 5", inFlight.Load())
	}
}
