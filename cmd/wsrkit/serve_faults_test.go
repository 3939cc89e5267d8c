package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/soap"
)

// clockStart is the fake clock's start in the raw-SOAP tests.
var clockStart = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// pollEnvelope is a SOAP 1.1 PollRequest about numbers from..to of a group
// (digest §12.4, R33).
func pollEnvelope(groupID string, from, to uint64) []byte {
	return fmt.Appendf(nil, `<S11:Envelope xmlns:S11="%s" xmlns:wsrm="%s"><S11:Header>`+
		`<wsrm:PollRequest S11:mustUnderstand="1"><wsrm:RefToMessageIds groupId="%s">`+
		`<wsrm:SequenceNumRange from="%d" to="%d"/></wsrm:RefToMessageIds></wsrm:PollRequest>`+
		`</S11:Header><S11:Body/></S11:Envelope>`, ns11, wsrm, groupID, from, to)
}

// replies posts env to the RMP endpoint and returns the status and, per
// sequence number of groupID, the code of the answer's wsrm:Response (0 =
// acknowledged); nil when the answer has no Response header about the
// group.
func replies(t *testing.T, base string, env []byte, groupID string) (int, map[uint64]faults.Code, string) {
	t.Helper()
	st, _, body := postSOAP(t, base, false, env)
	if body == "" {
		return st, nil, body
	}
	e, err := soap.Parse([]byte(body), soap.ParseOptions{})
	require.NoError(t, err, body)
	if e.Response == nil {
		return st, nil, body
	}
	var out map[uint64]faults.Code
	for _, r := range e.Response.Replies {
		if r.GroupID != groupID {
			continue
		}
		if out == nil {
			out = map[uint64]faults.Code{}
		}
		for _, rr := range r.Ranges {
			for n := rr.From; ; n++ {
				out[n] = rr.Fault
				if n == rr.To {
					break
				}
			}
		}
	}
	return st, out, body
}

func fakeClockArgs() []string {
	return []string{"-data", "", "-fake-clock", "-fake-clock-start", clockStart.Format(time.RFC3339)}
}

// startRaw starts a receiving gateway on the fake clock at clockStart.
func startRaw(t *testing.T, args ...string) *served {
	t.Helper()
	base := fakeClockArgs()
	base[1] = t.TempDir()
	return startServe(t, append(base, args...)...)
}

// TestServeStrictFaults: with -strict-faults (D6) the two codes of the
// resolutions never reach the wire — an expired-on-arrival message (D11)
// gets PermanentProcessingFailure instead of MessageExpired, and an
// out-of-order message that does not fit the ordering buffer (D15)
// MessageProcessingFailure instead of MessageStoreOverflow; without the
// flag the extended codes appear. Answers are read with soap.Parse.
// wsrkit_faults_total keeps the semantic code in either dialect.
func TestServeStrictFaults(t *testing.T) {
	for _, c := range []struct {
		strict             bool
		expired, overflow  faults.Code
		absent, absentFlow string
	}{
		{false, faults.MessageExpired, faults.MessageStoreOverflow, "PermanentProcessingFailure", "MessageProcessingFailure"},
		{true, faults.PermanentProcessingFailure, faults.MessageProcessingFailure, "MessageExpired", "MessageStoreOverflow"},
	} {
		t.Run(fmt.Sprintf("strict=%v", c.strict), func(t *testing.T) {
			args := []string{"-max-held-per-group", "1"}
			if c.strict {
				args = append(args, "-strict-faults")
			}
			b := startRaw(t, args...)

			gid := "mid:expired@test"
			st, r, body := replies(t, b.URL(), envelope(false, gid, 0, false, clockStart.Add(-time.Minute), "<x/>"), gid)
			require.Equal(t, 200, st, body)
			require.Equal(t, map[uint64]faults.Code{0: c.expired}, r, body)
			require.NotContains(t, body, c.absent)
			require.Contains(t, body, `fault="wsrm:`+c.expired.String()+`"`)

			gid = "mid:overflow@test"
			st, r, body = replies(t, b.URL(), envelope(false, gid, 1, false, clockStart.Add(time.Hour), "<x/>"), gid)
			require.Equal(t, 200, st, body)
			require.Equal(t, map[uint64]faults.Code{1: 0}, r, "held and stored: acknowledged (D8)")
			st, r, body = replies(t, b.URL(), envelope(false, gid, 2, false, clockStart.Add(time.Hour), "<x/>"), gid)
			require.Equal(t, 200, st, body)
			require.Equal(t, map[uint64]faults.Code{2: c.overflow}, r, body)
			require.NotContains(t, body, c.absentFlow)
			// The metric counts what happened, whatever the wire dialect: its
			// code label is the semantic code (gateway notes, D6).
			metrics := getText(t, b.URL()+"/metrics")
			require.Contains(t, metrics, `wsrkit_faults_total{code="MessageExpired",direction="sent"} 1`+"\n")
			require.Contains(t, metrics, `wsrkit_faults_total{code="MessageStoreOverflow",direction="sent"} 1`+"\n")
		})
	}
}

// TestServeFaultAfterAckUnderResponse: D13 through the gateway. A held
// message acknowledged at once (D8) expires while held (D12); the ordered
// group can no longer deliver it (D14), so its MessageExpired fault is
// kept for the sender: a message of another group does not carry it (the
// gateway notes read "the next reliable message of the same group"), a
// PollRequest naming the group is answered with it (R77), and it rides on
// the HTTP response of the group's next reliable message (same groupId,
// new generation, D24) next to that message's own ack.
func TestServeFaultAfterAckUnderResponse(t *testing.T) {
	b := startRaw(t)
	gid := "mid:late-fault@test"
	st, r, body := replies(t, b.URL(), envelope(false, gid, 1, false, clockStart.Add(10*time.Second), "<x/>"), gid)
	require.Equal(t, 200, st, body)
	require.Equal(t, map[uint64]faults.Code{1: 0}, r, "held and stored: acknowledged (D8)")
	metrics := getText(t, b.URL()+"/metrics")
	require.Contains(t, metrics, "wsrkit_held_messages 1\n")

	advance(t, b.URL(), "11s") // ExpiryTime of #1 passed while held
	metrics = getText(t, b.URL()+"/metrics")
	require.Contains(t, metrics, "wsrkit_held_messages 0\n")
	require.Contains(t, metrics, "wsrkit_messages_discarded_total 1\n")
	require.Contains(t, metrics, `wsrkit_faults_total{code="MessageExpired",direction="sent"} 1`+"\n")

	other := "mid:other@test"
	st, r, body = replies(t, b.URL(), envelope(false, other, 0, false, clockStart.Add(time.Hour), "<x/>"), gid)
	require.Equal(t, 200, st, body)
	require.Nil(t, r, "another group's answer carries nothing about %s: %s", gid, body)

	st, r, body = replies(t, b.URL(), pollEnvelope(gid, 0, 1), gid)
	require.Equal(t, 200, st, body)
	require.Equal(t, map[uint64]faults.Code{1: faults.MessageExpired}, r, "the poll answer carries the late fault: %s", body)

	st, r, body = replies(t, b.URL(), envelope(false, gid, 0, false, clockStart.Add(time.Hour), "<x/>"), gid)
	require.Equal(t, 200, st, body)
	require.Equal(t, map[uint64]faults.Code{0: 0, 1: faults.MessageExpired}, r,
		"the next message of the group is acknowledged and carries the fault about #1: %s", body)
}

// TestServeAckOnDelivery: with -ack-on-delivery (D8 option) an ack means
// "taken by the consumer" — for the inbox, confirmed by DELETE (R92). A
// held message under the Response pattern is answered at once without a
// wsrm:Response header (the exchange is never parked; gateway notes), as
// is an in-order message the inbox has not confirmed yet; a poll then
// reports nothing. Once a message is delivered, its ack rides on a later
// RM-Reply: a poll answer, or the response to the group's next message.
func TestServeAckOnDelivery(t *testing.T) {
	b := startRaw(t, "-ack-on-delivery")
	gid := "mid:aod@test"
	exp := clockStart.Add(time.Hour)

	st, r, body := replies(t, b.URL(), envelope(false, gid, 1, false, exp, "<m>1</m>"), gid)
	require.Contains(t, []int{200, 202}, st, body)
	require.Nil(t, r, "held: not acknowledged, no Response header: %q", body)
	st, r, body = replies(t, b.URL(), envelope(false, gid, 0, false, exp, "<m>0</m>"), gid)
	require.Contains(t, []int{200, 202}, st, body)
	require.Nil(t, r, "handed to the inbox but not confirmed: not acknowledged yet: %q", body)
	st, r, body = replies(t, b.URL(), pollEnvelope(gid, 0, 1), gid)
	require.Equal(t, 200, st, body)
	require.Nil(t, r, "nothing delivered, nothing to report (A14): %s", body)

	inboxHead := func(want string) string {
		t.Helper()
		var in inboxList
		require.Eventually(t, func() bool {
			require.Equal(t, 200, do(t, "GET", b.URL()+"/v1/inbox", nil, &in))
			return len(in.Messages) == 1 && strings.Contains(in.Messages[0].Body, want)
		}, 5*time.Second, 5*time.Millisecond, "inbox %+v", in.Messages)
		return in.Messages[0].ID
	}
	require.Equal(t, 204, do(t, "DELETE", b.URL()+"/v1/inbox/"+(inboxHead("<m>0</m>")), nil, nil))
	st, r, body = replies(t, b.URL(), pollEnvelope(gid, 0, 1), gid)
	require.Equal(t, 200, st, body)
	require.Equal(t, map[uint64]faults.Code{0: 0}, r, "#0 delivered, #1 handed out but not confirmed: %s", body)

	require.Equal(t, 204, do(t, "DELETE", b.URL()+"/v1/inbox/"+(inboxHead("<m>1</m>")), nil, nil))
	st, r, body = replies(t, b.URL(), envelope(false, gid, 2, false, exp, "<m>2</m>"), gid)
	require.Equal(t, 200, st, body)
	require.Equal(t, map[uint64]faults.Code{0: 0, 1: 0}, r,
		"the acks of delivered #0 and #1 ride on the next message's RM-Reply; #2 is not yet confirmed: %s", body)
	require.Equal(t, 204, do(t, "DELETE", b.URL()+"/v1/inbox/"+(inboxHead("<m>2</m>")), nil, nil))
	st, r, body = replies(t, b.URL(), pollEnvelope(gid, 0, 2), gid)
	require.Equal(t, 200, st, body)
	require.Equal(t, map[uint64]faults.Code{0: 0, 1: 0, 2: 0}, r, body)
}
