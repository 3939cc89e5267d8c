package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/internal/gateway"
)

// TestServeLateFaultUnderResponse (#23; D8, D12, D13, D27, R77): under the
// Response pattern a message acknowledged at accept and held behind a gap
// until it expires reaches -notify as failed (fault MessageExpired) with no
// further traffic from the producer: the sending gateway polls its
// acknowledged numbers and the poll answer carries the fault. Between the
// two gateways a proxy drops every transmission of number 0 (the gap) and
// counts the PollRequests.
func TestServeLateFaultUnderResponse(t *testing.T) {
	sink := &notifySink{}
	ns := httptest.NewServer(sink)
	defer ns.Close()
	b := startRaw(t)
	var polls, faulted atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`SequenceNum number="0"`)) {
			w.WriteHeader(503) // number 0 never arrives: number 1 is held
			return
		}
		req, err := http.NewRequest("POST", b.URL()+"/rmp", bytes.NewReader(body))
		if err != nil {
			w.WriteHeader(500)
			return
		}
		req.Header = r.Header.Clone()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			w.WriteHeader(502)
			return
		}
		ans, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if bytes.Contains(body, []byte("PollRequest")) {
			polls.Add(1)
			if bytes.Contains(ans, []byte("MessageExpired")) {
				faulted.Add(1)
			}
		}
		w.Header().Set("Content-Type", res.Header.Get("Content-Type"))
		w.WriteHeader(res.StatusCode)
		w.Write(ans)
	}))
	defer proxy.Close()
	a := startRaw(t, "-notify", ns.URL, "-poll-interval", "1s", "-poll-interval-max", "4s", "-late-fault-margin", "2s",
		"-retry-interval", "5s", "-retry-jitter", "0")

	req := map[string]any{"to": proxy.URL + "/rmp", "group": "k", "ordered": true, "ack": true, "expiresIn": "20s", "replyPattern": "Response"}
	req["body"] = "<m>0</m>"
	st, m0, e := submit(t, a.URL(), req)
	require.Equal(t, 202, st, e)
	req["body"] = "<m>1</m>"
	st, m1, e := submit(t, a.URL(), req)
	require.Equal(t, 202, st, e)
	require.Eventually(t, func() bool { return len(sink.byID(m1.ID)) == 1 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, "acknowledged", sink.byID(m1.ID)[0].Outcome, "acknowledged at accept (D8)")

	var g gateway.GroupJSON
	require.Equal(t, 200, do(t, "GET", b.URL()+"/v1/groups/"+pathEscape(m1.GroupID)+"?role=receiver", nil, &g))
	require.Equal(t, 1, g.Held, "number 1 held behind the gap: %+v", g)
	var inbox struct {
		Messages []gateway.InboxMessage `json:"messages"`
	}
	require.Equal(t, 200, do(t, "GET", b.URL()+"/v1/inbox", nil, &inbox))
	require.Empty(t, inbox.Messages, "nothing delivered")

	// Past the ExpiryTime on both sides; the producer does nothing more.
	var c gateway.ClockAnswer
	require.Equal(t, 200, do(t, "POST", b.URL()+"/v1/clock", map[string]string{"advance": "21s"}, &c))
	require.Equal(t, 200, do(t, "POST", a.URL()+"/v1/clock", map[string]string{"advance": "21s"}, &c))
	require.Eventually(t, func() bool { return len(sink.byID(m1.ID)) == 2 }, 10*time.Second, 10*time.Millisecond, "late fault notified")
	o := sink.byID(m1.ID)[1]
	require.Equal(t, "failed", o.Outcome)
	require.Equal(t, "fault", o.Reason)
	require.Equal(t, "MessageExpired", o.Fault)
	var ms gateway.MessageStatus
	require.Equal(t, 200, do(t, "GET", a.URL()+"/v1/messages/"+m1.ID, nil, &ms))
	require.Equal(t, "failed", ms.State, "its final outcome is the last one (D27)")
	require.GreaterOrEqual(t, faulted.Load(), int32(1), "the fault came back in a poll answer (%d polls)", polls.Load())
	require.Eventually(t, func() bool { return len(sink.byID(m0.ID)) == 1 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, "failed", sink.byID(m0.ID)[0].Outcome, "number 0 never got through")
}
