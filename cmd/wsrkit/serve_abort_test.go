package main

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/internal/faultnet"
	"github.com/wsrkit/wsrkit/internal/gateway"
)

// dropProxy forwards RMP POSTs to target()+"/rmp" and answers 503 without
// forwarding those whose body drop accepts (a lost request).
func dropProxy(t *testing.T, target func() string, drop func(body []byte) bool) *httptest.Server {
	t.Helper()
	p := httptest.NewServer(faultnet.Drop(target, drop))
	t.Cleanup(p.Close)
	return p
}

// dropsNumberZero loses every reliable message numbered 0, so that the
// rest of an ordered group is held by the receiver (R48, D14).
func dropsNumberZero(body []byte) bool { return bytes.Contains(body, []byte(`number="0"`)) }

type groupList struct {
	Groups []gateway.GroupJSON `json:"groups"`
}

func listed(t *testing.T, base, role, gid string) (gateway.GroupJSON, bool) {
	t.Helper()
	var gl groupList
	require.Equal(t, 200, do(t, "GET", base+"/v1/groups?role="+role, nil, &gl))
	for _, g := range gl.Groups {
		if g.GroupID == gid {
			return g, true
		}
	}
	return gateway.GroupJSON{}, false
}

func advance(t *testing.T, base, d string) {
	t.Helper()
	require.Equal(t, 200, do(t, "POST", base+"/v1/clock", map[string]string{"advance": d}, nil))
}

// outcomesOf waits until the sink holds n outcomes for id and returns them.
func outcomesOf(t *testing.T, sink *notifySink, id string, n int) []gateway.OutcomeJSON {
	t.Helper()
	require.Eventually(t, func() bool { return len(sink.byID(id)) >= n }, 5*time.Second, 5*time.Millisecond,
		"outcomes of %s: %+v", id, sink.byID(id))
	got := sink.byID(id)
	require.Len(t, got, n, "each outcome is notified once (D27)")
	return got
}

// TestServeReceiverGroupDelete: an operator's DELETE of a receiving group
// answers 204, the group leaves the listing at once, and its held
// messages are discarded with GroupAborted faults that reach a real
// sending gateway under Callback (pushed to ReplyTo) and under Poll
// (answered to the next PollRequest) — D13, R28, R75, gateway notes
// "Receiving side". The sender fails those messages with reason fault /
// GroupAborted after their ack (D27: acknowledged, then failed), and the
// group's never-delivered number 0 with group-aborted (R28, D16).
// PollAfterAck polls the acks in before the delete: the fault about
// numbers acknowledged earlier still reaches the sender by poll (D13).
func TestServeReceiverGroupDelete(t *testing.T) {
	for _, name := range []string{"Callback", "Poll", "PollAfterAck"} {
		t.Run(name, func(t *testing.T) {
			pattern := strings.TrimSuffix(name, "AfterAck")
			ackedFirst := pattern == "Callback" || name == "PollAfterAck"
			sink := &notifySink{}
			ns := httptest.NewServer(sink)
			defer ns.Close()
			start := "2030-01-01T00:00:00Z"
			b := startServe(t, "-data", t.TempDir(), "-fake-clock", "-fake-clock-start", start)
			var bURL atomic.Value
			bURL.Store(b.URL())
			p := dropProxy(t, func() string { return bURL.Load().(string) }, dropsNumberZero)
			// Resends are an hour apart: nothing but the first transmission
			// and the polls reaches the receiver during the test.
			a := startServe(t, "-data", t.TempDir(), "-notify", ns.URL, "-fake-clock", "-fake-clock-start", start,
				"-retry-interval", "1h", "-retry-max-interval", "1h", "-retry-jitter", "0", "-poll-interval", "5s")

			var ids []string
			var gid string
			for range 3 {
				st, ans, e := submit(t, a.URL(), map[string]any{"to": p.URL + "/rmp", "group": "g", "ordered": true, "ack": true,
					"dupElim": true, "expiresIn": "2h", "replyPattern": pattern, "body": "<o/>"})
				require.Equal(t, 202, st, e)
				ids = append(ids, ans.ID)
				gid = ans.GroupID
			}

			// 1 and 2 are held (0 was lost): listed with held 2, ranges 1..2.
			require.Eventually(t, func() bool {
				g, ok := listed(t, b.URL(), "receiver", gid)
				return ok && g.Held == 2
			}, 5*time.Second, 5*time.Millisecond)
			g, _ := listed(t, b.URL(), "receiver", gid)
			require.Equal(t, [][2]uint64{{1, 2}}, g.Ranges)
			if name == "PollAfterAck" {
				advance(t, a.URL(), "5s") // the first poll: 1 and 2 acknowledged (D8)
			}
			if ackedFirst {
				// Held is stored, so acknowledged (D8): pushed to ReplyTo, or
				// answered to the poll.
				outcomesOf(t, sink, ids[1], 1)
				require.Equal(t, "acknowledged", sink.byID(ids[1])[0].Outcome)
			}

			require.Equal(t, 204, do(t, "DELETE", b.URL()+"/v1/groups/"+pathEscape(gid)+"?role=receiver", nil, nil))
			_, still := listed(t, b.URL(), "receiver", gid)
			require.False(t, still, "the deleted group leaves the listing at once")
			require.Equal(t, 404, do(t, "GET", b.URL()+"/v1/groups/"+pathEscape(gid)+"?role=receiver", nil, nil))
			require.Equal(t, 404, do(t, "DELETE", b.URL()+"/v1/groups/"+pathEscape(gid)+"?role=receiver", nil, nil),
				"deleted already")
			require.Equal(t, 404, do(t, "DELETE", b.URL()+"/v1/groups/"+pathEscape("mid:unknown@test")+"?role=receiver", nil, nil))
			metrics := getText(t, b.URL()+"/metrics")
			require.Contains(t, metrics, "wsrkit_held_messages 0\n")
			require.Contains(t, metrics, `wsrkit_faults_total{code="GroupAborted",direction="sent"} 2`+"\n")
			require.Contains(t, metrics, "wsrkit_messages_discarded_total 2\n")

			if name == "Poll" {
				for _, id := range ids {
					require.Empty(t, sink.byID(id), "nothing known before the first poll")
				}
			}
			if pattern == "Poll" {
				// The next PollRequest (R33) after the delete is answered with
				// the discarded messages' GroupAborted faults — also about
				// numbers acknowledged before (D13).
				advance(t, a.URL(), "5s")
			}
			for _, id := range ids[1:] {
				want := 1
				if ackedFirst {
					want = 2 // acknowledged first, then failed (D27)
				}
				got := outcomesOf(t, sink, id, want)
				last := got[len(got)-1]
				require.Equal(t, "failed", last.Outcome, "%+v", got)
				require.Equal(t, "fault", last.Reason)
				require.Equal(t, "GroupAborted", last.Fault)
				var ms gateway.MessageStatus
				require.Equal(t, 200, do(t, "GET", a.URL()+"/v1/messages/"+id, nil, &ms))
				require.Equal(t, "failed", ms.State)
				require.Equal(t, "fault", ms.Reason)
				require.Equal(t, "GroupAborted", ms.Fault)
			}
			got := outcomesOf(t, sink, ids[0], 1)
			require.Equal(t, "failed", got[0].Outcome)
			require.Equal(t, "group-aborted", got[0].Reason, "the rest of the aborted group (R28)")
			require.Equal(t, "", got[0].Fault)
			sg, ok := listed(t, a.URL(), "sender", gid)
			if ok {
				require.Equal(t, "terminated", sg.State)
			}
			require.Contains(t, getText(t, a.URL()+"/metrics"), `wsrkit_faults_total{code="GroupAborted",direction="received"} 2`+"\n")
		})
	}
}
