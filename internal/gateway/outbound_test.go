package gateway

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/soap"
)

// recordingTransport records every RMP POST and sends none.
type recordingTransport struct {
	mu   sync.Mutex
	urls []string
}

func (r *recordingTransport) Do(_ context.Context, p outbound.Post) (outbound.PostResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.urls = append(r.urls, p.URL)
	return outbound.PostResult{}, errors.New("recordingTransport: not sent")
}

// TestGatewayOutboundPolicy: by default a submitted `to` on loopback,
// link-local or the metadata address is 400 with "field": "to", and a
// Callback ReplyTo there is refused with InvalidReplyPattern; with
// -allow-outbound 127.0.0.0/8 loopback is accepted, the metadata address
// still refused. Nothing is POSTed anywhere: the RMP transport only
// records (#18 item 7).
func TestGatewayOutboundPolicy(t *testing.T) {
	for _, allow := range []bool{false, true} {
		tr := &recordingTransport{}
		cfg := DefaultConfig()
		cfg.Listen, cfg.DataDir = "127.0.0.1:0", t.TempDir()
		if allow {
			cfg.AllowOutbound = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		}
		s, err := Start(cfg, Options{Transport: tr})
		require.NoError(t, err)
		for _, c := range []struct {
			to   string
			want int
		}{
			{"http://169.254.169.254/latest/meta-data", 400},
			{"http://[fe80::1]/rmp", 400},
			{"http://[::ffff:169.254.169.254]/rmp", 400},
			{"http://0.0.0.0:8080/rmp", 400},
			{"http://127.0.0.1:1/rmp", map[bool]int{false: 400, true: 202}[allow]},
			{"http://localhost:1/rmp", map[bool]int{false: 400, true: 202}[allow]},
			{"http://10.0.0.1/rmp", 400},
		} {
			var e errorJSON
			st := postJSON(t, s.URL()+"/v1/messages", map[string]any{"to": c.to, "body": "<m/>", "expiresIn": "1m"}, &e)
			require.Equal(t, c.want, st, "allow=%v to=%s: %s", allow, c.to, e.Error)
			if st == 400 {
				require.Equal(t, "to", e.Field, e.Error)
			}
		}

		req := &soap.Request{
			MessageID:    soap.MessageID{GroupID: "urn:ssrf"},
			ExpiryTime:   time.Now().Add(time.Hour).UTC().Truncate(time.Second),
			ReplyPattern: soap.ReplyPattern{Value: group.ReplyCallback, ReplyTo: &soap.ReplyTo{BareURI: "http://169.254.169.254/cb"}},
			Flags:        group.Flags{AckRequested: true},
		}
		env, err := soap.AppendRequestEnvelope(nil, soap.SOAP11, req, []byte(`<m/>`))
		require.NoError(t, err)
		resp, err := http.Post(s.URL()+"/rmp", soap.ContentTypeSOAP11, bytes.NewReader(env))
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Contains(t, string(body), "InvalidReplyPattern")

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		require.NoError(t, s.Shutdown(ctx))
		cancel()
		tr.mu.Lock()
		for _, u := range tr.urls {
			require.Contains(t, []string{"http://127.0.0.1:1/rmp", "http://localhost:1/rmp"}, u, "a refused destination was called")
		}
		tr.mu.Unlock()
	}
}
