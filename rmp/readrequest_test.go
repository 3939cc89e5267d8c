package rmp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/httpbody"
	"github.com/wsrkit/wsrkit/soap"
	"github.com/wsrkit/wsrkit/store/memstore"
)

// countingListener counts the bytes its connections read, and them.
type countingListener struct {
	net.Listener
	read, conns *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if l.conns != nil {
		l.conns.Add(1)
	}
	return countingConn{c, l.read}, nil
}

type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// requestEnvelope is a Response-pattern request of group gid carrying body.
func requestEnvelope(t *testing.T, gid string, body []byte) []byte {
	req := &soap.Request{
		MessageID:    soap.MessageID{GroupID: gid},
		ExpiryTime:   time.Now().Add(time.Hour).UTC().Truncate(time.Second),
		ReplyPattern: soap.ReplyPattern{Value: group.ReplyResponse},
		Flags:        group.Flags{AckRequested: true},
	}
	env, err := soap.AppendRequestEnvelope(nil, soap.SOAP11, req, body)
	require.NoError(t, err)
	return env
}

// manyAttributes is n attributes of one start tag: ` a0=""`, ` a1=""`…
func manyAttributes(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, ` a%d=""`, i)
	}
	return b.String()
}

// inBody is a SOAP 1.1 envelope with s as its Body's content.
func inBody(s string) []byte {
	return []byte(`<s:Envelope xmlns:s="` + soap.NamespaceSOAP11 + `"><s:Body>` + s + `</s:Body></s:Envelope>`)
}

// Issue 18, the parse-bomb flood: an envelope past -max-elements, the
// depth or the attribute limit is refused as soon as the limit is crossed
// — its InvalidRequest fault, with Connection: close — after reading a
// small part of it (identity, chunked, gzip, UTF-16); the budget holds
// nothing afterwards and the endpoint serves the next message.
func TestServeHTTPRefusesLimitsWhileReading(t *testing.T) {
	rc := newCollector()
	cfg := nodeConfig("r", memstore.New(memstore.Options{}), rc)
	cfg.MaxBody = 4 << 20
	n, err := Open(cfg)
	require.NoError(t, err)
	defer n.Close(context.Background())
	var read atomic.Int64
	srv := httptest.NewUnstartedServer(n)
	srv.Listener = countingListener{srv.Listener, &read, nil}
	srv.Start()
	defer srv.Close()

	attrs := manyAttributes(300_000)
	elements := inBody(strings.Repeat("<y/>", 900_000))
	cases := []struct {
		name, encoding, contentType string
		body                        []byte
		chunked                     bool
		reason                      string
		wire                        int64 // bytes the server may read at most
	}{
		{"elements", "", soap.ContentTypeSOAP11, elements, false, "more than 10000 elements", 512 << 10},
		{"elements chunked", "", soap.ContentTypeSOAP11, elements, true, "more than 10000 elements", 512 << 10},
		{"elements gzip", "gzip", soap.ContentTypeSOAP11, gzipped(elements), false, "more than 10000 elements", 1 << 20}, // 4 KB on the wire
		{"elements UTF-16", "", "text/xml; charset=utf-16", utf16LE(string(inBody(strings.Repeat("<y/>", 400_000)))), false, "more than 10000 elements", 512 << 10},
		{"depth", "", soap.ContentTypeSOAP11, inBody(strings.Repeat("<a>", 1_000_000)), false, "deeper than 64", 512 << 10},
		{"attributes", "", soap.ContentTypeSOAP11, inBody("<a" + attrs + "/>"), false, "more than 128 attributes", 512 << 10},
	}
	for _, c := range cases {
		require.Less(t, int64(len(c.body)), cfg.MaxBody, c.name)
		before := read.Load()
		var src io.Reader = bytes.NewReader(c.body)
		if c.chunked {
			src = io.MultiReader(src) // no length known: chunked
		}
		req, err := http.NewRequest(http.MethodPost, srv.URL, src)
		require.NoError(t, err)
		req.Header.Set("Content-Type", c.contentType)
		if c.encoding != "" {
			req.Header.Set("Content-Encoding", c.encoding)
		}
		resp, err := srv.Client().Do(req)
		require.NoError(t, err, c.name)
		requireLimitFault(t, resp, c.name, c.reason)
		require.True(t, resp.Close, "%s: Connection: close", c.name)
		// The server read a fraction of the body (it arrives faster than
		// it is read, so some more than the refusal needed is in).
		require.Less(t, read.Load()-before, c.wire, "%s: bytes read of %d", c.name, len(c.body))
	}
	require.Zero(t, n.cfg.Bodies.InUse(), "refused bodies hold nothing")

	resp, err := srv.Client().Post(srv.URL, soap.ContentTypeSOAP11, bytes.NewReader(requestEnvelope(t, "urn:after", []byte("<p/>"))))
	require.NoError(t, err)
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(answer))
	require.Contains(t, string(answer), `groupId="urn:after"`)
}

// Issue 18: a request's body goes back to -max-inflight-bytes once the
// engine has taken it, not once it is answered: a Response-pattern
// request waiting for its business response (R73) from a slow consumer
// holds none of it.
func TestServeHTTPReleasesBodyBeforeAnswer(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	consumer := ConsumerFunc(func(ctx context.Context, d Delivery) ([]byte, error) {
		close(entered)
		<-release
		return []byte(`<b:done xmlns:b="urn:b"/>`), nil
	})
	cfg := nodeConfig("r", memstore.New(memstore.Options{}), newCollector())
	cfg.Consumer = consumer
	n, err := Open(cfg)
	require.NoError(t, err)
	defer n.Close(context.Background())
	srv := httptest.NewServer(n)
	defer srv.Close()
	var unblock sync.Once
	defer unblock.Do(func() { close(release) }) // before the node closes, should the test fail

	done := make(chan string, 1)
	go func() {
		payload := []byte("<p>" + strings.Repeat("x", 64<<10) + "</p>")
		resp, err := http.Post(srv.URL, soap.ContentTypeSOAP11, bytes.NewReader(requestEnvelope(t, "urn:wait", payload)))
		if err != nil {
			done <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- fmt.Sprintf("%d %s", resp.StatusCode, b)
	}()
	select {
	case <-entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the message was not delivered")
	}
	select {
	case a := <-done:
		t.Fatalf("answered before its business response: %s", a)
	default:
	}
	require.Zero(t, n.cfg.Bodies.InUse(), "the waiting request holds no budget")
	unblock.Do(func() { close(release) })
	a := <-done
	require.True(t, strings.HasPrefix(a, "200 "), a)
	require.Contains(t, a, "<b:done", "the answer waited for the business response")
}

// BenchmarkReadRequestParseBomb: the cost of refusing the parse bomb of
// issue 18 (3.6 MB, 900k `<y/>`) read whole and then parsed, as the RMP
// endpoint did, against read with the limits checked while reading.
func BenchmarkReadRequestParseBomb(b *testing.B) {
	bomb := []byte(`<s:Envelope xmlns:s="` + soap.NamespaceSOAP11 + `"><s:Body>` + strings.Repeat("<y/>", 900_000) + `</s:Body></s:Envelope>`)
	lim := httpbody.Limits{MaxBody: 4 << 20, Budget: httpbody.NewBudget(64 << 20)}
	request := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/rmp", bytes.NewReader(bomb))
		r.Header.Set("Content-Type", soap.ContentTypeSOAP11)
		return r
	}
	b.Run("read-then-parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := request()
			body, err := httpbody.Read(httptest.NewRecorder(), r, lim)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := ParseRequest(r.Header, body.Bytes, soap.ParseOptions{}).Envelope(); err == nil {
				b.Fatal("accepted")
			}
			body.Release()
		}
	})
	b.Run("scan-while-reading", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			in, _, err := ReadRequest(httptest.NewRecorder(), request(), lim, soap.ParseOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := in.Envelope(); err == nil {
				b.Fatal("accepted")
			}
		}
	})
}

// The same refusal over HTTP/2: the stream ends with the fault and the
// connection serves the next request (no GOAWAY for a Connection: close).
func TestServeHTTPRefusesLimitsWhileReadingHTTP2(t *testing.T) {
	cfg := nodeConfig("r", memstore.New(memstore.Options{}), newCollector())
	cfg.MaxBody = 4 << 20
	n, err := Open(cfg)
	require.NoError(t, err)
	defer n.Close(context.Background())
	var read, conns atomic.Int64
	srv := httptest.NewUnstartedServer(n)
	srv.Listener = countingListener{srv.Listener, &read, &conns}
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	bomb := []byte(`<s:Envelope xmlns:s="` + soap.NamespaceSOAP11 + `"><s:Body>` + strings.Repeat("<y/>", 900_000) + `</s:Body></s:Envelope>`)
	resp, err := srv.Client().Post(srv.URL, soap.ContentTypeSOAP11, bytes.NewReader(bomb))
	require.NoError(t, err)
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 2, resp.ProtoMajor)
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode, string(answer))
	require.Contains(t, string(answer), "more than 10000 elements")
	require.Less(t, read.Load(), int64(len(bomb)/2), "bytes read of %d", len(bomb))

	resp, err = srv.Client().Post(srv.URL, soap.ContentTypeSOAP11, bytes.NewReader(requestEnvelope(t, "urn:h2", []byte("<p/>"))))
	require.NoError(t, err)
	answer, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(answer))
	require.Equal(t, int64(1), conns.Load(), "one connection served both")
	require.Zero(t, n.cfg.Bodies.InUse())
}

// An envelope shorter than scanAfter is checked by its parse alone
// (#22): past the depth or the attribute limit it gets the same fault,
// with the same reason, as a long one refused while it arrives.
func TestServeHTTPRefusesLimitsOfShortEnvelopes(t *testing.T) {
	n, err := Open(nodeConfig("r", memstore.New(memstore.Options{}), newCollector()))
	require.NoError(t, err)
	defer n.Close(context.Background())
	srv := httptest.NewServer(n)
	defer srv.Close()
	attrs := manyAttributes(200)
	for _, c := range []struct {
		name   string
		body   []byte
		reason string
	}{
		{"depth", inBody(strings.Repeat("<a>", 100)), "deeper than 64"},
		{"attributes", inBody("<a" + attrs + "/>"), "more than 128 attributes"},
	} {
		require.Less(t, len(c.body), scanAfter, c.name)
		resp, err := srv.Client().Post(srv.URL, soap.ContentTypeSOAP11, bytes.NewReader(c.body))
		require.NoError(t, err, c.name)
		requireLimitFault(t, resp, c.name, c.reason)
	}
}

// requireLimitFault reads resp, which must be the InvalidRequest fault
// of a limit, saying reason.
func requireLimitFault(t *testing.T, resp *http.Response, name, reason string) {
	t.Helper()
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode, "%s: %s", name, answer)
	require.Contains(t, string(answer), "InvalidRequest", name)
	require.Contains(t, string(answer), reason, name)
}
