package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/internal/gateway"
)

// deadEnd answers every RMP POST with 503: nothing is ever acknowledged.
func deadEnd(t *testing.T) *httptest.Server {
	t.Helper()
	d := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }))
	t.Cleanup(d.Close)
	return d
}

// TestServeSubmitBounds: -max-pending and -max-pending-bytes bound the
// unacknowledged submissions; a submit over either is 503 {"error": …}
// and stores nothing (gateway notes "Flags and values"; every limit
// enforced).
func TestServeSubmitBounds(t *testing.T) {
	dead := deadEnd(t)
	a := startRaw(t, "-max-pending", "2", "-max-pending-bytes", "1KiB")
	req := func(body string) map[string]any {
		return map[string]any{"to": dead.URL + "/rmp", "ack": true, "expiresIn": "1h", "body": body}
	}

	st, _, e := submit(t, a.URL(), req("<b>"+strings.Repeat("x", 1100)+"</b>"))
	require.Equal(t, 503, st, "over -max-pending-bytes")
	require.Contains(t, e["error"], "bytes")
	for range 2 {
		st, _, e = submit(t, a.URL(), req("<b/>"))
		require.Equal(t, 202, st, e)
	}
	st, _, e = submit(t, a.URL(), req("<b/>"))
	require.Equal(t, 503, st, "over -max-pending")
	require.NotEmpty(t, e["error"])

	metrics := getText(t, a.URL()+"/metrics")
	require.Contains(t, metrics, "wsrkit_messages_submitted_total 2\n", "a refused submit is not stored")
	require.Contains(t, metrics, "wsrkit_pending_messages 2\n")
}

// TestServeSubmitDuringAbort: 409 comes only while an abort is under way
// for the key's group — here an operator delete whose group-aborted
// outcome the producer has not taken yet because -notify is down (D16,
// D27, gateway notes "Sending side"). Once the outcome is handled, the key
// opens a new group: 202 with a new groupId and number 0.
func TestServeSubmitDuringAbort(t *testing.T) {
	sink := &notifySink{}
	var up atomic.Bool
	ns := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			w.WriteHeader(503)
			return
		}
		sink.ServeHTTP(w, r)
	}))
	defer ns.Close()
	dead := deadEnd(t)
	a := startRaw(t, "-notify", ns.URL, "-retry-interval", "1s", "-retry-jitter", "0")
	req := map[string]any{"to": dead.URL + "/rmp", "group": "k", "ordered": true, "ack": true, "expiresIn": "1h", "body": "<x/>"}

	st, first, e := submit(t, a.URL(), req)
	require.Equal(t, 202, st, e)
	require.Equal(t, 204, do(t, "DELETE", a.URL()+"/v1/groups/"+pathEscape(first.GroupID)+"?role=sender", nil, nil))
	var ms gateway.MessageStatus
	require.Equal(t, 200, do(t, "GET", a.URL()+"/v1/messages/"+first.ID, nil, &ms))
	require.Equal(t, "failed", ms.State)
	require.Equal(t, "group-aborted", ms.Reason)

	st, _, e = submit(t, a.URL(), req)
	require.Equal(t, 409, st, "the abort's outcome is not handled yet: %v", e)
	require.Contains(t, e["error"], "aborted")
	advance(t, a.URL(), "1s") // the notify retry fails again
	st, _, _ = submit(t, a.URL(), req)
	require.Equal(t, 409, st)

	up.Store(true)
	require.Eventually(t, func() bool {
		advance(t, a.URL(), "1s")
		return len(sink.byID(first.ID)) == 1
	}, 5*time.Second, 5*time.Millisecond)
	require.Equal(t, "group-aborted", sink.byID(first.ID)[0].Reason)
	st, next, e := submit(t, a.URL(), req)
	require.Equal(t, 202, st, e)
	require.NotEqual(t, first.GroupID, next.GroupID, "a new group for the key")
	require.NotNil(t, next.Number)
	require.EqualValues(t, 0, *next.Number)
}
