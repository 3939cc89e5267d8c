package gateway

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/internal/benchkit"
	"github.com/wsrkit/wsrkit/soap"
)

// postEnvelopes POSTs message n of each group gid to base's /rmp, 8 at a
// time, and requires each answered 200.
func postEnvelopes(t testing.TB, h http.Handler, base string, msgs map[string][]uint64) {
	t.Helper()
	type msg struct {
		gid string
		n   uint64
	}
	var all []msg
	for gid, ns := range msgs {
		for _, n := range ns {
			all = append(all, msg{gid, n})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		return all[i].gid < all[j].gid || (all[i].gid == all[j].gid && all[i].n < all[j].n)
	})
	work := make(chan msg)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []string
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range work {
				status := postEnvelope(h, base, benchkit.Envelope(t, m.gid, m.n))
				if status != http.StatusOK {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("%s#%d: HTTP %d", m.gid, m.n, status))
					mu.Unlock()
				}
			}
		}()
	}
	for _, m := range all {
		work <- m
	}
	close(work)
	wg.Wait()
	require.Empty(t, failed)
}

// postEnvelope POSTs one envelope through h in process, or to base over
// loopback when h is nil.
func postEnvelope(h http.Handler, base string, env []byte) int {
	req, _ := http.NewRequest(http.MethodPost, base+"/rmp", bytes.NewReader(env))
	req.Header.Set("Content-Type", soap.ContentTypeSOAP11)
	req.Header.Set("SOAPAction", `""`)
	if h != nil {
		rec := &statusRecorder{header: http.Header{}}
		h.ServeHTTP(rec, req)
		return rec.status
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// statusRecorder is a ResponseWriter that keeps the status only.
type statusRecorder struct {
	header http.Header
	status int
}

func (r *statusRecorder) Header() http.Header { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = 200
	}
	return len(b), nil
}
func (r *statusRecorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}

// TestGroupsPagingAndFilters: GET /v1/groups without paging parameters
// lists every group as before; with limit the pages, joined by next, are
// the same list in the same order, each group once; state, gap, q and
// sort filter and order on the server; a bad parameter is 400 naming it
// (#21).
func TestGroupsPagingAndFilters(t *testing.T) {
	s := startLocal(t, func(c *Config) {})
	msgs := map[string][]uint64{}
	var gaps []string
	for i := range 230 {
		gid := fmt.Sprintf("urn:page:%03d", i)
		switch {
		case i%10 == 3: // 0 missing: 1 and 2 held behind the gap (R48)
			msgs[gid] = []uint64{1, 2}
			gaps = append(gaps, gid)
		case i%10 == 7: // 1 missing: 2 held, 0 delivered
			msgs[gid] = []uint64{0, 2}
			gaps = append(gaps, gid)
		default:
			msgs[gid] = []uint64{0}
		}
	}
	postEnvelopes(t, nil, s.URL(), msgs)

	var all groupsJSON
	require.Equal(t, 200, getJSON(s.URL()+"/v1/groups", &all))
	require.Len(t, all.Groups, 230)
	require.Equal(t, 230, all.Total)
	require.Nil(t, all.Next, "an unpaged answer is the whole list")
	for i, g := range all.Groups {
		require.Equal(t, fmt.Sprintf("urn:page:%03d", i), g.GroupID, "sorted by group id")
		require.NotNil(t, g.LastActivity)
	}

	var paged []GroupJSON
	after, pages := "", 0
	for {
		var p groupsJSON
		require.Equal(t, 200, getJSON(s.URL()+"/v1/groups?role=receiver&limit=100&after="+url.QueryEscape(after), &p))
		require.Equal(t, 230, p.Total)
		require.LessOrEqual(t, len(p.Groups), 100)
		paged = append(paged, p.Groups...)
		pages++
		if p.Next == nil {
			break
		}
		after = *p.Next
	}
	require.Equal(t, 3, pages)
	require.Equal(t, all.Groups, paged, "the pages join into the whole list")

	var gp groupsJSON
	require.Equal(t, 200, getJSON(s.URL()+"/v1/groups?gap=true&limit=1000", &gp))
	var got []string
	for _, g := range gp.Groups {
		got = append(got, g.GroupID)
	}
	require.Equal(t, gaps, got, "gap=true: exactly the groups missing a number")

	var q groupsJSON
	require.Equal(t, 200, getJSON(s.URL()+"/v1/groups?q=page:01&limit=5", &q))
	require.Equal(t, 10, q.Total, "q is a substring of the group id")
	require.Len(t, q.Groups, 5)
	require.Equal(t, "urn:page:010", q.Groups[0].GroupID)

	var held groupsJSON
	require.Equal(t, 200, getJSON(s.URL()+"/v1/groups?sort=held&limit=60", &held))
	for i, g := range held.Groups {
		// The inbox has not taken number 0 either: the gap groups hold 2,
		// the others 1 (R47, R48).
		want := 1
		if i < len(gaps) {
			want = 2
		}
		require.Equal(t, want, g.Held, "sort=held: row %d %s", i, g.GroupID)
		if i > 0 && g.Held == held.Groups[i-1].Held {
			require.Less(t, held.Groups[i-1].GroupID, g.GroupID, "ties by group id")
		}
	}

	var open, term groupsJSON
	require.Equal(t, 200, getJSON(s.URL()+"/v1/groups?state=open&limit=1", &open))
	require.Equal(t, 230, open.Total)
	require.Equal(t, 200, getJSON(s.URL()+"/v1/groups?state=terminated&limit=1", &term))
	require.Equal(t, 0, term.Total)
	require.Empty(t, term.Groups)

	var one GroupJSON
	require.Equal(t, 200, getJSON(s.URL()+"/v1/groups/"+url.PathEscape("urn:page:003"), &one))
	require.Equal(t, [][2]uint64{{1, 2}}, one.Ranges)
	require.Equal(t, [][2]uint64{{0, 0}}, one.Missing, "the gap below the held numbers")
	require.Equal(t, 200, getJSON(s.URL()+"/v1/groups/"+url.PathEscape("urn:page:007"), &one))
	require.Equal(t, [][2]uint64{{1, 1}}, one.Missing)

	for _, bad := range []string{"limit=0", "limit=1001", "limit=x", "after=%21%21", "after=bm9wZQ", "state=stuck", "sort=size", "gap=maybe", "role=both"} {
		var e errorJSON
		require.Equal(t, 400, getJSON(s.URL()+"/v1/groups?"+bad, &e), bad)
		require.NotEmpty(t, e.Error, bad)
	}
}

// deadPort is a loopback port nothing listens on.
func deadPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestFailedMessagesPeersAndStats: messages to a dead destination fail
// and are listed by GET /v1/messages?state=failed with their reason,
// searchable by id and group; GET /v1/peers shows the dead destination
// unreachable with its error, pending and retry backlog while they
// retry, and the live one reachable; GET /v1/stats counts the minute's
// submissions and failures (#21).
func TestFailedMessagesPeersAndStats(t *testing.T) {
	b := startLocal(t, func(c *Config) {})
	a := startLocal(t, func(c *Config) {
		// At the start of a minute: the test's few seconds stay in it.
		c.FakeClock, c.FakeClockStart = true, time.Now().Truncate(time.Minute)
		c.RetryInterval, c.RetryMaxInterval, c.MaxRetries, c.RetryJitter = time.Second, time.Second, 2, 0
	})
	dead := "http://" + deadPort(t) + "/rmp"
	submit := func(to, key string) SubmitAnswer {
		var ans SubmitAnswer
		require.Equal(t, 202, postJSON(t, a.URL()+"/v1/messages", map[string]any{"to": to, "group": key, "ordered": true,
			"ack": true, "dupElim": true, "expiresIn": "1h", "body": "<o/>"}, &ans))
		return ans
	}
	var deadIDs []string
	var deadGroup string
	for range 3 {
		ans := submit(dead, "d")
		deadIDs, deadGroup = append(deadIDs, ans.ID), ans.GroupID
	}
	live := submit(b.URL()+"/rmp", "l")
	require.Eventually(t, func() bool {
		var ms MessageStatus
		return getJSON(a.URL()+"/v1/messages/"+live.ID, &ms) == 200 && ms.State == "acknowledged"
	}, 10*time.Second, 10*time.Millisecond)
	advanceTo := func(d string) {
		require.Equal(t, 200, postJSON(t, a.URL()+"/v1/clock", map[string]string{"advance": d}, nil))
	}
	advanceTo("1s") // the first resends
	var peers struct{ Peers []PeerJSON }
	byTo := func(to string) PeerJSON {
		for _, p := range peers.Peers {
			if p.To == to {
				return p
			}
		}
		return PeerJSON{}
	}
	require.Eventually(t, func() bool {
		peers.Peers = nil
		return getJSON(a.URL()+"/v1/peers", &peers) == 200 && len(peers.Peers) == 2 && byTo(dead).Retrying == 3
	}, 10*time.Second, 10*time.Millisecond)
	require.True(t, sort.SliceIsSorted(peers.Peers, func(i, j int) bool { return peers.Peers[i].To < peers.Peers[j].To }))
	p := byTo(dead)
	require.Equal(t, dead, p.To)
	require.NotNil(t, p.Reachable)
	require.False(t, *p.Reachable)
	require.Contains(t, p.LastError, "connection refused")
	require.NotNil(t, p.LastFailure)
	require.Nil(t, p.LastContact)
	require.Equal(t, [3]int{1, 3, 3}, [3]int{p.Groups, p.Pending, p.Retrying})
	l := byTo(b.URL() + "/rmp")
	require.Equal(t, b.URL()+"/rmp", l.To)
	require.True(t, *l.Reachable)
	require.NotNil(t, l.LastContact)
	require.Equal(t, 0, l.Pending)

	var g GroupJSON
	require.Equal(t, 200, getJSON(a.URL()+"/v1/groups/"+url.PathEscape(deadGroup)+"?role=sender", &g))
	require.Equal(t, dead, g.To)
	require.Equal(t, 3, g.PendingTotal)
	require.Len(t, g.Pending, 3)
	require.Equal(t, deadIDs[0], g.Pending[0].ID)
	require.Equal(t, 2, g.Pending[0].Attempts)
	require.Contains(t, g.Pending[0].LastError, "connection refused")

	// Retries exhausted (D26); each resend's result comes back after the
	// clock moved, so keep moving it.
	var failed messagesJSON
	require.Eventually(t, func() bool {
		advanceTo("1s")
		require.Equal(t, 200, getJSON(a.URL()+"/v1/messages?state=failed", &failed))
		return failed.Total == 3
	}, 20*time.Second, 20*time.Millisecond)
	require.Len(t, failed.Messages, 3)
	for _, m := range failed.Messages {
		require.Equal(t, deadGroup, m.GroupID)
		require.Contains(t, []string{"retries-exhausted", "group-aborted"}, m.Reason)
		require.NotEmpty(t, m.At)
	}
	var one messagesJSON
	require.Equal(t, 200, getJSON(a.URL()+"/v1/messages?q="+url.QueryEscape(deadIDs[1]), &one))
	require.Len(t, one.Messages, 1)
	require.Equal(t, deadIDs[1], one.Messages[0].ID)
	var byGroup messagesJSON
	require.Equal(t, 200, getJSON(a.URL()+"/v1/messages?group="+url.QueryEscape(live.GroupID), &byGroup))
	require.Len(t, byGroup.Messages, 1)
	require.Equal(t, "acknowledged", byGroup.Messages[0].State)
	var page1, page2 messagesJSON
	require.Equal(t, 200, getJSON(a.URL()+"/v1/messages?limit=2", &page1))
	require.Equal(t, 4, page1.Total)
	require.Len(t, page1.Messages, 2)
	require.NotNil(t, page1.Next)
	require.Equal(t, 200, getJSON(a.URL()+"/v1/messages?limit=2&after="+url.QueryEscape(*page1.Next), &page2))
	require.Len(t, page2.Messages, 2)
	require.Nil(t, page2.Next)
	seen := map[string]bool{}
	for _, m := range append(page1.Messages, page2.Messages...) {
		require.False(t, seen[m.ID], "listed twice: %s", m.ID)
		seen[m.ID] = true
	}
	require.Len(t, seen, 4)
	require.Equal(t, 400, getJSON(a.URL()+"/v1/messages?state=lost", nil))

	var st statsJSON
	require.Equal(t, 200, getJSON(a.URL()+"/v1/stats", &st))
	require.Len(t, st.Minutes, statsMinutes)
	var sum counts
	for _, m := range st.Minutes {
		sum.add(m.counts)
	}
	require.Equal(t, uint64(4), sum.Submitted, "the hour's submissions")
	require.Equal(t, uint64(3), sum.Failed)
	require.Equal(t, uint64(1), sum.Acknowledged)
	require.Equal(t, uint64(4), st.Minutes[statsMinutes-1].Submitted, "all in the fake clock's minute")
	require.True(t, st.Store.OK)
	require.GreaterOrEqual(t, st.OpenGroups["sender"], 1, "%+v", st.OpenGroups)
}

// TestThroughputRing: counts go to the minute of the clock they were
// observed at; minutes without traffic are zero; an hour later the old
// minutes are gone; a counter that goes down books nothing.
func TestThroughputRing(t *testing.T) {
	var tp throughput
	t0 := time.Date(2030, 1, 1, 0, 0, 30, 0, time.UTC)
	tp.observe(t0, counts{Submitted: 100}) // the baseline
	tp.observe(t0.Add(10*time.Second), counts{Submitted: 103})
	tp.observe(t0.Add(2*time.Minute), counts{Submitted: 110, Failed: 1})
	tp.observe(t0.Add(2*time.Minute+time.Second), counts{Submitted: 90})
	ms := tp.minutes()
	require.Len(t, ms, statsMinutes)
	require.Equal(t, "2030-01-01T00:02:00Z", ms[statsMinutes-1].At)
	require.Equal(t, counts{Submitted: 7, Failed: 1}, ms[statsMinutes-1].counts)
	require.Equal(t, counts{}, ms[statsMinutes-2].counts)
	require.Equal(t, counts{Submitted: 3}, ms[statsMinutes-3].counts)
	tp.observe(t0.Add(62*time.Minute), counts{Submitted: 95})
	ms = tp.minutes()
	require.Equal(t, counts{Submitted: 5}, ms[statsMinutes-1].counts)
	for _, m := range ms[:statsMinutes-1] {
		require.Equal(t, counts{}, m.counts, m.At)
	}
}
