package gateway

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/outbound"
)

// noNetwork is the fuzzed gateway's transport: a fuzzed ReplyTo or submit
// `to` may name any address, and a test never opens a connection beyond
// loopback, so nothing is sent at all.
type noNetwork struct{}

func (noNetwork) Do(context.Context, outbound.Post) (outbound.PostResult, error) {
	return outbound.PostResult{}, errors.New("fuzz: no network")
}

// fuzzed is the one gateway every FuzzGatewayRMP input of a process is
// sent to (opening a pebble store per input would be most of the cost),
// with small limits.
func fuzzed(f *testing.F) *Gateway {
	cfg := DefaultConfig()
	cfg.DataDir, cfg.PublicURL = f.TempDir(), "http://127.0.0.1:1"
	cfg.MaxBody, cfg.MaxInflightBytes, cfg.MaxElements = 64<<10, 256<<10, 1000
	cfg.FakeClock = true // nothing is resent: only the request's own work
	cfg.Routes = map[string]string{"svc": "http://127.0.0.1:1/rmp"}
	cfg.RouteTimeout = time.Millisecond
	cfg.AwaitHeldResponse = time.Millisecond // a duplicate in the inbox waits for no business response
	g, err := Open(cfg, Options{Transport: noNetwork{}, Client: &http.Client{Transport: failingRoundTripper{}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { g.Close(context.Background()) })
	return g
}

type failingRoundTripper struct{}

func (failingRoundTripper) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("fuzz: no network")
}

// encode applies the wire coding the mode's low bits pick (independent of
// the Content-Encoding header, so that mismatches are fuzzed too).
func encode(body []byte, mode uint8) []byte {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch mode & 3 {
	case 0:
		return body
	case 1:
		w = gzip.NewWriter(&buf)
	case 2:
		w = zlib.NewWriter(&buf)
	case 3:
		w, _ = flate.NewWriter(&buf, flate.BestSpeed)
	}
	w.Write(body)
	w.Close()
	return buf.Bytes()
}

var fuzzPaths = []string{"/rmp", "/v1/messages", "/soap/svc", "/rmp?shard=3"}

// FuzzGatewayRMP drives the whole gateway HTTP handler (issue 18) with
// fuzzed bodies, Content-Type, Content-Encoding and SOAPAction headers, wire
// codings and paths: it never panics, answers every request within 10 s
// with a status the API documents, gives every body's bytes back to the
// -max-inflight-bytes budget once answered, and keeps the heap bounded.
func FuzzGatewayRMP(f *testing.F) {
	env := `<S11:Envelope xmlns:S11="http://schemas.xmlsoap.org/soap/envelope/" xmlns:wsrm="http://docs.oasis-open.org/wsrm/2004/06/ws-reliability-1.1.xsd"><S11:Header><wsrm:Request S11:mustUnderstand="1"><wsrm:MessageId groupId="mid:f@x"><wsrm:SequenceNum number="0"/></wsrm:MessageId><wsrm:ExpiryTime>2099-01-01T00:00:00Z</wsrm:ExpiryTime><wsrm:ReplyPattern><wsrm:Value>Response</wsrm:Value></wsrm:ReplyPattern><wsrm:AckRequested/></wsrm:Request></S11:Header><S11:Body><p:m xmlns:p="urn:p">x</p:m></S11:Body></S11:Envelope>`
	for _, c := range []struct {
		body, ct, enc string
		mode          uint8
	}{
		{env, "text/xml; charset=utf-8", "", 0},
		{env, "text/xml", "gzip", 1},
		{env, "text/xml", "deflate", 2},
		{env, "text/xml", "deflate", 3},
		{env + env, "application/soap+xml; action=\"urn:a\"", "", 0},
		{"\xff\xfe<\x00a\x00/\x00>\x00", "text/xml; charset=utf-16", "", 0},
		{`{"to":"http://127.0.0.1:1/rmp","body":"<a/>"}`, "application/json", "", 4},
		{`{"to":"http://127.0.0.1:1/rmp","body":"</S11:Body><S11:Body>"}`, "application/json", "gzip", 5},
		{`<S11:Envelope xmlns:S11="http://schemas.xmlsoap.org/soap/envelope/"><S11:Body><p:q xmlns:p="urn:p"/></S11:Body></S11:Envelope>`, "text/xml", "", 8},
		{"<a>", "text/xml", "br", 12},
	} {
		f.Add([]byte(c.body), c.ct, c.enc, `""`, c.mode)
	}
	g := fuzzed(f)
	h := g.Handler()
	var n int
	f.Fuzz(func(t *testing.T, body []byte, ct, enc, action string, mode uint8) {
		path := fuzzPaths[int(mode>>2)%len(fuzzPaths)]
		wire := encode(body, mode)
		r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(wire))
		if mode&16 != 0 {
			r.ContentLength = -1 // chunked
		}
		r.Header.Set("Content-Type", ct)
		if enc != "" {
			r.Header.Set("Content-Encoding", enc)
		}
		r.Header.Set("SOAPAction", action)
		w := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(w, r)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer within 10s: %s %q %q", path, ct, enc)
		}
		switch w.Code {
		case 200, 202, 400, 409, 413, 415, 500, 503, 504:
		default:
			t.Fatalf("%s answered %d: %s", path, w.Code, w.Body.String())
		}
		if used := g.bodies.InUse(); used != 0 {
			t.Fatalf("%d bytes of -max-inflight-bytes still held after the answer", used)
		}
		if n++; n%512 == 0 {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > 1<<30 {
				t.Fatalf("heap in use %d MiB", ms.HeapInuse>>20)
			}
		}
	})
}
