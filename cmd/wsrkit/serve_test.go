package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/internal/gateway"
)

// served is a `wsrkit serve` running in-process on a random loopback port.
type served struct {
	*gateway.Server
	stop   chan struct{}
	status chan int
}

// loopbackRanges is the -allow-outbound of test gateways: they and their
// peers live on loopback, which the default policy refuses (#18).
const loopbackRanges = "127.0.0.0/8,::1/128"

// startServe runs serve with args plus -listen 127.0.0.1:0; the test's
// cleanup stops it gracefully unless it was killed.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	s := &served{stop: make(chan struct{}), status: make(chan int, 1)}
	ready := make(chan *gateway.Server, 1)
	var errb bytes.Buffer
	go func() {
		s.status <- serve(append([]string{"-listen", "127.0.0.1:0", "-log", "error", "-allow-outbound", loopbackRanges}, args...), &errb,
			func(srv *gateway.Server) <-chan struct{} { ready <- srv; return s.stop })
		close(ready)
	}()
	srv, ok := <-ready
	if !ok {
		t.Fatalf("serve did not start: %s", errb.String())
	}
	s.Server = srv
	t.Cleanup(func() { s.close() })
	return s
}

var stopOnce sync.Map

func (s *served) close() int {
	if _, done := stopOnce.LoadOrStore(s, true); done {
		return -1
	}
	close(s.stop)
	return <-s.status
}

const (
	ns11 = "http://schemas.xmlsoap.org/soap/envelope/"
	ns12 = "http://www.w3.org/2003/05/soap-envelope"
	wsrm = "http://docs.oasis-open.org/wsrm/2004/06/ws-reliability-1.1.xsd"
)

// envelope writes a reliable message by hand (digest §12.1).
func envelope(soap12 bool, groupID string, number int, last bool, expiry time.Time, body string) []byte {
	ns, p := ns11, "S11"
	if soap12 {
		ns, p = ns12, "S12"
	}
	seq := ""
	flags := "<wsrm:AckRequested/><wsrm:DuplicateElimination/>"
	if number >= 0 {
		seq = fmt.Sprintf(`<wsrm:SequenceNum number="%d"%s/>`, number, map[bool]string{true: ` last="true"`}[last])
		flags += "<wsrm:MessageOrder/>"
	}
	return fmt.Appendf(nil, `<%[1]s:Envelope xmlns:%[1]s="%[2]s" xmlns:wsrm="%[3]s"><%[1]s:Header>`+
		`<wsrm:Request %[1]s:mustUnderstand="1"><wsrm:MessageId groupId="%[4]s">%[5]s</wsrm:MessageId>`+
		`<wsrm:ExpiryTime>%[6]s</wsrm:ExpiryTime><wsrm:ReplyPattern><wsrm:Value>Response</wsrm:Value></wsrm:ReplyPattern>%[7]s`+
		`</wsrm:Request></%[1]s:Header><%[1]s:Body>%[8]s</%[1]s:Body></%[1]s:Envelope>`,
		p, ns, wsrm, groupID, seq, expiry.UTC().Format("2006-01-02T15:04:05Z"), flags, body)
}

func postSOAP(t *testing.T, url string, soap12 bool, env []byte) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/rmp", bytes.NewReader(env))
	require.NoError(t, err)
	if soap12 {
		req.Header.Set("Content-Type", "application/soap+xml; charset=utf-8")
	} else {
		req.Header.Set("Content-Type", "text/xml; charset=utf-8")
		req.Header.Set("SOAPAction", `""`)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// do sends a JSON API request and decodes the answer into out (when set).
func do(t *testing.T, method, url string, in any, out any) int {
	t.Helper()
	var body io.Reader
	if in != nil {
		if s, ok := in.(string); ok {
			body = strings.NewReader(s)
		} else {
			b, err := json.Marshal(in)
			require.NoError(t, err)
			body = bytes.NewReader(b)
		}
	}
	req, err := http.NewRequest(method, url, body)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && len(b) > 0 {
		require.NoError(t, json.Unmarshal(b, out), "body %s", b)
	}
	return resp.StatusCode
}

type inboxList struct {
	Messages []gateway.InboxMessage `json:"messages"`
}

// TestServeRawSOAPInbox drives the RMP endpoint with hand-written SOAP 1.1
// and 1.2 envelopes: an ordered group sent out of order is held (R48) and
// handed to the inbox one message at a time (D14), each next one after the
// previous is deleted; acks come back in the HTTP response (R72).
func TestServeRawSOAPInbox(t *testing.T) {
	s := startServe(t, "-data", t.TempDir())
	exp := time.Now().Add(time.Hour)
	gid := "mid:raw-1@test"

	st, _, resp := postSOAP(t, s.URL(), false, envelope(false, gid, 1, true, exp, "<m>one</m>"))
	require.Equal(t, 200, st, resp)
	require.Contains(t, resp, `<wsrm:ReplyRange from="1" to="1"`, "held but stored: acknowledged (D8)")
	st, ct, resp := postSOAP(t, s.URL(), false, envelope(false, gid, 0, false, exp, "<m>zero</m>"))
	require.Equal(t, 200, st, resp)
	require.Contains(t, ct, "text/xml")
	require.Contains(t, resp, `<wsrm:ReplyRange from="0" to="0"`)

	var in inboxList
	require.Eventually(t, func() bool {
		require.Equal(t, 200, do(t, "GET", s.URL()+"/v1/inbox", nil, &in))
		return len(in.Messages) == 1
	}, 5*time.Second, 10*time.Millisecond)
	m := in.Messages[0]
	require.Equal(t, gid, m.GroupID)
	require.NotNil(t, m.Number)
	require.EqualValues(t, 0, *m.Number)
	require.Contains(t, m.Body, "<m>zero</m>")
	require.NotContains(t, m.Body, "wsrm:Request", "the wsrm headers are removed")

	// The group: received 0..1, last 1.
	var g gateway.GroupJSON
	require.Equal(t, 200, do(t, "GET", s.URL()+"/v1/groups/"+pathEscape(gid)+"?role=receiver", nil, &g))
	require.Equal(t, [][2]uint64{{0, 1}}, g.Ranges)
	require.NotNil(t, g.LastNumber)
	require.EqualValues(t, 1, *g.LastNumber)
	require.EqualValues(t, 1, g.Generation)
	require.Equal(t, "receiver", g.Role)

	require.Equal(t, 404, do(t, "DELETE", s.URL()+"/v1/inbox/nope", nil, nil))
	require.Equal(t, 204, do(t, "DELETE", s.URL()+"/v1/inbox/"+m.ID, nil, nil))
	require.Eventually(t, func() bool {
		do(t, "GET", s.URL()+"/v1/inbox", nil, &in)
		return len(in.Messages) == 1 && *in.Messages[0].Number == 1
	}, 5*time.Second, 10*time.Millisecond)

	// SOAP 1.2 singleton: the answer is SOAP 1.2, the inbox number null.
	st, ct, resp = postSOAP(t, s.URL(), true, envelope(true, "mid:single@test", -1, false, exp, "<m>s</m>"))
	require.Equal(t, 200, st, resp)
	require.Contains(t, ct, "application/soap+xml")
	require.Contains(t, resp, `NonSequenceReply groupId="mid:single@test"`)
	require.Eventually(t, func() bool {
		do(t, "GET", s.URL()+"/v1/inbox", nil, &in)
		for _, m := range in.Messages {
			if m.GroupID == "mid:single@test" {
				return m.Number == nil && strings.Contains(m.Body, ns12)
			}
		}
		return false
	}, 5*time.Second, 10*time.Millisecond)

	// A duplicate is recognised and counted.
	st, _, _ = postSOAP(t, s.URL(), true, envelope(true, "mid:single@test", -1, false, exp, "<m>s</m>"))
	require.Equal(t, 200, st)
	metrics := getText(t, s.URL()+"/metrics")
	require.Contains(t, metrics, "wsrkit_duplicates_total 1\n")
	require.Contains(t, metrics, "wsrkit_messages_accepted_total 3\n")
	require.Contains(t, metrics, `wsrkit_open_groups{role="receiver"} 2`)

	// Garbage is a SOAP fault, an oversized body 413.
	st, _, resp = postSOAP(t, s.URL(), false, []byte("<nope"))
	require.Equal(t, 500, st, resp)
	require.Contains(t, resp, "Fault")
	require.Equal(t, 200, do(t, "GET", s.URL()+"/healthz", nil, nil))
	require.Equal(t, 404, do(t, "GET", s.URL()+"/v1/clock", nil, nil), "no fake clock")
	require.Equal(t, 0, s.close(), "graceful shutdown")
}

func getText(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, 200, resp.StatusCode)
	return string(b)
}

func pathEscape(s string) string {
	return strings.NewReplacer("%", "%25", "/", "%2F", "?", "%3F", "#", "%23").Replace(s)
}

func TestServeBodyLimit(t *testing.T) {
	s := startServe(t, "-data", t.TempDir(), "-max-body", "1KiB")
	big := strings.Repeat("x", 2048)
	st, _, _ := postSOAP(t, s.URL(), false, envelope(false, "mid:big@test", 0, false, time.Now().Add(time.Hour), "<m>"+big+"</m>"))
	require.Equal(t, 413, st)
	require.Equal(t, 413, do(t, "POST", s.URL()+"/v1/messages", `{"to":"http://x/rmp","body":"`+big+`"}`, nil))
}

// notifySink collects -notify POSTs.
type notifySink struct {
	mu  sync.Mutex
	got []gateway.OutcomeJSON
}

func (n *notifySink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var o gateway.OutcomeJSON
	if err := json.NewDecoder(r.Body).Decode(&o); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	n.mu.Lock()
	n.got = append(n.got, o)
	n.mu.Unlock()
	w.WriteHeader(204)
}

func (n *notifySink) byID(id string) []gateway.OutcomeJSON {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []gateway.OutcomeJSON
	for _, o := range n.got {
		if o.ID == id {
			out = append(out, o)
		}
	}
	return out
}

func submit(t *testing.T, base string, req map[string]any) (int, gateway.SubmitAnswer, map[string]string) {
	t.Helper()
	var raw json.RawMessage
	st := do(t, "POST", base+"/v1/messages", req, &raw)
	var a gateway.SubmitAnswer
	var e map[string]string
	if st == 202 {
		require.NoError(t, json.Unmarshal(raw, &a))
	} else {
		require.NoError(t, json.Unmarshal(raw, &e))
	}
	return st, a, e
}

// TestServeJSONEndToEnd sends through the JSON API of one gateway to the
// RMP endpoint of another: acks come back, outcomes are notified once, the
// message status and group listings follow, and bad input is a 400 naming
// the field.
func TestServeJSONEndToEnd(t *testing.T) {
	sink := &notifySink{}
	ns := httptest.NewServer(sink)
	defer ns.Close()
	b := startServe(t, "-data", t.TempDir())
	a := startServe(t, "-data", t.TempDir(), "-notify", ns.URL, "-retry-interval", "200ms")
	to := b.URL() + "/rmp"

	var ids []string
	for i := range 3 {
		st, ans, e := submit(t, a.URL(), map[string]any{"to": to, "group": "orders", "last": i == 2, "ordered": true,
			"ack": true, "dupElim": true, "expiresIn": "60s", "soap": []string{"1.1", "1.2"}[i%2], "body": fmt.Sprintf("<o>%d</o>", i), "unknown": 1})
		require.Equal(t, 202, st, e)
		require.NotNil(t, ans.Number)
		require.EqualValues(t, i, *ans.Number)
		ids = append(ids, ans.ID)
	}
	st, single, _ := submit(t, a.URL(), map[string]any{"to": to, "ack": true, "body": "<s/>", "replyPattern": "Callback"})
	require.Equal(t, 202, st)
	require.Nil(t, single.Number)
	ids = append(ids, single.ID)
	for _, id := range ids {
		require.Eventually(t, func() bool { return len(sink.byID(id)) == 1 }, 10*time.Second, 10*time.Millisecond, id)
		o := sink.byID(id)[0]
		require.Equal(t, "acknowledged", o.Outcome)
		require.Equal(t, "", o.Reason)
		var ms gateway.MessageStatus
		require.Equal(t, 200, do(t, "GET", a.URL()+"/v1/messages/"+id, nil, &ms))
		require.Equal(t, "acknowledged", ms.State)
	}
	require.Equal(t, 404, do(t, "GET", a.URL()+"/v1/messages/bm9wZQ", nil, nil))

	// A new submission with the closed key opens a new group.
	st, next, _ := submit(t, a.URL(), map[string]any{"to": to, "group": "orders", "ordered": true, "ack": true, "body": "<o/>"})
	require.Equal(t, 202, st)
	require.EqualValues(t, 0, *next.Number)
	first, _ := gateway.ParseMessageID(ids[0])
	require.NotEqual(t, first.GroupID, next.GroupID)

	var gl struct {
		Groups []gateway.GroupJSON `json:"groups"`
	}
	require.Equal(t, 200, do(t, "GET", b.URL()+"/v1/groups?role=receiver", nil, &gl))
	found := false
	for _, g := range gl.Groups {
		if g.GroupID == first.GroupID {
			found = true
			require.Equal(t, [][2]uint64{{0, 2}}, g.Ranges)
		}
	}
	require.True(t, found, "%+v", gl.Groups)
	require.Equal(t, 400, do(t, "GET", b.URL()+"/v1/groups?role=both", nil, nil))

	metrics := getText(t, a.URL()+"/metrics")
	require.Regexp(t, `wsrkit_outcomes_total\{outcome="acknowledged",reason=""\} [45]\n`, metrics)
	require.Contains(t, metrics, "wsrkit_messages_submitted_total 5\n")

	// Instants within -max-lifetime [7d]: the cases check R13 and the
	// message's expiry within its group's, not the horizon (fixed years
	// did once the horizon was checked first).
	day := func(n int) string {
		return time.Now().Add(time.Duration(n) * 24 * time.Hour).UTC().Format(time.RFC3339)
	}
	bad := []struct {
		req   map[string]any
		field string
	}{
		{map[string]any{"body": "<x/>"}, "to"},
		{map[string]any{"to": to}, "body"},
		{map[string]any{"to": to, "body": "<x>"}, "body"},
		{map[string]any{"to": to, "body": "<x/>", "replyPattern": "Carrier pigeon"}, "replyPattern"},
		{map[string]any{"to": to, "body": "<x/>", "group": "g", "groupExpiryTime": day(2), "groupMaxIdle": "10m"}, "groupMaxIdle"},
		{map[string]any{"to": to, "body": "<x/>", "group": "g", "expiryTime": day(3), "groupExpiryTime": day(2)}, "expiryTime"},
		{map[string]any{"to": to, "body": "<x/>", "soap": "2.0"}, "soap"},
		{map[string]any{"to": to, "body": "<x/>", "expiresIn": "soon"}, "expiresIn"},
		{map[string]any{"to": to, "body": "<x/>", "last": "yes"}, "last"},
	}
	for _, c := range bad {
		st, _, e := submit(t, a.URL(), c.req)
		require.Equal(t, 400, st, "%v", c.req)
		require.Equal(t, c.field, e["field"], "%v: %v", c.req, e)
		require.NotEmpty(t, e["error"])
	}
	require.Equal(t, 400, do(t, "POST", a.URL()+"/v1/messages", "{not json", nil))
}

// TestServeFakeClockExpiryAndAbort runs the sender on a fake clock towards
// a destination that never acknowledges: moving the clock past ExpiryTime
// fails the message (expired), and deleting an open group fails its
// messages (group-aborted), each notified once.
func TestServeFakeClockExpiryAndAbort(t *testing.T) {
	sink := &notifySink{}
	ns := httptest.NewServer(sink)
	defer ns.Close()
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }))
	defer dead.Close()
	start := "2030-01-02T03:04:05.123456789Z"
	a := startServe(t, "-data", t.TempDir(), "-notify", dead.URL+"/unused", "-fake-clock", "-fake-clock-start", start)
	_ = a
	// The notify URL above refuses: outcomes are retried on the fake clock.
	// Use a second instance with the sink for the checks below.
	s := startServe(t, "-data", t.TempDir(), "-notify", ns.URL, "-fake-clock", "-fake-clock-start", start)

	var c gateway.ClockAnswer
	require.Equal(t, 200, do(t, "GET", s.URL()+"/v1/clock", nil, &c))
	require.Equal(t, start, c.Now)

	st, m, _ := submit(t, s.URL(), map[string]any{"to": dead.URL + "/rmp", "ack": true, "expiresIn": "30s", "body": "<x/>"})
	require.Equal(t, 202, st)
	st, g1, _ := submit(t, s.URL(), map[string]any{"to": dead.URL + "/rmp", "group": "k", "ordered": true, "ack": true, "expiresIn": "1h", "body": "<x/>"})
	require.Equal(t, 202, st)
	var ms gateway.MessageStatus
	require.Equal(t, 200, do(t, "GET", s.URL()+"/v1/messages/"+m.ID, nil, &ms))
	require.Equal(t, "pending", ms.State)
	require.GreaterOrEqual(t, ms.Attempts, 1, "the first transmission happens at submit")
	var gl struct {
		Groups []gateway.GroupJSON `json:"groups"`
	}
	require.Equal(t, 200, do(t, "GET", s.URL()+"/v1/groups?role=sender", nil, &gl))
	listed := map[string]string{}
	for _, g := range gl.Groups {
		require.Equal(t, "sender", g.Role)
		listed[g.GroupID] = g.State
	}
	require.Equal(t, "open", listed[g1.GroupID], "%+v", gl.Groups)

	require.Equal(t, 200, do(t, "POST", s.URL()+"/v1/clock", map[string]string{"advance": "31s"}, &c))
	require.Equal(t, "2030-01-02T03:04:36.123456789Z", c.Now)
	require.Eventually(t, func() bool { return len(sink.byID(m.ID)) == 1 }, 5*time.Second, 10*time.Millisecond)
	o := sink.byID(m.ID)[0]
	require.Equal(t, "failed", o.Outcome)
	require.Equal(t, "expired", o.Reason)
	require.Equal(t, 200, do(t, "GET", s.URL()+"/v1/messages/"+m.ID, nil, &ms))
	require.Equal(t, "failed", ms.State)
	require.Equal(t, "expired", ms.Reason)

	var g gateway.GroupJSON
	require.Equal(t, 200, do(t, "GET", s.URL()+"/v1/groups/"+pathEscape(g1.GroupID)+"?role=sender", nil, &g))
	require.Equal(t, "open", g.State)
	require.Equal(t, 1, g.Held)
	require.Equal(t, 204, do(t, "DELETE", s.URL()+"/v1/groups/"+pathEscape(g1.GroupID)+"?role=sender", nil, nil))
	require.Eventually(t, func() bool { return len(sink.byID(g1.ID)) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, "group-aborted", sink.byID(g1.ID)[0].Reason)
	require.Equal(t, 404, do(t, "DELETE", s.URL()+"/v1/groups/nope?role=sender", nil, nil))

	require.Equal(t, 400, do(t, "POST", s.URL()+"/v1/clock", map[string]string{"advance": "-1s"}, nil))
	require.Equal(t, 400, do(t, "POST", s.URL()+"/v1/clock", map[string]string{"set": "2000-01-01T00:00:00Z"}, nil))
	require.Equal(t, 200, do(t, "POST", s.URL()+"/v1/clock", map[string]string{"set": "2030-01-03T00:00:00Z"}, &c))
	require.Equal(t, "2030-01-03T00:00:00Z", c.Now)
}

// TestServeKillRestart kills a gateway without any shutdown and restarts
// it on the same data directory: an accepted but unconfirmed message is in
// the inbox again, and a pending submission is resent and acknowledged.
func TestServeKillRestart(t *testing.T) {
	sink := &notifySink{}
	ns := httptest.NewServer(sink)
	defer ns.Close()
	recvDir, sendDir := t.TempDir(), t.TempDir()
	b := startServe(t, "-data", recvDir)
	exp := time.Now().Add(time.Hour)
	st, _, resp := postSOAP(t, b.URL(), false, envelope(false, "mid:crash@test", 0, false, exp, "<m>kept</m>"))
	require.Equal(t, 200, st, resp)
	require.Contains(t, resp, `from="0" to="0"`)

	// The sender's destination is down at first.
	var down sync.Map
	down.Store("down", true)
	var bURL sync.Map
	front := dropProxy(t, func() string { u, _ := bURL.Load("u"); return u.(string) },
		func([]byte) bool { v, _ := down.Load("down"); return v == true })
	a := startServe(t, "-data", sendDir, "-notify", ns.URL, "-fake-clock", "-fake-clock-start", "2030-01-01T00:00:00Z")
	st, m, _ := submit(t, a.URL(), map[string]any{"to": front.URL + "/rmp", "group": "g", "ordered": true, "ack": true, "dupElim": true, "expiresIn": "1h", "body": "<x/>"})
	require.Equal(t, 202, st)

	b.Kill()
	a.Kill()
	stopOnce.Store(b, true)
	stopOnce.Store(a, true)

	// The sender's fake clock runs years ahead of this real-clock
	// receiver, whose -max-lifetime would refuse its ExpiryTimes.
	b2 := startServe(t, "-data", recvDir, "-max-lifetime", "100000h")
	bURL.Store("u", b2.URL())
	var in inboxList
	require.Eventually(t, func() bool {
		do(t, "GET", b2.URL()+"/v1/inbox", nil, &in)
		return len(in.Messages) == 1 && strings.Contains(in.Messages[0].Body, "<m>kept</m>")
	}, 5*time.Second, 10*time.Millisecond)

	a2 := startServe(t, "-data", sendDir, "-notify", ns.URL, "-fake-clock", "-fake-clock-start", "2030-01-01T00:00:01Z")
	var ms gateway.MessageStatus
	require.Equal(t, 200, do(t, "GET", a2.URL()+"/v1/messages/"+m.ID, nil, &ms))
	require.Equal(t, "pending", ms.State)
	down.Store("down", false)
	require.Eventually(t, func() bool {
		do(t, "POST", a2.URL()+"/v1/clock", map[string]string{"advance": "10s"}, nil)
		return len(sink.byID(m.ID)) == 1
	}, 10*time.Second, 20*time.Millisecond)
	require.Equal(t, "acknowledged", sink.byID(m.ID)[0].Outcome)
	require.Eventually(t, func() bool {
		do(t, "GET", b2.URL()+"/v1/inbox", nil, &in)
		return len(in.Messages) == 2
	}, 5*time.Second, 10*time.Millisecond)
}
