package gateway

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/internal/testpki"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/soap"
)

// postRMP POSTs a SOAP 1.1 envelope of h to url over mutual TLS as leaf,
// returning the status and body.
func postRMP(t *testing.T, p *pki, leaf *testpki.Leaf, url string, h soap.Headers) (int, string) {
	t.Helper()
	env, err := soap.AppendEnvelope(nil, soap.SOAP11, h, faults.Extended, nil)
	require.NoError(t, err)
	resp, err := tlsClient(p.ca, leaf).Post(url, soap.ContentTypeSOAP11, bytes.NewReader(env))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// replyAbout is an RM-Reply about number n of groupID: an ack, or a fault.
func replyAbout(groupID string, n uint64, code faults.Code) soap.Headers {
	return soap.Headers{Response: &soap.Response{Replies: []group.Reply{{GroupID: groupID, Sequenced: true,
		Ranges: []group.ReplyRange{{From: n, To: n, Fault: code}}}}}}
}

// TestPeerBoundRepliesAtTheSender ("Peer binding: identity B cannot send
// into, poll, or fault A's group", the sending side; TestPeerBoundGroups
// is the receiving side): gateway S sends an ordered Callback-pattern
// group to partner A over mutual TLS. Partner B, with a certificate from
// the same CA, can neither acknowledge nor fault (GroupAborted) it by a
// callback to S's /rmp: a SOAP Fault, counted in
// wsrkit_refused_total{reason="foreign-peer-reply"}, and the group goes on;
// A's own callbacks acknowledge (#19 item 5).
func TestPeerBoundRepliesAtTheSender(t *testing.T) {
	p := newPKI(t)
	leafA := p.ca.Server(t, "partner-a", "urn:partner:a")
	partnerB := p.ca.Client(t, "partner-b", "urn:partner:b")
	var posts atomic.Int32
	a := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.WriteHeader(http.StatusAccepted) // acks come later, by callback
	}))
	a.TLS = &tls.Config{Certificates: []tls.Certificate{leafA.TLS}, ClientCAs: p.ca.Pool(), ClientAuth: tls.RequireAndVerifyClientCert}
	a.StartTLS()
	t.Cleanup(a.Close)
	sCert, sKey := p.ca.Server(t, "gateway-s", "urn:partner:s").Write(t, p.dir, "s")
	s := startLocal(t, func(c *Config) {
		c.TLSCert, c.TLSKey, c.TLSClientCA, c.TLSClientAuth = sCert, sKey, p.caFile, ClientAuthRequire
		c.PeerCA, c.PeerCert, c.PeerKey = p.caFile, sCert, sKey
	})
	operator := tlsClient(p.ca, p.ca.Client(t, "operator"))
	var ids []string
	var gid string
	for i := range 2 {
		var out struct{ ID, GroupID string }
		require.Equal(t, 202, postJSONWith(t, operator, s.URL()+"/v1/messages", map[string]any{
			"to": a.URL + "/rmp", "group": "orders", "ordered": true, "ack": true, "dupElim": true,
			"replyPattern": "Callback", "body": fmt.Sprintf("<m xmlns='urn:t'>%d</m>", i)}, &out))
		ids, gid = append(ids, out.ID), out.GroupID
	}
	state := func(id string) string {
		var st struct{ State string }
		resp, err := operator.Get(s.URL() + "/v1/messages/" + id)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
		return st.State
	}
	// A acknowledges 0 once S has heard from it (its identity is learnt
	// from S's exchange with it).
	require.Eventually(t, func() bool {
		st, _ := postRMP(t, p, leafA, s.URL()+"/rmp", replyAbout(gid, 0, 0))
		return st == http.StatusAccepted
	}, 10*time.Second, 20*time.Millisecond)
	require.Equal(t, "acknowledged", state(ids[0]))

	// A's own replies sent before S had heard from A were refused and
	// counted too (how many depends on the machine's speed): B's are
	// counted from here.
	const refusedReplies = `wsrkit_refused_total{reason="foreign-peer-reply"}`
	before := sampleOf(t, metricsText(t, operator, s.URL()), refusedReplies)
	for _, code := range []faults.Code{faults.GroupAborted, 0} {
		st, body := postRMP(t, p, partnerB, s.URL()+"/rmp", replyAbout(gid, 1, code))
		require.Equal(t, http.StatusInternalServerError, st, "B's RM-Reply (%v) about A's group", code)
		require.Contains(t, body, "InvalidRequest")
	}
	require.Equal(t, "pending", state(ids[1]), "B neither acknowledged nor faulted A's message")
	require.Equal(t, "acknowledged", state(ids[0]), "B's GroupAborted did not abort the group")

	st, _ := postRMP(t, p, leafA, s.URL()+"/rmp", replyAbout(gid, 1, 0))
	require.Equal(t, http.StatusAccepted, st)
	require.Equal(t, "acknowledged", state(ids[1]))
	require.Positive(t, posts.Load())

	require.Equal(t, before+2, sampleOf(t, metricsText(t, operator, s.URL()), refusedReplies), "B's two replies counted")
}

// sampleOf is the value of series (name and labels) in a /metrics text.
func sampleOf(t *testing.T, metrics, series string) int {
	t.Helper()
	for _, l := range strings.Split(metrics, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			n, err := strconv.Atoi(v)
			require.NoError(t, err, l)
			return n
		}
	}
	t.Fatalf("no sample of %s in %s", series, metrics)
	return 0
}
