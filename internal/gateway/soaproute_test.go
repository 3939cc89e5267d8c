package gateway

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/soap"
)

// routePair is gateway A with route "svc" to gateway B delivering to svc.
func routePair(t *testing.T, svc http.Handler, modA func(*Config)) (a, b *Server) {
	t.Helper()
	s := httptest.NewServer(svc)
	t.Cleanup(s.Close)
	start := func(mod func(*Config)) *Server {
		cfg := DefaultConfig()
		cfg.Listen, cfg.DataDir = "127.0.0.1:0", t.TempDir()
		cfg.RetryInterval, cfg.RetryMaxInterval = 100*time.Millisecond, 200*time.Millisecond
		mod(&cfg)
		srv, err := Start(cfg, Options{})
		require.NoError(t, err)
		t.Cleanup(func() { srv.Shutdown(t.Context()) })
		return srv
	}
	b = start(func(c *Config) { c.Deliver = s.URL })
	a = start(func(c *Config) {
		c.Routes = map[string]string{"svc": b.URL() + "/rmp"}
		if modA != nil {
			modA(c)
		}
	})
	return a, b
}

const route11 = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><r:Place xmlns:r="urn:r"><item>apple</item></r:Place></s:Body></s:Envelope>`

func postRoute(t *testing.T, url, contentType string, hdr map[string]string, body []byte) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// A gzipped SOAP 1.1 request through a route reaches the service with its
// SOAPAction, once; the client gets the service's response and the message
// id; a one-way answer (empty Body) is 202.
func TestRouteRequestResponseAndOneWay(t *testing.T) {
	var mu sync.Mutex
	var actions []string
	a, _ := routePair(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		actions = append(actions, r.Header.Get("SOAPAction"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		if bytes.Contains(body, []byte("Notify")) {
			io.WriteString(w, `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body/></s:Envelope>`)
			return
		}
		io.WriteString(w, `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><r:Placed xmlns:r="urn:r">ok</r:Placed></s:Body></s:Envelope>`)
	}), nil)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte(route11))
	zw.Close()
	st, hdr, body := postRoute(t, a.URL()+"/soap/svc", "text/xml; charset=utf-8",
		map[string]string{"SOAPAction": `"urn:r/Place"`, "Content-Encoding": "gzip"}, zipped.Bytes())
	require.Equal(t, 200, st, body)
	require.Contains(t, body, `>ok</r:Placed>`)
	require.NotEmpty(t, hdr.Get(HeaderMessageID))
	env, err := soap.Parse([]byte(body), soap.ParseOptions{})
	require.NoError(t, err)
	require.Nil(t, env.Response, "the client sees no wsrm header")

	st, hdr, body = postRoute(t, a.URL()+"/soap/svc", "text/xml; charset=utf-8", map[string]string{"SOAPAction": `"urn:r/Notify"`},
		[]byte(`<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><r:Notify xmlns:r="urn:r"/></s:Body></s:Envelope>`))
	require.Equal(t, 202, st, body)
	require.NotEmpty(t, hdr.Get(HeaderMessageID))
	mu.Lock()
	require.Equal(t, []string{`"urn:r/Place"`, `"urn:r/Notify"`}, actions)
	mu.Unlock()
}

// A peer that never acknowledges: the route client gets a Server fault with
// HTTP 504 naming the message after -route-timeout; the message stays
// pending (wsrkit keeps resending).
func TestRouteTimeout(t *testing.T) {
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 503) }))
	defer dead.Close()
	cfg := DefaultConfig()
	cfg.Listen, cfg.DataDir, cfg.RouteTimeout = "127.0.0.1:0", t.TempDir(), 300*time.Millisecond
	cfg.Routes = map[string]string{"svc": dead.URL + "/rmp"}
	a, err := Start(cfg, Options{})
	require.NoError(t, err)
	defer a.Shutdown(t.Context())
	st, hdr, body := postRoute(t, a.URL()+"/soap/svc", "application/soap+xml; charset=utf-8; action=\"urn:r/Place\"", nil,
		[]byte(`<e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope"><e:Body><r:Place xmlns:r="urn:r"/></e:Body></e:Envelope>`))
	require.Equal(t, 504, st, body)
	id := hdr.Get(HeaderMessageID)
	require.NotEmpty(t, id)
	env, err := soap.Parse([]byte(body), soap.ParseOptions{})
	require.NoError(t, err)
	require.NotNil(t, env.Fault)
	require.Equal(t, "Receiver", env.Fault.SOAPCode, "SOAP 1.2 answered in 1.2")
	require.Contains(t, env.Fault.Reason, id)
	var ms MessageStatus
	resp, err := http.Get(a.URL() + "/v1/messages/" + id)
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&ms))
	resp.Body.Close()
	require.Equal(t, "pending", ms.State)
	require.Contains(t, ms.LastError, "HTTP 503")
}

// What a route cannot forward faithfully is refused with the SOAP fault
// that says why.
func TestRouteRefusals(t *testing.T) {
	a, _ := routePair(t, http.NotFoundHandler(), nil)
	cases := []struct {
		name, ct, body string
		status         int
		code           string
	}{
		{"mustUnderstand header", "text/xml; charset=utf-8",
			`<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Header><x:Sec xmlns:x="urn:x" s:mustUnderstand="1"/></s:Header><s:Body><r/></s:Body></s:Envelope>`, 500, "MustUnderstand"},
		{"not SOAP", "text/xml; charset=utf-8", `<a>`, 400, "Client"},
		{"already WS-R", "text/xml; charset=utf-8",
			`<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Header><wsrm:PollRequest xmlns:wsrm="http://docs.oasis-open.org/wsrm/2004/06/ws-reliability-1.1.xsd"/></s:Header><s:Body/></s:Envelope>`, 400, "Client"},
	}
	for _, c := range cases {
		st, _, body := postRoute(t, a.URL()+"/soap/svc", c.ct, nil, []byte(c.body))
		require.Equal(t, c.status, st, "%s: %s", c.name, body)
		env, err := soap.Parse([]byte(body), soap.ParseOptions{})
		require.NoError(t, err, c.name)
		require.NotNil(t, env.Fault, c.name)
		require.Equal(t, c.code, env.Fault.SOAPCode, c.name)
	}
	st, _, _ := postRoute(t, a.URL()+"/soap/nope", "text/xml; charset=utf-8", nil, []byte(route11))
	require.Equal(t, 404, st, "unknown route")
	st, _, _ = postRoute(t, a.URL()+"/soap/svc", "application/json", nil, []byte(route11))
	require.Equal(t, 415, st)
	st, _, body := postRoute(t, a.URL()+"/soap/svc", "text/xml; charset=utf-8", map[string]string{"SOAPAction": "\"urn:a b\""}, []byte(route11))
	require.Equal(t, 400, st, body)
	require.True(t, strings.Contains(body, "action"), body)
}
