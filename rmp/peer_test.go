package rmp

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/internal/testpki"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/peer"
	"github.com/wsrkit/wsrkit/soap"
	"github.com/wsrkit/wsrkit/store/memstore"
)

// TestServeInboundTakesThePeerFromTheClientCertificate: the verified
// client certificate of an inbound request reaches the engine as its
// Inbound's Peer (subject CN, SAN URIs and DNS names); a request without
// one carries the zero Peer; a router's SetPeer wins (#19 item 2).
func TestServeInboundTakesThePeerFromTheClientCertificate(t *testing.T) {
	ca := testpki.NewCA(t, "ca")
	n, err := Open(nodeConfig("r", memstore.New(memstore.Options{}), newCollector()))
	require.NoError(t, err)
	defer n.Close(context.Background())
	peers := make(chan peer.Peer, 1)
	var preset *peer.Peer
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		in := ParseRequest(r.Header, body, soap.ParseOptions{})
		if preset != nil {
			in.SetPeer(*preset)
		}
		n.ServeInbound(w, r, in)
		peers <- in.peer
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server(t, "r").TLS},
		ClientCAs: ca.Pool(), ClientAuth: tls.VerifyClientCertIfGiven}
	srv.StartTLS()
	defer srv.Close()

	env, err := soap.AppendRequestEnvelope(nil, soap.SOAP11, &soap.Request{
		MessageID:    soap.MessageID{GroupID: "urn:peer"},
		ExpiryTime:   time.Now().Add(time.Hour).UTC().Truncate(time.Second),
		ReplyPattern: soap.ReplyPattern{Value: group.ReplyResponse},
		Flags:        group.Flags{AckRequested: true},
	}, []byte(`<p:b xmlns:p="urn:p"/>`))
	require.NoError(t, err)
	post := func(leaf *testpki.Leaf) peer.Peer {
		cl := &http.Client{Transport: &http.Transport{TLSClientConfig: testpki.ClientConfig(ca.Pool(), leaf)}}
		resp, err := cl.Post(srv.URL, soap.ContentTypeSOAP11, bytes.NewReader(env))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		return <-peers
	}
	p := post(ca.Client(t, "partner-a", "spiffe://wsrkit.test/partner-a", "urn:partner:a"))
	require.Equal(t, peer.Peer{CommonName: "partner-a", URIs: []string{"spiffe://wsrkit.test/partner-a", "urn:partner:a"}}, p)
	require.Equal(t, "spiffe://wsrkit.test/partner-a", p.ID())
	p = post(ca.Server(t, "gw-b"))
	require.Equal(t, []string{"localhost"}, p.DNSNames)
	require.Equal(t, "dns:localhost", p.ID())
	require.Equal(t, "CN=only", peer.Peer{CommonName: "only"}.ID())
	p = post(nil)
	require.True(t, p.IsZero())
	require.Equal(t, "", p.ID())
	preset = &peer.Peer{URIs: []string{"urn:routed-by-router"}}
	require.Equal(t, *preset, post(ca.Client(t, "partner-a")))
}
