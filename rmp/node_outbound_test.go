package rmp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
	"github.com/wsrkit/wsrkit/store/memstore"
)

// recordingTransport records every POST and sends none.
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

func (r *recordingTransport) posted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.urls...)
}

// TestNodeRefusesDestinationsByPolicy: under the default outbound.Policy a
// Callback ReplyTo on the metadata, link-local or loopback address is
// refused with InvalidReplyPattern, a PollRequest ReplyTo there with
// InvalidPollRequest, a submission to a private address with
// ErrInvalidSubmission, and nothing is ever POSTed there (#18 item 7).
func TestNodeRefusesDestinationsByPolicy(t *testing.T) {
	rc := newCollector()
	tr := &recordingTransport{}
	cfg := nodeConfig("r", memstore.New(memstore.Options{}), rc)
	cfg.Outbound, cfg.Transport = outbound.Policy{}, tr
	n, err := Open(cfg)
	require.NoError(t, err)
	defer n.Close(context.Background())
	srv := httptest.NewServer(n)
	defer srv.Close()
	post := func(env []byte) (int, string) {
		resp, err := http.Post(srv.URL, soap.ContentTypeSOAP11, bytes.NewReader(env))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	for i, replyTo := range []string{"http://169.254.169.254/latest/meta-data", "http://[fe80::1]/cb",
		"http://127.0.0.1:9/cb", "http://localhost:9/cb", "http://10.0.0.1/cb"} {
		req := &soap.Request{
			MessageID:  soap.MessageID{GroupID: "urn:cb", Sequence: &soap.SequenceNum{Number: uint64(i)}},
			ExpiryTime: time.Now().Add(time.Hour).UTC().Truncate(time.Second),
			ReplyPattern: soap.ReplyPattern{Value: group.ReplyCallback,
				ReplyTo: &soap.ReplyTo{BareURI: replyTo}},
			Flags: group.Flags{AckRequested: true},
		}
		env, err := soap.AppendRequestEnvelope(nil, soap.SOAP11, req, []byte(`<p:b xmlns:p="urn:p">m</p:b>`))
		require.NoError(t, err)
		st, body := post(env)
		require.Equal(t, http.StatusOK, st, replyTo)
		require.Contains(t, body, "InvalidReplyPattern", replyTo)
	}

	poll, err := soap.AppendEnvelope(nil, soap.SOAP11, soap.Headers{PollRequest: &soap.PollRequest{
		Refs:    []group.PollRef{{GroupID: "urn:cb"}},
		ReplyTo: &soap.ReplyTo{BareURI: "http://169.254.169.254/poll"}}}, faults.Extended, nil)
	require.NoError(t, err)
	st, body := post(poll)
	require.Equal(t, http.StatusInternalServerError, st)
	require.Contains(t, body, "InvalidPollRequest")

	_, err = n.Submit(context.Background(), Submission{
		To: "http://10.1.2.3/rmp", Lifetime: time.Minute, Pattern: group.ReplyResponse, Payload: []byte("<m/>")})
	require.ErrorIs(t, err, sender.ErrInvalidSubmission)
	require.ErrorIs(t, err, outbound.ErrRefused)

	// Give any (wrongly) queued callback time to be attempted.
	time.Sleep(100 * time.Millisecond)
	require.Empty(t, tr.posted(), "a refused destination was called")
	require.Empty(t, rc.delivered, "a refused message was delivered")
}

// Submit remembers the destinations its policy check passed, boundedly,
// and checks a refused one again every time (#22).
func TestSubmitRemembersCheckedDestinations(t *testing.T) {
	n, err := Open(NodeConfig{Engine: engineConfig("s"), Store: memstore.New(memstore.Options{}), Transport: &recordingTransport{}})
	require.NoError(t, err)
	defer n.Close(context.Background())
	for range 2 {
		require.ErrorIs(t, n.checkTo("http://10.1.2.3/rmp"), outbound.ErrRefused)
	}
	for i := range maxCheckedTo + 5 {
		require.NoError(t, n.checkTo(fmt.Sprintf("http://receiver.example/rmp?%d", i)))
	}
	n.checked.mu.Lock()
	defer n.checked.mu.Unlock()
	require.LessOrEqual(t, len(n.checked.ok), maxCheckedTo)
	require.NotContains(t, n.checked.ok, "http://10.1.2.3/rmp")
}
