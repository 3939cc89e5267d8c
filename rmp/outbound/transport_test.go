package outbound

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

// loopbackOnly lets the transport call the tests' servers on loopback.
var loopbackOnly = Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}

func TestHTTPTransportPostsAndReads(t *testing.T) {
	var gotAction, gotType, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			t.Errorf("method = %s, want POST (R83)", r.Method)
		}
		b, _ := io.ReadAll(r.Body)
		gotAction, gotType, gotBody = r.Header.Get("SOAPAction"), r.Header.Get("Content-Type"), string(b)
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "<ack/>")
	}))
	defer srv.Close()

	tr := NewHTTPTransport(Config{Policy: &loopbackOnly})
	res, err := tr.Do(context.Background(), Post{URL: srv.URL, ContentType: "text/xml; charset=utf-8", SOAP11: true, SOAPAction: "urn:a", Body: []byte("<env/>")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 200 || string(res.Body) != "<ack/>" || res.ContentType != "text/xml; charset=utf-8" {
		t.Fatalf("result = %+v", res)
	}
	if gotAction != `"urn:a"` || gotType != "text/xml; charset=utf-8" || gotBody != "<env/>" {
		t.Fatalf("server saw action=%q type=%q body=%q (R84: quoted SOAPAction)", gotAction, gotType, gotBody)
	}
}

func TestHTTPTransportRefusesBadDestinations(t *testing.T) {
	tr := NewHTTPTransport(Config{Policy: &loopbackOnly})
	for _, u := range []string{"", "mailto:x@y", "/relative", "ftp://h/x", "", "ftp://h/x"} {
		if _, err := tr.Do(context.Background(), Post{URL: u}); err == nil || !strings.Contains(err.Error(), "absolute http(s) URL") {
			t.Errorf("Do(%q) err = %v, want a clear destination error", u, err)
		}
	}
}

func TestHTTPTransportBoundsResponseAndConcurrency(t *testing.T) {
	var inFlight, peak atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if r.URL.Path == "/big" {
			io.WriteString(w, strings.Repeat("x", 100))
		} else {
			<-release
		}
		inFlight.Add(-1)
	}))
	defer srv.Close()
	tr := NewHTTPTransport(Config{Policy: &loopbackOnly, MaxPerDestination: 2, MaxResponseBytes: 10, Timeout: 5 * time.Second})

	if _, err := tr.Do(context.Background(), Post{URL: srv.URL + "/big"}); err != errResponseTooLarge {
		t.Fatalf("big response err = %v, want errResponseTooLarge", err)
	}
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Distinct URLs on one host share the host's limit.
			tr.Do(context.Background(), Post{URL: srv.URL + "/slow?m=" + strconv.Itoa(i)})
		}()
	}
	// Wait until two exchanges are parked in the handler, then let them go.
	deadline := time.Now().Add(5 * time.Second)
	for inFlight.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if p := peak.Load(); p != 2 {
		t.Fatalf("peak concurrent exchanges = %d, want the limit 2", p)
	}
}

// The transport remembers the URLs it checked, boundedly (ReplyTo URLs come
// from peers), and every URL of a host maps to that host's one slot.
func TestHTTPTransportURLCacheIsBounded(t *testing.T) {
	tr := NewHTTPTransport(Config{Policy: &loopbackOnly})
	first, err := tr.slot("http://h.example/a")
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxCachedURLs + 10 {
		s, err := tr.slot("http://h.example/p?" + strconv.Itoa(i))
		if err != nil || s != first {
			t.Fatalf("URL %d: slot %p err %v, want the host's %p", i, s, err, first)
		}
	}
	if n := len(tr.byURL); n > maxCachedURLs {
		t.Fatalf("%d URLs cached, bound %d", n, maxCachedURLs)
	}
	if s, _ := tr.slot("https://h.example/a"); s == first {
		t.Fatal("https and http of one host share a slot")
	}
}

// A peer that takes a POST and never answers is cut off after
// ResponseHeaderTimeout, well inside Timeout; an idle pooled connection
// is closed after IdleConnTimeout (#18 item 6).
func TestHTTPTransportTimeoutsAndIdlePool(t *testing.T) {
	hang := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang }))
	defer silent.Close()
	defer close(hang)
	closed := make(chan struct{}, 4)
	idle := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	idle.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed <- struct{}{}
		}
	}
	idle.Start()
	defer idle.Close()
	tr := NewHTTPTransport(Config{Policy: &loopbackOnly, Timeout: time.Minute,
		ResponseHeaderTimeout: 200 * time.Millisecond, IdleConnTimeout: 200 * time.Millisecond})
	done := make(chan error, 1)
	go func() {
		_, err := tr.Do(context.Background(), Post{URL: silent.URL})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "timeout awaiting response headers") {
			t.Fatalf("err = %v, want a response header timeout", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a silent peer held the exchange past ResponseHeaderTimeout")
	}
	if _, err := tr.Do(context.Background(), Post{URL: idle.URL}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("an idle pooled connection outlived IdleConnTimeout")
	}
}

// A redirect is the answer, never followed: an outbound POST goes only to
// the URL it was given (#18 item 7).
func TestHTTPTransportFollowsNoRedirect(t *testing.T) {
	var hit atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hit.Add(1) }))
	defer target.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/x", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	res, err := NewHTTPTransport(Config{Policy: &loopbackOnly}).Do(context.Background(), Post{URL: redirector.URL})
	if err != nil || res.Status != http.StatusTemporaryRedirect || hit.Load() != 0 {
		t.Fatalf("status %d err %v, target hit %d times; want the 307 itself", res.Status, err, hit.Load())
	}
}

// An action reaches the SOAPAction header quoted with its quotes escaped,
// never splitting the header: one with CR/LF is not sent at all (#18
// item 9).
func TestHTTPTransportSOAPActionIsEscaped(t *testing.T) {
	var mu sync.Mutex
	var seen []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
	}))
	defer srv.Close()
	tr := NewHTTPTransport(Config{Policy: &loopbackOnly})
	if _, err := tr.Do(context.Background(), Post{URL: srv.URL, SOAP11: true, SOAPAction: `urn:a"b\c`}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"urn:a\r\nX-Injected: 1", "urn:a\nX-Injected: 1", "urn:a\x00"} {
		if _, err := tr.Do(context.Background(), Post{URL: srv.URL, SOAP11: true, SOAPAction: bad}); err == nil {
			t.Errorf("action %q was sent", bad)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0].Get("SOAPAction") != `"urn:a\"b\\c"` || seen[0].Get("X-Injected") != "" {
		t.Fatalf("server saw %v, want one POST with SOAPAction \"urn:a\\\"b\\\\c\"", seen)
	}
}

// TestReadAllSized: whatever the hint says, the whole body comes back, in
// one allocation when the hint is right.
func TestReadAllSized(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 170) // 1,700 bytes
	for _, hint := range []int64{-1, 0, 1, 100, 1699, 1700, 1701, 1 << 40} {
		got, err := readAllSized(iotest.HalfReader(bytes.NewReader(body)), hint, 4<<20)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("hint %d: %d bytes, %v", hint, len(got), err)
		}
	}
	rd := bytes.NewReader(body)
	allocs := testing.AllocsPerRun(20, func() {
		rd.Reset(body)
		readAllSized(rd, int64(len(body)), 4<<20)
	})
	if allocs != 1 {
		t.Errorf("exact hint: %v allocations, want 1", allocs)
	}
	boom := errors.New("boom")
	if _, err := readAllSized(io.MultiReader(bytes.NewReader(body), iotest.ErrReader(boom)), 10, 4<<20); !errors.Is(err, boom) {
		t.Errorf("read error lost: %v", err)
	}
}

// The transport's own client sends straight through its http.Transport
// (exchange); what http.Client.Do did stays: the error of a failed
// exchange is worded as Client.Do words it, a URL with user info gets its
// Basic credentials, an https:// URL to a plain HTTP server is told so.
func TestHTTPTransportExchangeIsClientDos(t *testing.T) {
	var auth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	tr := NewHTTPTransport(Config{Policy: &loopbackOnly})
	withUser := strings.Replace(srv.URL, "http://", "http://ann:secret@", 1)
	if _, err := tr.Do(context.Background(), Post{URL: withUser}); err != nil {
		t.Fatal(err)
	}
	if got := auth.Load(); got != "Basic YW5uOnNlY3JldA==" {
		t.Fatalf("Authorization = %q, want ann's Basic credentials", got)
	}
	_, err := tr.Do(context.Background(), Post{URL: strings.Replace(srv.URL, "http://", "https://", 1)})
	if !errors.Is(err, http.ErrSchemeMismatch) {
		t.Fatalf("https to a plain server: err = %v, want %v", err, http.ErrSchemeMismatch)
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	_, err = tr.Do(context.Background(), Post{URL: dead.URL + "/x"})
	req, _ := http.NewRequest(http.MethodPost, dead.URL+"/x", nil)
	_, want := NewClient(Config{Policy: &loopbackOnly}).Do(req)
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Fatalf("a refused connection: err = %v, want Client.Do's %v", err, want)
	}
}

// BenchmarkHTTPTransportDo is one exchange with a loopback server that
// answers a small envelope (#22: allocations per exchange).
func BenchmarkHTTPTransportDo(b *testing.B) {
	ack := []byte(strings.Repeat("<ack/>", 100))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.Write(ack)
	}))
	defer srv.Close()
	tr := NewHTTPTransport(Config{Policy: &loopbackOnly})
	p := Post{URL: srv.URL, ContentType: "text/xml; charset=utf-8", SOAP11: true, SOAPAction: "urn:a", Body: bytes.Repeat([]byte("x"), 1500)}
	b.ReportAllocs()
	for b.Loop() {
		if res, err := tr.Do(context.Background(), p); err != nil || len(res.Body) != len(ack) {
			b.Fatal(res, err)
		}
	}
}

// A gzip response is decoded as net/http decodes one it asked gzip for
// (the request says Accept-Encoding: gzip, once), the response limit
// bounds the decoded bytes (a gzip bomb stops there), an empty gzip body
// is an empty response; a caller's client decodes as it does.
func TestHTTPTransportDecodesGzipResponses(t *testing.T) {
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	ack := []byte(strings.Repeat("<ack/>", 50))
	var mu sync.Mutex
	var accept [][]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		accept = append(accept, r.Header.Values("Accept-Encoding"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/xml")
		w.Header().Set("Content-Encoding", "GZIP")
		switch r.URL.Path {
		case "/bomb":
			w.Write(gz(bytes.Repeat([]byte("x"), 1<<20)))
		case "/empty":
		default:
			w.Write(gz(ack))
		}
	}))
	defer srv.Close()
	own := NewHTTPTransport(Config{Policy: &loopbackOnly, MaxResponseBytes: 4096})
	theirs := NewHTTPTransport(Config{Policy: &loopbackOnly, MaxResponseBytes: 4096, Client: NewClient(Config{})})
	for _, tr := range []*HTTPTransport{own, theirs} {
		for range 2 { // the second one with a pooled reader
			res, err := tr.Do(context.Background(), Post{URL: srv.URL + "/ack", Body: []byte("<env/>")})
			if err != nil || !bytes.Equal(res.Body, ack) || res.ContentType != "text/xml" {
				t.Fatalf("own %v: %q, %v; want the decoded ack", tr.own, res.Body, err)
			}
		}
		if _, err := tr.Do(context.Background(), Post{URL: srv.URL + "/bomb"}); err != errResponseTooLarge {
			t.Fatalf("own %v: a gzip bomb: err = %v, want errResponseTooLarge", tr.own, err)
		}
		if res, err := tr.Do(context.Background(), Post{URL: srv.URL + "/empty"}); err != nil || len(res.Body) != 0 {
			t.Fatalf("own %v: an empty gzip body: %q, %v", tr.own, res.Body, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, a := range accept {
		if len(a) != 1 || a[0] != "gzip" {
			t.Fatalf("request %d: Accept-Encoding %q, want gzip once", i, a)
		}
	}
}
