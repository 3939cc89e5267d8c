package gateway

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/internal/testpki"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/soap"
)

// TestParsePeerAllow: one identity a line with its comma-separated
// prefixes as the last field (a CN may hold spaces, * is any groupId,
// # comments); a malformed line is an error naming it.
func TestParsePeerAllow(t *testing.T) {
	m, err := parsePeerAllow([]byte("# partners\n\nurn:partner:a urn:a:,urn:shared:\n  CN=Example Partner B\t*  \ndns:gw-c.example.com urn:c:\n"))
	require.NoError(t, err)
	require.Equal(t, map[string][]string{
		"urn:partner:a":        {"urn:a:", "urn:shared:"},
		"CN=Example Partner B": {""},
		"dns:gw-c.example.com": {"urn:c:"},
	}, m)
	for _, c := range []struct{ file, want string }{
		{"urn:partner:a urn:a:\nurn:partner:b\n", "line 2: want <identity> <prefix>"},
		{"# x\nurn:partner:a urn:a:,,urn:b:\n", "line 2: an empty groupId prefix"},
		{"urn:partner:a urn:a:\n\nurn:partner:a urn:b:\n", `line 3: identity "urn:partner:a" is already listed on line 1`},
	} {
		_, err := parsePeerAllow([]byte(c.file))
		require.ErrorContains(t, err, c.want, "%q", c.file)
	}
}

// TestPeerAllowStartupErrors: a malformed or missing -peer-allow file, or
// one without client certificates, refuses to start with one line.
func TestPeerAllowStartupErrors(t *testing.T) {
	p := newPKI(t)
	bad := filepath.Join(t.TempDir(), "allow")
	require.NoError(t, writeFile(bad, "urn:partner:a urn:a:\nurn:partner:b\n"))
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { p.mtlsConfig(t, "gw", ClientAuthRequire)(c); c.PeerAllowFile = bad }, "-peer-allow " + bad + ": line 2: want <identity>"},
		{func(c *Config) { p.mtlsConfig(t, "gw", ClientAuthRequire)(c); c.PeerAllowFile = bad + ".missing" }, "-peer-allow: open"},
		{func(c *Config) { c.PeerAllowFile = bad }, "-peer-allow needs client certificates"},
	} {
		cfg := loopbackConfig()
		cfg.Listen, cfg.DataDir = "127.0.0.1:0", t.TempDir()
		c.edit(&cfg)
		_, err := Start(cfg, Options{})
		require.ErrorContains(t, err, c.want)
		require.NotContains(t, err.Error(), "\n", "one line")
	}
	c := etcdConfigFor(t)
	c.TLSCert, c.TLSKey, c.TLSClientCA, c.PeerAllowFile = "gw.crt", "gw.key", "ca.crt", bad
	require.ErrorContains(t, c.Validate(), "-peer-allow with -store etcd needs -cluster-ca or -cluster-secret-file")
	c.ClusterSecretFile = "cluster.secret"
	require.NotContains(t, fmt.Sprint(c.Validate()), "-peer-allow")
}

// TestPeerAllow: under -peer-allow an identity not listed gets 403 before
// its body is read; a listed one sends into groupIds under its prefixes
// only (InvalidMessageId outside them) and its PollRequest learns nothing
// of another prefix's group; every refusal is counted; a reload (SIGHUP)
// lets a newly listed identity in, and a malformed file on reload leaves
// the list in force (#19 item 5).
func TestPeerAllow(t *testing.T) {
	p := newPKI(t)
	sink := &deliveriesSink{got: map[string][]string{}}
	deliver := httptest.NewServer(sink)
	t.Cleanup(deliver.Close)
	allow := filepath.Join(t.TempDir(), "peers.allow")
	require.NoError(t, writeFile(allow, "# who may send\nurn:partner:a urn:a:\nurn:partner:b urn:b:,urn:shared:\n"))
	s := startLocal(t, func(c *Config) {
		p.mtlsConfig(t, "gw", ClientAuthRequire)(c)
		c.Deliver, c.PeerAllowFile = deliver.URL, allow
	})
	partnerA := p.ca.Client(t, "partner-a", "urn:partner:a")
	partnerB := p.ca.Client(t, "partner-b", "urn:partner:b")
	partnerC := p.ca.Client(t, "partner-c", "urn:partner:c")
	msg := func(gid string) soap.Headers {
		return soap.Headers{Request: &soap.Request{
			MessageID:    soap.MessageID{GroupID: gid, Sequence: &soap.SequenceNum{Number: 0}},
			ExpiryTime:   time.Now().Add(time.Hour).UTC().Truncate(time.Second),
			ReplyPattern: soap.ReplyPattern{Value: group.ReplyResponse},
			Flags:        group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: true},
		}}
	}
	poll := func(gid string) soap.Headers {
		return soap.Headers{PollRequest: &soap.PollRequest{Refs: []group.PollRef{{GroupID: gid}}}}
	}
	url := s.URL() + "/rmp"

	st, body := postRMP(t, p, partnerA, url, msg("urn:a:orders"))
	require.Equal(t, 200, st)
	require.NotContains(t, body, "fault=", "A in its own prefix")
	_, body = postRMP(t, p, partnerA, url, msg("urn:b:orders"))
	require.Contains(t, body, `fault="wsrm:InvalidMessageId"`, "A outside its prefixes")
	_, body = postRMP(t, p, partnerB, url, msg("urn:shared:x"))
	require.NotContains(t, body, "fault=", "B's second prefix")
	_, body = postRMP(t, p, partnerB, url, poll("urn:a:orders"))
	require.NotContains(t, body, "urn:a:orders", "B's poll learns nothing of A's prefix")
	_, body = postRMP(t, p, partnerA, url, poll("urn:a:orders"))
	require.Contains(t, body, "urn:a:orders", "A's poll is answered")

	// C is not listed: 403 before the body is read. The request announces
	// a body it never sends; an answer proves nobody waited for it.
	conn, err := tls.Dial("tcp", strings.TrimPrefix(s.URL(), "https://"), testpki.ClientConfig(p.ca.Pool(), partnerC))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /rmp HTTP/1.1\r\nHost: gw\r\nContent-Type: text/xml\r\nContent-Length: 1000000\r\n\r\n")
	require.NoError(t, err)
	conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // far below -read-timeout's wait for the body
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	st, _ = postRMP(t, p, partnerC, url, msg("urn:c:orders"))
	require.Equal(t, http.StatusForbidden, st)

	require.Eventually(t, func() bool { return sink.count() == 2 }, 10*time.Second, 20*time.Millisecond)
	sink.mu.Lock()
	require.Equal(t, map[string][]string{"urn:a:orders": {"0"}, "urn:shared:x": {"0"}}, sink.got, "only allowed groups delivered")
	sink.mu.Unlock()
	m := metricsText(t, tlsClient(p.ca, partnerA), s.URL())
	require.Contains(t, m, `wsrkit_refused_total{reason="peer-not-allowed"} 2`)
	require.Contains(t, m, `wsrkit_refused_total{reason="group-not-allowed"} 1`)
	require.Contains(t, m, `wsrkit_refused_total{reason="group-not-allowed-poll"} 1`)

	// A malformed file on reload: the old list stays; a good one lets C in.
	require.NoError(t, writeFile(allow, "urn:partner:c\n"))
	require.ErrorContains(t, s.Reload(), "line 1")
	st, _ = postRMP(t, p, partnerC, url, msg("urn:c:orders"))
	require.Equal(t, http.StatusForbidden, st)
	require.NoError(t, writeFile(allow, "urn:partner:a urn:a:\nurn:partner:c urn:c:\n"))
	require.NoError(t, s.Reload())
	st, body = postRMP(t, p, partnerC, url, msg("urn:c:orders"))
	require.Equal(t, 200, st)
	require.NotContains(t, body, "fault=")
	st, _ = postRMP(t, p, partnerB, url, msg("urn:b:orders"))
	require.Equal(t, http.StatusForbidden, st, "B is no longer listed")
}

// metricsText is GET /metrics through cl.
func metricsText(t *testing.T, cl *http.Client, base string) string {
	t.Helper()
	resp, err := cl.Get(base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
