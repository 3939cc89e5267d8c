package gateway

import (
	"flag"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/rmp/outbound"
)

// do sends an admin request with an optional bearer token and returns the
// status and the response's WWW-Authenticate.
func do(t *testing.T, method, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(""))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

func tokenFile(t *testing.T, token string) string {
	path := filepath.Join(t.TempDir(), "token")
	require.NoError(t, writeFile(path, token+"\n"))
	return path
}

// TestAdminToken: with -admin-token-file every admin route answers 401
// with WWW-Authenticate without the token or with a wrong one, and serves
// with it; /rmp and /healthz stay public; -metrics-public exempts /metrics;
// the token is re-read on Reload (#19 item 4).
func TestAdminToken(t *testing.T) {
	const tok = "s3cret-admin-token"
	file := tokenFile(t, tok)
	s := startLocal(t, func(c *Config) { c.AdminTokenFile, c.FakeClock = file, true })
	for _, r := range []struct{ method, path string }{
		{"GET", "/v1/groups"}, {"GET", "/v1/inbox"}, {"GET", "/v1/messages/x"}, {"DELETE", "/v1/inbox/x"},
		{"DELETE", "/v1/groups/urn:g"}, {"GET", "/v1/groups/urn:g"}, {"POST", "/v1/messages"},
		{"GET", "/v1/clock"}, {"POST", "/v1/clock"}, {"GET", "/metrics"},
	} {
		st, auth := do(t, r.method, s.URL()+r.path, "")
		require.Equal(t, 401, st, "%s %s without a token", r.method, r.path)
		require.Contains(t, auth, "Bearer")
		st, _ = do(t, r.method, s.URL()+r.path, "wrong-token")
		require.Equal(t, 401, st, "%s %s with a wrong token", r.method, r.path)
		st, _ = do(t, r.method, s.URL()+r.path, tok[:len(tok)-1])
		require.Equal(t, 401, st, "%s %s with a prefix of the token", r.method, r.path)
		st, _ = do(t, r.method, s.URL()+r.path, tok)
		require.NotEqual(t, 401, st, "%s %s with the token", r.method, r.path)
	}
	st, _ := do(t, "GET", s.URL()+"/v1/groups", tok)
	require.Equal(t, 200, st)
	st, _ = do(t, "GET", s.URL()+"/healthz", "")
	require.Equal(t, 200, st)
	st, _ = do(t, "POST", s.URL()+"/rmp", "")
	require.NotEqual(t, 401, st, "partners need no admin token")

	require.NoError(t, writeFile(file, "rotated-token"))
	require.NoError(t, s.Reload())
	st, _ = do(t, "GET", s.URL()+"/v1/groups", tok)
	require.Equal(t, 401, st, "the old token after rotation")
	st, _ = do(t, "GET", s.URL()+"/v1/groups", "rotated-token")
	require.Equal(t, 200, st)
	require.NoError(t, writeFile(file, ""))
	require.Error(t, s.Reload(), "an empty token file is refused")
	st, _ = do(t, "GET", s.URL()+"/v1/groups", "rotated-token")
	require.Equal(t, 200, st, "a failed reload keeps the token")

	require.NoError(t, writeFile(file, tok))
	pub := startLocal(t, func(c *Config) { c.AdminTokenFile, c.MetricsPublic = file, true })
	st, _ = do(t, "GET", pub.URL()+"/metrics", "")
	require.Equal(t, 200, st, "-metrics-public")
	st, _ = do(t, "GET", pub.URL()+"/v1/groups", "")
	require.Equal(t, 401, st)
}

// TestAdminListenSeparatesTheAPI: with -admin-listen the main listener
// answers 404 for /v1/* and /metrics and serves /rmp and /healthz; the
// admin listener serves the admin API (with its token) and not /rmp.
func TestAdminListenSeparatesTheAPI(t *testing.T) {
	const tok = "admin-token"
	s := startLocal(t, func(c *Config) {
		c.AdminListen, c.AdminTokenFile, c.FakeClock = "127.0.0.1:0", tokenFile(t, tok), true
	})
	require.NotEmpty(t, s.AdminURL())
	require.NotEqual(t, s.URL(), s.AdminURL())
	for _, p := range []string{"/v1/groups", "/v1/inbox", "/v1/messages/x", "/v1/clock", "/metrics"} {
		st, _ := do(t, "GET", s.URL()+p, tok)
		require.Equal(t, 404, st, "public %s", p)
		st, _ = do(t, "GET", s.AdminURL()+p, "")
		require.Equal(t, 401, st, "admin %s without the token", p)
	}
	st, _ := do(t, "POST", s.URL()+"/v1/messages", tok)
	require.Equal(t, 404, st, "no submit on the public listener")
	st, _ = do(t, "GET", s.AdminURL()+"/v1/groups", tok)
	require.Equal(t, 200, st)
	st, _ = do(t, "GET", s.AdminURL()+"/healthz", tok)
	require.Equal(t, 200, st)
	st, _ = do(t, "GET", s.URL()+"/healthz", "")
	require.Equal(t, 200, st)
	st, _ = do(t, "POST", s.URL()+"/rmp", "")
	require.Equal(t, 415, st, "the RMP endpoint is public (no content type: 415)")
	st, _ = do(t, "POST", s.AdminURL()+"/rmp", tok)
	require.Equal(t, 404, st)

	open := startLocal(t, func(c *Config) { c.AdminListen = "127.0.0.1:0" })
	st, _ = do(t, "GET", open.AdminURL()+"/v1/groups", "")
	require.Equal(t, 200, st, "a loopback admin listener needs no token")
	// A request marked forwarded between instances reaches no admin route
	// on the public listener of a single gateway (-store pebble).
	req, err := http.NewRequest("GET", open.URL()+"/v1/groups", nil)
	require.NoError(t, err)
	req.Header.Set(HeaderForwardedBy, "intruder")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 404, resp.StatusCode, "forged forward on the public listener")
}

// TestNonLoopbackAdminWithoutTokenRefusesToStart: an admin API reachable
// beyond loopback without -admin-token-file is a configuration error,
// found before anything listens; loopback setups and token-protected ones
// start (#19 item 4, secure by default). Nothing here opens a
// non-loopback socket: Start refuses before listening.
func TestNonLoopbackAdminWithoutTokenRefusesToStart(t *testing.T) {
	check := func(edit func(*Config)) error {
		c := DefaultConfig()
		c.DataDir = t.TempDir()
		edit(&c)
		return c.Validate()
	}
	for _, listen := range []string{":8080", "0.0.0.0:8080", "[::]:8080", "192.0.2.10:8080", "gw.example:8080"} {
		err := check(func(c *Config) { c.Listen = listen })
		require.ErrorContains(t, err, "set -admin-token-file", listen)
		require.NotContains(t, err.Error(), "\n", "one line")
		require.NoError(t, check(func(c *Config) { c.Listen, c.AdminTokenFile = listen, "token" }), listen)
		require.NoError(t, check(func(c *Config) { c.Listen, c.AdminListen = listen, "127.0.0.1:9090" }), listen)
		require.ErrorContains(t, check(func(c *Config) { c.Listen, c.AdminListen = "127.0.0.1:8080", listen }), "-admin-listen")
	}
	for _, listen := range []string{"127.0.0.1:8080", "127.0.0.2:0", "[::1]:8080", "localhost:8080"} {
		require.NoError(t, check(func(c *Config) { c.Listen = listen }), listen)
	}
	cfg := DefaultConfig()
	cfg.Listen, cfg.DataDir = "0.0.0.0:0", t.TempDir()
	_, err := Start(cfg, Options{})
	require.ErrorContains(t, err, "without a token", "Start refuses before it listens")
}

// TestTLSFlagsValidate: the TLS flags go in pairs and name their modes.
func TestTLSFlagsValidate(t *testing.T) {
	for want, edit := range map[string]func(*Config){
		"-tls-cert and -tls-key go together":   func(c *Config) { c.TLSCert = "c.pem" },
		"-peer-cert and -peer-key go together": func(c *Config) { c.PeerKey = "k.pem" },
		"must be none, request or require":     func(c *Config) { c.TLSClientAuth = "optional" },
		"-tls-client-auth require needs -tls-client-ca": func(c *Config) {
			c.TLSCert, c.TLSKey, c.TLSClientAuth = "c", "k", ClientAuthRequire
		},
		"-tls-client-ca needs -tls-cert": func(c *Config) { c.TLSClientCA = "ca.pem" },
	} {
		c := DefaultConfig()
		edit(&c)
		require.ErrorContains(t, c.Validate(), want)
	}
	cfg := DefaultConfig()
	cfg.Listen, cfg.DataDir, cfg.TLSCert, cfg.TLSKey = "127.0.0.1:0", t.TempDir(), "/nonexistent.crt", "/nonexistent.key"
	_, err := Start(cfg, Options{})
	require.ErrorContains(t, err, "-tls-cert/-tls-key")
}

// TestBindGroupsToPeerDefault: -bind-groups-to-peer is on exactly when
// client certificates are required (with -store etcd, when the instances
// authenticate each other), unless set.
func TestBindGroupsToPeerDefault(t *testing.T) {
	parse := func(args ...string) Config {
		c := DefaultConfig()
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		c.RegisterFlags(fs)
		require.NoError(t, fs.Parse(args))
		return c
	}
	tlsArgs := []string{"-tls-cert", "c", "-tls-key", "k", "-tls-client-ca", "ca"}
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{tlsArgs, true}, // require by default with -tls-client-ca
		{append(tlsArgs, "-tls-client-auth", "request"), false},
		{append(tlsArgs, "-tls-client-auth", "request", "-bind-groups-to-peer"), true},
		{append(tlsArgs, "-bind-groups-to-peer=false"), false},
		{append(tlsArgs, "-store", "etcd"), false}, // forwarded requests carry no identity
		// Authenticated instances forward the sender's identity.
		{append(tlsArgs, "-store", "etcd", "-cluster-secret-file", "s"), true},
		{append(tlsArgs, "-store", "etcd", "-cluster-ca", "instances.crt"), true},
	} {
		cfg := parse(c.args...)
		require.Equal(t, c.want, cfg.BindsGroupsToPeer(), "%q", c.args)
		require.Equal(t, c.want, engineConfig(&cfg, "i").Receiver.BindGroupsToPeer, "%q", c.args)
	}
	cfg := parse(append(tlsArgs, "-store", "etcd", "-etcd-endpoints", "127.0.0.1:2379", "-bind-groups-to-peer")...)
	require.ErrorContains(t, cfg.Validate(), "-bind-groups-to-peer with -store etcd needs -cluster-ca or -cluster-secret-file")
}

// TestErrorsMaskURLPasswords: the errors that reach the log about -deliver
// and -notify never carry a password from the URL (#19 item 7).
func TestErrorsMaskURLPasswords(t *testing.T) {
	_, err := serviceAnswer("https://svc:hunter2@svc.example/orders", 503, nil)
	require.ErrorContains(t, err, "svc.example")
	require.NotContains(t, err.Error(), "hunter2")
	require.Equal(t, "https://svc:xxxxx@svc.example/x", outbound.Redact("https://svc:hunter2@svc.example/x"))
}
