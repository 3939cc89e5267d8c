package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/admin"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/memstore"
)

// referencePage answers q the straightforward way, as GET /v1/groups did
// before the Listings (#21): every group's full view, filtered, keyed,
// sorted, cut after the cursor.
func referencePage(a admin.Engine, q groupQuery) groupsJSON {
	key := func(v *admin.GroupView) int64 {
		switch q.sort {
		case "held":
			return -int64(v.Held)
		case "lastActivity":
			if v.LastActivity.IsZero() {
				return 0
			}
			return -v.LastActivity.UnixNano()
		case "nextDeadline":
			if v.NextDeadline.IsZero() {
				return 1<<63 - 1
			}
			return v.NextDeadline.UnixNano()
		}
		return 0
	}
	sel := &selection{q: &q}
	for _, v := range admin.Groups(a, q.roles) {
		switch {
		case q.state == "open" && v.Terminated, q.state == "terminated" && !v.Terminated:
			continue
		case q.gap && !group.HasGap(v.Ranges):
			continue
		case q.q != "" && !strings.Contains(v.GroupID, q.q):
			continue
		}
		sel.total++
		cur := groupCursor{key: key(&v), id: v.GroupID, role: roleName(v.Role), gen: v.Generation}
		if q.after != nil && compareCursors(&cur, q.after) <= 0 {
			continue
		}
		sel.rows = append(sel.rows, groupRow{cur: cur, v: v})
	}
	return sel.answer()
}

// indexedPage answers q as GET /v1/groups does.
func indexedPage(a admin.Engine, q groupQuery) groupsJSON {
	sel := &selection{q: &q}
	sel.selectGroups(a)
	return sel.answer()
}

// loopEngine is an engine that sends to itself over a lossy link and
// receives messages of other groups too, driven by a seeded source: both
// roles, shared ids across them, gaps, held messages, terminations,
// removals, aborts and restarts from its store.
type loopEngine struct {
	t       *testing.T
	rng     *rand.Rand
	cfg     rmp.Config
	st      store.Store
	e       *rmp.Engine
	now     time.Time
	token   uint64
	sends   []rmp.Outbound
	answers map[uint64]rmp.Answer
	// outstanding are hand-offs the consumer has not answered yet.
	outstanding []receiver.DeliveryRef
}

func newLoopEngine(t *testing.T, seed uint64) *loopEngine {
	var cfg rmp.Config
	cfg.Sender.InstanceID = "loop"
	cfg.Sender.Retry = sender.RetryPolicy{Interval: time.Second, Backoff: 2, MaxInterval: 4 * time.Second, MaxRetries: 3}
	l := &loopEngine{t: t, rng: rand.New(rand.NewPCG(seed, 21)), cfg: cfg, st: memstore.New(memstore.Options{}),
		now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), answers: map[uint64]rmp.Answer{}}
	l.restart()
	return l
}

func (l *loopEngine) restart() {
	e, err := rmp.LoadEngine(l.cfg, l.st)
	if err != nil {
		l.t.Fatal(err)
	}
	l.e, l.sends, l.outstanding = e, nil, nil
}

func (l *loopEngine) drain() {
	for l.e.HasReady() {
		rd := l.e.Ready()
		if err := l.st.Apply(rd.Persist); err != nil {
			l.t.Fatal(err)
		}
		l.e.Advance()
		for _, a := range rd.Answers {
			l.answers[a.Token] = a
		}
		l.sends = append(l.sends, rd.Sends...)
		for _, d := range rd.Deliver {
			switch l.rng.IntN(5) {
			case 0:
				l.e.DeliveryFailed(l.now, d.Ref)
			case 1:
				l.outstanding = append(l.outstanding, d.Ref)
			default:
				l.e.Taken(l.now, d.Ref)
			}
		}
		for _, o := range rd.Notify {
			l.e.OutcomeHandled(l.now, o.ID)
		}
	}
}

func (l *loopEngine) receive(body []byte) (rmp.Answer, bool) {
	l.token++
	tok := l.token
	l.e.Receive(l.now, tok, soap.ContentTypeSOAP11, body)
	l.drain()
	a, ok := l.answers[tok]
	delete(l.answers, tok)
	return a, ok
}

// step does one random thing.
func (l *loopEngine) step() {
	r := l.rng
	switch op := r.IntN(20); {
	case op < 5: // the producer submits
		key := ""
		if r.IntN(4) > 0 {
			key = "k" + strconv.Itoa(r.IntN(6))
		}
		_, err := l.e.Submit(l.now, rmp.Submission{
			To: "http://loop.test/rmp", GroupKey: key, Last: key != "" && r.IntN(8) == 0,
			Flags:    group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: key != "" && key < "k3"},
			Lifetime: time.Duration(1+r.IntN(30)) * time.Second, Pattern: group.ReplyResponse,
			Payload: []byte("<p/>"),
		})
		_ = err // bounds and aborted keys refuse some: fine
		l.drain()
	case op < 10: // a message of another sender's group
		n := uint64(r.IntN(6))
		var seq *soap.SequenceNum
		if r.IntN(6) > 0 {
			seq = &soap.SequenceNum{Number: n, Last: r.IntN(6) == 0}
		}
		env, _ := soap.AppendRequestEnvelope(nil, soap.SOAP11, &soap.Request{
			MessageID:    soap.MessageID{GroupID: fmt.Sprintf("urn:g:%d", r.IntN(16)), Sequence: seq},
			ExpiryTime:   l.now.Add(time.Duration(1+r.IntN(20)) * time.Second).UTC().Truncate(time.Second),
			ReplyPattern: soap.ReplyPattern{Value: group.ReplyResponse},
			Flags:        group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: seq != nil && r.IntN(2) == 0},
		}, []byte("<o/>"))
		l.receive(env)
	case op < 14: // the link carries the sends to the engine itself, losing some
		sends := l.sends
		l.sends = nil
		for _, o := range sends {
			if r.IntN(10) < 3 {
				l.e.SendResult(l.now, o.Ref, outbound.PostResult{}, fmt.Errorf("lost"))
				continue
			}
			if a, ok := l.receive(o.Post.Body); ok {
				l.e.SendResult(l.now, o.Ref, outbound.PostResult{Status: a.Status, ContentType: a.ContentType, Body: a.Body}, nil)
			} else {
				l.e.SendResult(l.now, o.Ref, outbound.PostResult{}, fmt.Errorf("no answer"))
			}
		}
		l.drain()
	case op < 17: // time passes
		l.now = l.now.Add(time.Duration(r.IntN(4000)) * time.Millisecond)
		l.e.Tick(l.now)
		l.drain()
	case op < 18: // the consumer answers a hand-off it held
		if len(l.outstanding) > 0 {
			i := r.IntN(len(l.outstanding))
			ref := l.outstanding[i]
			l.outstanding = slices.Delete(l.outstanding, i, i+1)
			l.e.Taken(l.now, ref)
			l.drain()
		}
	case op < 19: // an operator aborts a group
		gs := admin.Groups(l.e.Admin(), admin.Receiving|admin.Sending)
		if len(gs) > 0 {
			v := gs[r.IntN(len(gs))]
			roles := admin.Receiving
			if v.Role == group.RoleSender {
				roles = admin.Sending
			}
			admin.Abort(l.e.Admin(), l.now, v.GroupID, roles)
			l.drain()
		}
	default: // a restart: the Listings are rebuilt from the store
		l.restart()
	}
}

// randomQuery is a query of the console's kinds, with a cursor from
// cursors (earlier pages, whose groups may be gone) or made up.
func randomQuery(r *rand.Rand, cursors []string) url.Values {
	v := url.Values{}
	pick := func(key string, vals ...string) {
		if s := vals[r.IntN(len(vals))]; s != "" {
			v.Set(key, s)
		}
	}
	pick("role", "", "", "receiver", "sender")
	pick("state", "", "", "open", "terminated")
	pick("gap", "", "", "true")
	pick("q", "", "", "", "1", "g:1", "loop", "mid:2", "nothing")
	pick("sort", "", "", "groupId", "held", "lastActivity", "nextDeadline")
	if r.IntN(5) > 0 {
		v.Set("limit", strconv.Itoa(1+r.IntN(6)))
	}
	switch r.IntN(4) {
	case 0:
		if len(cursors) > 0 {
			v.Set("after", cursors[r.IntN(len(cursors))])
		}
	case 1:
		c := groupCursor{key: []int64{0, -1, 1, -2, 1<<63 - 1}[r.IntN(5)], role: []string{"receiver", "sender"}[r.IntN(2)],
			gen: uint64(r.IntN(3)), id: []string{"", "urn:g:1", "urn:g:15", "mid:1.loop@wsrkit", "mid:19.loop@wsrkit", "zzz"}[r.IntN(6)]}
		v.Set("after", c.String())
	}
	return v
}

// TestIndexedPagesMatchAFullScan: for randomized groups of both roles
// (gaps, held messages, terminations, removals, aborts, restarts from the
// store) and randomized queries, every page and its total and next are
// byte for byte what a full scan of every group's view answers, and
// following next through every page lists each match once.
func TestIndexedPagesMatchAFullScan(t *testing.T) {
	steps := 1500
	if testing.Short() {
		steps = 300
	}
	seen := map[string]bool{}
	for seed := range uint64(3) {
		l := newLoopEngine(t, seed)
		var cursors []string
		for step := range steps {
			l.step()
			a := l.e.Admin()
			for range 6 {
				v := randomQuery(l.rng, cursors)
				q, err := parseGroupQuery(v)
				if err != nil {
					t.Fatal(err)
				}
				got, want := indexedPage(a, q), referencePage(a, q)
				gb, _ := json.Marshal(got)
				wb, _ := json.Marshal(want)
				if !bytes.Equal(gb, wb) {
					t.Fatalf("seed %d step %d, %s:\n got %s\nwant %s", seed, step, v.Encode(), gb, wb)
				}
				if got.Next != nil {
					cursors = append(cursors, *got.Next)
				}
			}
			if step%50 == 0 {
				walkPages(t, a, l.rng)
			}
			for _, v := range admin.Groups(a, admin.Receiving|admin.Sending) {
				seen[fmt.Sprintf("%s terminated=%v gap=%v held=%v", roleName(v.Role), v.Terminated, group.HasGap(v.Ranges), v.Held > 0)] = true
			}
		}
	}
	// The groups were of every kind the filters and orders tell apart.
	for _, role := range []string{"receiver", "sender"} {
		for _, k := range []string{"terminated=false gap=false held=false", "terminated=true gap=false held=false",
			"terminated=false gap=true held=true", "terminated=false gap=false held=true"} {
			if !seen[role+" "+k] {
				t.Errorf("no %s group with %s: %v", role, k, seen)
			}
		}
	}
}

// walkPages follows next from the first page to the last of one random
// query: the pages together are the whole unpaged answer, in order.
func walkPages(t *testing.T, a admin.Engine, r *rand.Rand) {
	t.Helper()
	v := randomQuery(r, nil)
	v.Del("after")
	v.Del("limit")
	q, err := parseGroupQuery(v)
	if err != nil {
		t.Fatal(err)
	}
	all := indexedPage(a, q)
	var listed []GroupJSON
	v.Set("limit", strconv.Itoa(1+r.IntN(4)))
	for {
		q, err := parseGroupQuery(v)
		if err != nil {
			t.Fatal(err)
		}
		p := indexedPage(a, q)
		if p.Total != all.Total {
			t.Fatalf("%s: total %d, unpaged %d", v.Encode(), p.Total, all.Total)
		}
		listed = append(listed, p.Groups...)
		if p.Next == nil {
			break
		}
		v.Set("after", *p.Next)
	}
	gb, _ := json.Marshal(listed)
	wb, _ := json.Marshal(all.Groups)
	if len(all.Groups) > 0 && !bytes.Equal(gb, wb) {
		t.Fatalf("%s: the pages list\n%s\nthe unpaged answer\n%s", v.Encode(), gb, wb)
	}
}
