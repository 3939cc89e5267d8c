package rmp

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/rmp/clock"
	"github.com/wsrkit/wsrkit/rmp/peer"
	"github.com/wsrkit/wsrkit/soap"
	"github.com/wsrkit/wsrkit/store/memstore"
)

func TestQuotaPeer(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/rmp", nil)
	r.RemoteAddr = "10.1.2.3:5555"
	require.Equal(t, "ip:10.1.2.3", quotaPeer(peer.FromRequest(r), clientAddr(r)))
	r.RemoteAddr = "[::1]:80"
	require.Equal(t, "ip:::1", quotaPeer(peer.FromRequest(r), clientAddr(r)))
	cert := &x509.Certificate{Subject: pkix.Name{CommonName: "client-a", Organization: []string{"Example"}}}
	r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert}}}
	require.Equal(t, "tls:CN=client-a", quotaPeer(peer.FromRequest(r), clientAddr(r)), "a verified client certificate names the peer, whatever its address")
	require.Equal(t, "", quotaPeer(peer.Peer{}, ""))
}

func TestNodeBoundsOpenGroupsPerClientAddress(t *testing.T) {
	// #18 item 3: the HTTP layer hands the client's address to the
	// receiving RMP with each request; one address at its quota gets
	// MessageStoreOverflow (D15), another is still served.
	cfg := engineConfig("r")
	cfg.Receiver.MaxGroupsPerPeer = 2
	n, err := Open(NodeConfig{Engine: cfg, Store: memstore.New(memstore.Options{}), Clock: clock.NewFake(epoch)})
	require.NoError(t, err)
	defer n.Close(t.Context())
	post := func(addr string, i int) string {
		body := singletonEnvelope(t, fmt.Sprintf("urn:peer:%d", i), epoch.Add(time.Hour))
		r := httptest.NewRequest(http.MethodPost, "/rmp", bytes.NewReader(body))
		r.Header.Set("Content-Type", soap.ContentTypeSOAP11)
		r.RemoteAddr = addr
		w := httptest.NewRecorder()
		n.ServeHTTP(w, r)
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		return w.Body.String()
	}
	for i := range 2 {
		require.NotContains(t, post("192.0.2.1:1000", i), "MessageStoreOverflow")
	}
	require.Contains(t, post("192.0.2.1:2000", 2), "MessageStoreOverflow", "the same address on another connection")
	require.False(t, strings.Contains(post("192.0.2.2:1000", 3), "MessageStoreOverflow"), "another peer")
}

// clientAddr writes the address as net.ParseIP's String does (#22: without
// its allocations when the address is written so already).
func TestClientAddrIsParseIPs(t *testing.T) {
	for _, remote := range []string{"10.1.2.3:5555", "[::1]:80", "[::ffff:10.1.2.3]:1", "[2001:DB8::0:1]:443",
		"[fe80::1%eth0]:80", "010.1.2.3:80", "host.example:80", "garbage", "[::1]", "1.2.3.4"} {
		r := httptest.NewRequest(http.MethodPost, "/rmp", nil)
		r.RemoteAddr = remote
		host, _, err := net.SplitHostPort(remote)
		if err != nil {
			host = remote
		}
		want := host
		if ip := net.ParseIP(host); ip != nil {
			want = ip.String()
		}
		require.Equal(t, want, clientAddr(r), remote)
	}
	r := httptest.NewRequest(http.MethodPost, "/rmp", nil)
	r.RemoteAddr = "10.1.2.3:5555"
	require.Zero(t, testing.AllocsPerRun(10, func() { clientAddr(r) }))
}
