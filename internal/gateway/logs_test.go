package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/faults"
)

// logSink is a log destination safe for the gateways' goroutines.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// bearer adds an admin token to every request of a client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestLogsHoldNoSecrets: two gateways at -log debug over mutual TLS, with
// admin tokens, -peer-allow and -bind-groups-to-peer, go through round
// trips (Response and Callback patterns, deliveries, a destination that
// refuses connections named with a password, a foreign RM-Reply, a
// partner not allowed, a reload, a shutdown); their logs name what
// happened but hold none of the message bodies, tokens, private keys or
// URL passwords (#19 item 7).
func TestLogsHoldNoSecrets(t *testing.T) {
	const (
		marker   = "BODY-MARKER-5e1f9c"
		tokenA   = "token-a-7d2e4b19c0"
		tokenB   = "token-b-91fe33a8d4"
		password = "pw-3c8a1b77"
	)
	p := newPKI(t)
	leafA := p.ca.Server(t, "gateway-a", "urn:partner:a")
	leafB := p.ca.Server(t, "gateway-b", "urn:partner:b")
	aCert, aKey := leafA.Write(t, p.dir, "a")
	bCert, bKey := leafB.Write(t, p.dir, "b")
	dir := t.TempDir()
	allow := filepath.Join(dir, "peers.allow")
	require.NoError(t, writeFile(allow, "urn:partner:a *\n"))
	var logs logSink
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	deliver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(deliver.Close)
	start := func(cert, key, token string, edit func(*Config)) *Server {
		cfg := loopbackConfig()
		cfg.Listen, cfg.DataDir = "127.0.0.1:0", t.TempDir()
		cfg.TLSCert, cfg.TLSKey, cfg.TLSClientCA, cfg.TLSClientAuth = cert, key, p.caFile, ClientAuthRequire
		cfg.PeerCA, cfg.PeerCert, cfg.PeerKey = p.caFile, cert, key
		cfg.AdminTokenFile = tokenFile(t, token)
		cfg.RetryInterval, cfg.RetryMaxInterval = 100*time.Millisecond, 200*time.Millisecond
		edit(&cfg)
		s, err := Start(cfg, Options{Logger: log})
		require.NoError(t, err)
		return s
	}
	b := start(bCert, bKey, tokenB, func(c *Config) { c.Deliver, c.PeerAllowFile = deliver.URL, allow })
	a := start(aCert, aKey, tokenA, func(c *Config) {})
	operator := tlsClient(p.ca, p.ca.Client(t, "operator"))
	operator.Transport = bearer{tokenA, operator.Transport}

	var ids []string
	for i, pattern := range []string{"Response", "Callback"} {
		var out struct{ ID string }
		require.Equal(t, 202, postJSONWith(t, operator, a.URL()+"/v1/messages", map[string]any{
			"to": b.URL() + "/rmp", "group": "g-" + pattern, "ordered": true, "ack": true, "dupElim": true,
			"replyPattern": pattern, "body": fmt.Sprintf("<m xmlns='urn:t'>%s %d</m>", marker, i)}, &out))
		ids = append(ids, out.ID)
	}
	var failing struct{ ID string }
	require.Equal(t, 202, postJSONWith(t, operator, a.URL()+"/v1/messages", map[string]any{
		"to": "https://user:" + password + "@127.0.0.1:1/rmp", "ack": true, "body": "<m xmlns='urn:t'>" + marker + "</m>"}, &failing))
	state := func(id string) (string, int) {
		var st struct {
			State    string
			Attempts int
		}
		resp, err := operator.Get(a.URL() + "/v1/messages/" + id)
		if err != nil {
			return "", 0
		}
		defer resp.Body.Close()
		json.NewDecoder(resp.Body).Decode(&st)
		return st.State, st.Attempts
	}
	require.Eventually(t, func() bool {
		for _, id := range ids {
			if st, _ := state(id); st != "acknowledged" {
				return false
			}
		}
		_, n := state(failing.ID)
		return n >= 2
	}, 30*time.Second, 50*time.Millisecond)

	stranger := p.ca.Client(t, "stranger", "urn:partner:stranger")
	st, _ := postRMP(t, p, stranger, b.URL()+"/rmp", replyAbout("urn:x", 0, 0))
	require.Equal(t, http.StatusForbidden, st, "not in -peer-allow")
	st, _ = postRMP(t, p, stranger, a.URL()+"/rmp", replyAbout("urn:x", 0, faults.GroupAborted))
	require.Equal(t, http.StatusAccepted, st, "an RM-Reply about a group A does not know is ignored (R30)")
	a.ReloadAndLog("test")
	b.ReloadAndLog("test")
	require.NoError(t, a.Shutdown(t.Context()))
	require.NoError(t, b.Shutdown(t.Context()))

	out := logs.String()
	require.Contains(t, out, "level=DEBUG", "debug lines were written")
	require.Contains(t, out, "send failed", "the failing destination was logged")
	require.Contains(t, out, "reloaded")
	for what, secret := range map[string]string{"a message body": marker, "A's admin token": tokenA,
		"B's admin token": tokenB, "a URL password": password} {
		require.NotContains(t, out, secret, what)
	}
	for name, leaf := range map[string][]byte{"A's key": leafA.KeyPEM, "B's key": leafB.KeyPEM} {
		for _, line := range strings.Split(string(leaf), "\n") {
			if len(line) > 20 && !strings.HasPrefix(line, "-----") {
				require.NotContains(t, out, line, name)
			}
		}
	}
}
