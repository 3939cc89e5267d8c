package gateway

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/internal/testpki"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/soap"
	"github.com/wsrkit/wsrkit/store/etcdstore/etcdtest"
)

// startPair starts two -store etcd instances on one etcd member, edit
// applied to each (by index), and waits until each holds half the shards.
func startPair(t *testing.T, edit func(i int, c *Config)) []*Server {
	t.Helper()
	etcd := etcdtest.StartTB(t, etcdtest.Options{Members: 1})
	var gws []*Server
	for i := range 2 {
		cfg := clusterConfig(t, etcd.Endpoints, fmt.Sprintf("gw%d", i), "")
		edit(i, &cfg)
		s, err := Start(cfg, Options{})
		require.NoError(t, err)
		t.Cleanup(func() { s.Shutdown(t.Context()) })
		gws = append(gws, s)
	}
	require.Eventually(t, func() bool { return len(gws[0].nodes()) == 4 && len(gws[1].nodes()) == 4 }, 20*time.Second, 20*time.Millisecond)
	return gws
}

// startTLSPair is startPair with each instance serving a certificate of
// a CA of the instances, which is their -cluster-ca; edit (when set)
// applies to both.
func startTLSPair(t *testing.T, p *pki, edit func(*Config)) (*testpki.CA, []*Server) {
	inst := testpki.NewCA(t, "wsrkit instances")
	instFile := inst.WriteCA(t, p.dir, "instances.crt")
	return inst, startPair(t, func(i int, c *Config) {
		c.TLSCert, c.TLSKey = inst.Server(t, fmt.Sprintf("gw%d", i)).Write(t, p.dir, fmt.Sprintf("gw%d", i))
		c.ClusterCA = instFile
		if edit != nil {
			edit(c)
		}
	})
}

// foreignGroup is a group id of prefix whose shard gws[1] holds, so that
// gws[0] forwards its messages.
func foreignGroup(t *testing.T, gws []*Server, prefix string) string {
	t.Helper()
	// gw0 reads the holders every -balance-interval: it may not know
	// gw1's latest claims yet.
	var gid string
	require.Eventually(t, func() bool {
		for k := range 200 {
			gid = prefix + strconv.Itoa(k)
			if n, url := gws[0].routeShard(gws[0].shardOf(gid)); n == nil && url == gws[1].place.(*cluster).self {
				return true
			}
		}
		return false
	}, 10*time.Second, 20*time.Millisecond, "no group id of a shard gw1 holds")
	return gid
}

// postMessage POSTs reliable message n of group gid to url with cl and
// returns the status and the answer.
func postMessage(t *testing.T, cl *http.Client, url, gid string, n uint64) (int, string) {
	t.Helper()
	h := soap.Headers{Request: &soap.Request{
		MessageID:    soap.MessageID{GroupID: gid, Sequence: &soap.SequenceNum{Number: n}},
		ExpiryTime:   time.Now().Add(time.Hour).UTC().Truncate(time.Second),
		ReplyPattern: soap.ReplyPattern{Value: group.ReplyResponse},
		Flags:        group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: true},
	}}
	env, err := soap.AppendEnvelope(nil, soap.SOAP11, h, faults.Extended, []byte(`<m xmlns="urn:t"/>`))
	require.NoError(t, err)
	resp, err := cl.Post(url+"/rmp", soap.ContentTypeSOAP11, bytes.NewReader(env))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// metricsOf returns the /metrics text of s.
func metricsOf(t *testing.T, cl *http.Client, s *Server) string {
	t.Helper()
	resp, err := cl.Get(s.URL() + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// forwardedReq is a request to url marked forwarded, with extra headers.
func forwardedReq(t *testing.T, method, url string, body []byte, hdr map[string]string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(HeaderForwardedBy, "intruder")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return req
}

// status sends req with cl and returns its status; a refused forward
// must say so (HeaderForwardRefused).
func status(t *testing.T, cl *http.Client, req *http.Request) int {
	t.Helper()
	resp, err := cl.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode == http.StatusForbidden {
		require.Equal(t, "1", resp.Header.Get(HeaderForwardRefused))
	}
	return resp.StatusCode
}

// requireForwarded checks that a message posted to gws[0] for a group of
// gws[1]'s shards was forwarded there and acknowledged.
func requireForwarded(t *testing.T, cl *http.Client, gws []*Server) {
	t.Helper()
	gid := foreignGroup(t, gws, "urn:fwd:g")
	before := gws[0].forwards.Load()
	st, answer := postMessage(t, cl, gws[0].URL(), gid, 0)
	require.Equal(t, 200, st, answer)
	require.Contains(t, answer, gid)
	require.NotContains(t, answer, "fault=", answer)
	require.Greater(t, gws[0].forwards.Load(), before, "gw0 forwarded the message")
	require.Eventually(t, func() bool { return len(gws[1].inbox.list()) == 1 }, 10*time.Second, 20*time.Millisecond, "gw1 took it")
}

// TestForwardingSignedWithClusterSecret: instances sharing
// -cluster-secret-file forward to each other; a request marked forwarded
// without a signature, with another key's, with a stale time or with a
// body other than the one signed is refused 403 and counted in
// wsrkit_refused_total{reason="forward-unauthenticated"}; one signed with
// the key is served (#19 item 6).
func TestForwardingSignedWithClusterSecret(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "cluster.secret")
	require.NoError(t, os.WriteFile(secret, []byte("0123456789abcdef0123456789abcdef\n"), 0o600))
	gws := startPair(t, func(_ int, c *Config) { c.ClusterSecretFile = secret })
	cl := &http.Client{Timeout: 10 * time.Second}
	requireForwarded(t, cl, gws)

	key := []byte("0123456789abcdef0123456789abcdef")
	signed := func(method, path string, body []byte, key []byte, at time.Time) *http.Request {
		req := forwardedReq(t, method, gws[1].URL()+path, body, map[string]string{"Content-Type": soap.ContentTypeSOAP11})
		req.Header.Set(HeaderForwardTime, strconv.FormatInt(at.Unix(), 10))
		req.Header.Set(HeaderForwardSignature, hex.EncodeToString(forwardMAC(key, method, req.URL.RequestURI(), req.Header, body)))
		return req
	}
	groups := "/v1/groups?role=receiver"
	require.Equal(t, 403, status(t, cl, forwardedReq(t, "GET", gws[1].URL()+groups, nil, nil)), "no signature")
	require.Equal(t, 403, status(t, cl, signed("GET", groups, nil, []byte("another key, 16 bytes or more"), time.Now())), "another key")
	require.Equal(t, 403, status(t, cl, signed("GET", groups, nil, key, time.Now().Add(-time.Hour))), "stale")
	tampered := signed("POST", "/rmp", []byte("<signed/>"), key, time.Now())
	tampered.Body = io.NopCloser(strings.NewReader("<other/>"))
	tampered.ContentLength = int64(len("<other/>"))
	require.Equal(t, 403, status(t, cl, tampered), "another body")
	require.Contains(t, metricsOf(t, cl, gws[1]), `wsrkit_refused_total{reason="forward-unauthenticated"} 4`)
	require.Equal(t, 200, status(t, cl, signed("GET", groups, nil, key, time.Now())), "signed with the key")
	require.Contains(t, metricsOf(t, cl, gws[1]), `wsrkit_refused_total{reason="forward-unauthenticated"} 4`)
}

// TestForwardingOverMutualTLS: instances with -tls-cert from -cluster-ca
// forward to each other over TLS, each presenting its certificate; a
// request marked forwarded from a client without a certificate, or with
// one of another CA, is refused 403; partners (no client certificates
// asked) are served as before (#19 item 6).
func TestForwardingOverMutualTLS(t *testing.T) {
	p := newPKI(t)
	inst, gws := startTLSPair(t, p, nil)
	require.True(t, strings.HasPrefix(gws[0].place.(*cluster).self, "https://"), gws[0].place.(*cluster).self)
	partner := tlsClient(inst, nil) // trusts the instances' certificates, presents none
	requireForwarded(t, partner, gws)

	groups := gws[1].URL() + "/v1/groups?role=receiver"
	require.Equal(t, 403, status(t, partner, forwardedReq(t, "GET", groups, nil, nil)), "no client certificate")
	require.Equal(t, 403, status(t, tlsClient(inst, p.other.Client(t, "stranger")), forwardedReq(t, "GET", groups, nil, nil)), "another CA")
	require.Equal(t, 403, status(t, tlsClient(inst, p.ca.Client(t, "partner")), forwardedReq(t, "GET", groups, nil, nil)), "a partner's CA")
	require.Contains(t, metricsOf(t, partner, gws[1]), `wsrkit_refused_total{reason="forward-unauthenticated"} 3`)
	require.Equal(t, 200, status(t, tlsClient(inst, inst.Client(t, "gw9")), forwardedReq(t, "GET", groups, nil, nil)), "an instance")
	require.Equal(t, 200, status(t, partner, mustReq(t, "GET", groups)), "not forwarded")
}

func mustReq(t *testing.T, method, url string) *http.Request {
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	return req
}

// TestForwardedPeerIdentityBindsGroups: under mutual TLS with partners'
// certificates required and -cluster-ca, -bind-groups-to-peer is on with
// -store etcd: partner A opens a group through an instance that forwards
// it to the shard's holder; partner B, through the same instance, cannot
// send into it, and the holder counts the refusal (#19 items 5, 6).
func TestForwardedPeerIdentityBindsGroups(t *testing.T) {
	p := newPKI(t)
	inst, gws := startTLSPair(t, p, func(c *Config) { c.TLSClientCA = p.caFile })
	require.True(t, gws[0].cfg.BindsGroupsToPeer())
	a := tlsClient(inst, p.ca.Client(t, "partner-a", "urn:partner:a"))
	b := tlsClient(inst, p.ca.Client(t, "partner-b", "urn:partner:b"))
	gid := foreignGroup(t, gws, "urn:a:orders-")
	_, answer := postMessage(t, a, gws[0].URL(), gid, 0)
	require.NotContains(t, answer, "fault=", "A opens the group: %s", answer)
	_, answer = postMessage(t, b, gws[0].URL(), gid, 1)
	require.Contains(t, answer, `fault="wsrm:InvalidMessageId"`, "B into A's group, forwarded")
	_, answer = postMessage(t, a, gws[0].URL(), gid, 1)
	require.NotContains(t, answer, "fault=", "A goes on: %s", answer)
	require.Contains(t, metricsOf(t, a, gws[1]), `wsrkit_refused_total{reason="foreign-peer"} 1`)
	// The ordered group's first message waits in the holder's inbox (the
	// next appears once it is taken).
	require.Eventually(t, func() bool {
		in := gws[1].inbox.list()
		return len(in) == 1 && in[0].GroupID == gid
	}, 10*time.Second, 20*time.Millisecond)
}

// TestClusterSecureDefault: instances that would take forwarded requests
// beyond loopback without -cluster-ca or -cluster-secret-file refuse to
// start with one line naming both; loopback setups need neither.
func TestClusterSecureDefault(t *testing.T) {
	base := func() Config { return etcdConfigFor(t) }
	c := base()
	require.NoError(t, c.Validate(), "loopback")
	c.Listen = ":8081"
	c.AdminTokenFile = "admin.token" // the admin API's own default is not the point here
	err := c.Validate()
	require.ErrorContains(t, err, ":8081 (-listen)")
	require.ErrorContains(t, err, "set -cluster-secret-file FILE")
	require.ErrorContains(t, err, "-cluster-ca FILE with -tls-cert")
	require.NotContains(t, err.Error(), "\n")
	c.ClusterSecretFile = "cluster.secret"
	require.NoError(t, c.Validate())
	c = base()
	c.AdvertiseURL = "http://gw1.example:8081"
	require.ErrorContains(t, c.Validate(), "http://gw1.example:8081 (-advertise-url)")
	c.AdvertiseURL = "http://localhost:8081"
	require.NoError(t, c.Validate())

	c = base()
	c.ClusterCA = "instances.crt"
	require.ErrorContains(t, c.Validate(), "-cluster-ca needs -tls-cert")
	c.TLSCert, c.TLSKey, c.TLSClientCA = "gw.crt", "gw.key", "instances.crt"
	require.ErrorContains(t, c.Validate(), "-cluster-ca must be a CA of the instances only")
	c.TLSClientCA = ""
	c.AdvertiseURL = "http://127.0.0.1:8081"
	require.ErrorContains(t, c.Validate(), "-advertise-url must be https://")
	c = base()
	c.TLSCert, c.TLSKey, c.TLSClientCA, c.ClusterSecretFile = "gw.crt", "gw.key", "partners.crt", "cluster.secret"
	require.ErrorContains(t, c.Validate(), "-tls-client-auth require with -store etcd needs -cluster-ca")
	c.PeerCert, c.PeerKey = "gw-client.crt", "gw-client.key"
	require.NoError(t, c.Validate(), "forwards present -peer-cert")

	c = base()
	on := true
	c.BindGroupsToPeer = &on
	require.ErrorContains(t, c.Validate(), "-bind-groups-to-peer with -store etcd needs -cluster-ca or -cluster-secret-file")
	c.ClusterSecretFile = "cluster.secret"
	require.NoError(t, c.Validate())

	short := filepath.Join(t.TempDir(), "short")
	require.NoError(t, os.WriteFile(short, []byte("tooshort\n"), 0o600))
	c = base()
	c.ClusterSecretFile = short
	_, err = Open(c, Options{})
	require.ErrorContains(t, err, "-cluster-secret-file")
	require.ErrorContains(t, err, "at least 16")
	require.NotContains(t, err.Error(), "tooshort")
}

// TestAdminListenWithEtcd: -admin-listen works with -store etcd, on
// loopback without instance authentication and with -cluster-secret-file:
// an admin request about a group held by the other instance is forwarded
// to its -advertise-url (the main listener, which serves admin routes to
// forwarded requests only), the token checked there too; the main
// listener still answers 404 for /v1/* to anyone else (#19 items 4, 6).
func TestAdminListenWithEtcd(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "cluster.secret")
	require.NoError(t, os.WriteFile(secret, []byte("fedcba9876543210fedcba9876543210"), 0o600))
	const tok = "admin-of-both"
	for _, clusterSecret := range []string{"", secret} {
		t.Run(fmt.Sprintf("secret=%v", clusterSecret != ""), func(t *testing.T) {
			gws := startPair(t, func(_ int, c *Config) {
				c.AdminListen, c.AdminTokenFile, c.ClusterSecretFile = "127.0.0.1:0", tokenFile(t, tok), clusterSecret
			})
			cl := &http.Client{Timeout: 10 * time.Second}
			gid := foreignGroup(t, gws, "urn:admin:g")
			st, answer := postMessage(t, cl, gws[0].URL(), gid, 0)
			require.Equal(t, 200, st, answer)
			require.NotContains(t, answer, "fault=")

			path := "/v1/groups/" + url.PathEscape(gid) + "?role=receiver"
			req := mustReq(t, "GET", gws[0].AdminURL()+path)
			req.Header.Set("Authorization", "Bearer "+tok)
			var gv struct {
				GroupID string `json:"groupId"`
			}
			resp, err := cl.Do(req)
			require.NoError(t, err)
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&gv))
			resp.Body.Close()
			require.Equal(t, 200, resp.StatusCode)
			require.Equal(t, gid, gv.GroupID)
			require.Positive(t, gws[0].forwards.Load())
			code, _ := do(t, "GET", gws[0].AdminURL()+path, "")
			require.Equal(t, 401, code)
			code, _ = do(t, "GET", gws[0].AdminURL()+path, "wrong")
			require.Equal(t, 401, code, "the holder checks the token it was forwarded")
			code, _ = do(t, "GET", gws[1].URL()+path, tok)
			require.Equal(t, 404, code, "the main listener serves no admin route to a request not forwarded")
		})
	}
}

// TestForwardedPeerAllow: -peer-allow with -store etcd and -cluster-ca:
// an instance judges a request it forwards, and the shard's holder the
// forwarded one, by the original sender's identity: partner A's message
// under its prefix is forwarded and taken, one outside it gets
// InvalidMessageId from the holder, partner C (not listed) gets 403 at
// the first instance (#19 items 5, 6).
func TestForwardedPeerAllow(t *testing.T) {
	p := newPKI(t)
	allow := filepath.Join(p.dir, "peers.allow")
	require.NoError(t, writeFile(allow, "urn:partner:a urn:a:\n"))
	inst, gws := startTLSPair(t, p, func(c *Config) { c.TLSClientCA, c.PeerAllowFile = p.caFile, allow })
	a := tlsClient(inst, p.ca.Client(t, "partner-a", "urn:partner:a"))
	c := tlsClient(inst, p.ca.Client(t, "partner-c", "urn:partner:c"))
	gid := foreignGroup(t, gws, "urn:a:orders-")
	st, answer := postMessage(t, a, gws[0].URL(), gid, 0)
	require.Equal(t, 200, st, answer)
	require.NotContains(t, answer, "fault=", "A under its prefix, forwarded: %s", answer)
	other := foreignGroup(t, gws, "urn:b:orders-")
	_, answer = postMessage(t, a, gws[0].URL(), other, 0)
	require.Contains(t, answer, `fault="wsrm:InvalidMessageId"`, "A outside its prefix, refused by the holder")
	st, _ = postMessage(t, c, gws[0].URL(), gid, 1)
	require.Equal(t, http.StatusForbidden, st, "C is not listed")
	require.Contains(t, metricsOf(t, a, gws[1]), `wsrkit_refused_total{reason="group-not-allowed"} 1`)
	require.Contains(t, metricsOf(t, a, gws[0]), `wsrkit_refused_total{reason="peer-not-allowed"} 1`)
	require.Eventually(t, func() bool {
		in := gws[1].inbox.list()
		return len(in) == 1 && in[0].GroupID == gid
	}, 10*time.Second, 20*time.Millisecond, "the holder took A's message")
}
