package main

import (
	"bufio"
	"bytes"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// series reads a Prometheus text exposition into series → value, checking
// the shape on the way: every sample line is `name{labels} integer`, named
// wsrkit_*, announced by its HELP and TYPE lines, and never repeated.
func series(t *testing.T, text string) map[string]uint64 {
	t.Helper()
	sample := regexp.MustCompile(`^(wsrkit_[a-z_]+)(\{[a-z]+="[^"]*"(,[a-z]+="[^"]*")*\})? ([0-9]+)$`)
	out := map[string]uint64{}
	typed := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) >= 4 && f[0] == "#" && f[1] == "TYPE" {
			require.Contains(t, []string{"counter", "gauge"}, f[3], line)
			require.False(t, typed[f[2]], "TYPE twice: %s", line)
			typed[f[2]] = true
			continue
		}
		if strings.HasPrefix(line, "# HELP ") {
			continue
		}
		m := sample.FindStringSubmatch(line)
		require.NotNil(t, m, "not a sample line: %q", line)
		require.True(t, typed[m[1]], "sample before its TYPE: %q", line)
		key := m[1] + m[2]
		_, dup := out[key]
		require.False(t, dup, "series twice: %q", line)
		v, err := strconv.ParseUint(m[4], 10, 64)
		require.NoError(t, err)
		out[key] = v
	}
	return out
}

// TestServeMetricsAfterTraffic drives a sending gateway into a receiving
// one over a lossy link and a few raw posts, then reads GET /metrics from
// both: every required series exists with the value the traffic implies
// (accepted, delivered, duplicates D18, faults by code and direction D6/
// D13, retries D26, outcomes by outcome and reason D27, held R48, open
// groups by role), and the output is deterministic (the same bytes twice,
// labelled series sorted).
func TestServeMetricsAfterTraffic(t *testing.T) {
	sink := &notifySink{}
	ns := httptest.NewServer(sink)
	defer ns.Close()
	b := startRaw(t)
	// The first transmission of every number 0 is lost.
	var mu sync.Mutex
	seen := map[string]bool{}
	p := dropProxy(t, func() string { return b.URL() }, func(body []byte) bool {
		if !dropsNumberZero(body) {
			return false
		}
		rest := body[bytes.Index(body, []byte(`groupId="`))+len(`groupId="`):]
		gid := string(rest[:bytes.IndexByte(rest, '"')])
		mu.Lock()
		defer mu.Unlock()
		first := !seen[gid]
		seen[gid] = true
		return first
	})
	a := startRaw(t, "-notify", ns.URL, "-retry-interval", "1s", "-retry-jitter", "0")
	var mid string
	send := func(key, pattern string, last bool) string {
		st, ans, e := submit(t, a.URL(), map[string]any{"to": p.URL + "/rmp", "group": key, "ordered": true, "ack": true,
			"dupElim": true, "last": last, "expiresIn": "1h", "replyPattern": pattern, "body": "<o/>"})
		require.Equal(t, 202, st, e)
		if key == "m" {
			mid = ans.GroupID
		}
		return ans.ID
	}

	// Group m (Callback): #0 lost, #1 and #2 held and acknowledged, then
	// deleted by the receiver's operator: GroupAborted for #1 and #2 (D13),
	// group-aborted for #0 (R28).
	m := []string{send("m", "Callback", false), send("m", "Callback", false), send("m", "Callback", false)}
	outcomesOf(t, sink, m[2], 1)
	before := series(t, getText(t, b.URL()+"/metrics"))
	require.EqualValues(t, 2, before["wsrkit_held_messages"])
	require.EqualValues(t, 1, before[`wsrkit_open_groups{role="receiver"}`])
	require.Equal(t, 204, do(t, "DELETE", b.URL()+"/v1/groups/"+pathEscape(mid)+"?role=receiver", nil, nil))
	outcomesOf(t, sink, m[0], 1)
	outcomesOf(t, sink, m[2], 2)

	// Group n (Response, closed by last): #0 lost once and resent after
	// the retry interval (one retry), both delivered.
	n := []string{send("n", "Response", false), send("n", "Response", true)}
	outcomesOf(t, sink, n[1], 1) // held and acknowledged before the clock moves
	advance(t, a.URL(), "1s")
	outcomesOf(t, sink, n[0], 1)

	// Raw: a singleton twice (one duplicate, D18), one expired on arrival
	// (D11: MessageExpired).
	exp := clockStart.Add(time.Hour)
	for range 2 {
		st, _, body := postSOAP(t, b.URL(), false, envelope(false, "mid:single@test", -1, false, exp, "<s/>"))
		require.Equal(t, 200, st, body)
	}
	st, _, body := postSOAP(t, b.URL(), false, envelope(false, "mid:late@test", -1, false, clockStart.Add(-time.Second), "<s/>"))
	require.Equal(t, 200, st, body)
	require.Contains(t, body, "MessageExpired")

	// Confirm everything the inbox is handed: n#0, n#1, the singleton.
	confirmed := 0
	require.Eventually(t, func() bool {
		var in inboxList
		do(t, "GET", b.URL()+"/v1/inbox", nil, &in)
		for _, msg := range in.Messages {
			require.Equal(t, 204, do(t, "DELETE", b.URL()+"/v1/inbox/"+msg.ID, nil, nil))
			confirmed++
		}
		return confirmed == 3
	}, 5*time.Second, 5*time.Millisecond)

	// The commit count is the one series that may move without traffic:
	// the last confirm's Taken record is committed lazily, up to
	// LazyCommitDelay later, and may fall between the two scrapes. It
	// only grows; every other byte is the same.
	recv := getText(t, b.URL()+"/metrics")
	again := getText(t, b.URL()+"/metrics")
	const commits = "wsrkit_store_commits_total"
	require.GreaterOrEqual(t, series(t, again)[commits], series(t, recv)[commits])
	require.Positive(t, series(t, recv)[commits])
	require.Equal(t, withoutSeries(recv, commits), withoutSeries(again, commits), "deterministic: the same bytes without traffic in between")
	rs := series(t, recv)
	for k, want := range map[string]uint64{
		"wsrkit_messages_accepted_total":                              5, // m#1, m#2, n#0, n#1, the singleton
		"wsrkit_messages_delivered_total":                             3,
		"wsrkit_messages_discarded_total":                             2, // m#1, m#2
		"wsrkit_duplicates_total":                                     1,
		`wsrkit_faults_total{code="GroupAborted",direction="sent"}`:   2,
		`wsrkit_faults_total{code="MessageExpired",direction="sent"}`: 1,
		"wsrkit_held_messages":                                        0,
		"wsrkit_messages_submitted_total":                             0,
		"wsrkit_retries_total":                                        0,
	} {
		require.Contains(t, rs, k, recv)
		require.Equal(t, want, rs[k], "%s\n%s", k, recv)
	}
	require.Contains(t, rs, `wsrkit_open_groups{role="receiver"}`)
	require.LessOrEqual(t, rs[`wsrkit_open_groups{role="receiver"}`], uint64(2), "n and the singleton at most; m was deleted")
	require.EqualValues(t, 0, rs[`wsrkit_open_groups{role="sender"}`])

	sent := getText(t, a.URL()+"/metrics")
	ss := series(t, sent)
	for k, want := range map[string]uint64{
		"wsrkit_messages_submitted_total":                                5,
		"wsrkit_retries_total":                                           1, // n#0 once; m was aborted before its resend was due
		`wsrkit_faults_total{code="GroupAborted",direction="received"}`:  2,
		`wsrkit_outcomes_total{outcome="acknowledged",reason=""}`:        4, // m#1, m#2, n#0, n#1
		`wsrkit_outcomes_total{outcome="failed",reason="fault"}`:         2,
		`wsrkit_outcomes_total{outcome="failed",reason="group-aborted"}`: 1,
		"wsrkit_pending_messages":                                        0,
		"wsrkit_messages_accepted_total":                                 0,
	} {
		require.Contains(t, ss, k, sent)
		require.Equal(t, want, ss[k], "%s\n%s", k, sent)
	}
	require.Contains(t, ss, `wsrkit_open_groups{role="sender"}`)
	require.LessOrEqual(t, ss[`wsrkit_open_groups{role="sender"}`], uint64(2))

	// Labelled series of one name come out sorted.
	var outcomes []string
	for _, line := range strings.Split(sent, "\n") {
		if strings.HasPrefix(line, "wsrkit_outcomes_total{") {
			outcomes = append(outcomes, line)
		}
	}
	require.Len(t, outcomes, 3)
	require.True(t, slices.IsSorted(outcomes), "%q", outcomes)
}

// withoutSeries is a scrape without the sample lines of one series.
func withoutSeries(scrape, name string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(scrape, "\n") {
		if !strings.HasPrefix(l, name+" ") && !strings.HasPrefix(l, name+"{") {
			b.WriteString(l)
		}
	}
	return b.String()
}
