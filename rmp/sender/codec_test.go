package sender

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

func TestMetaRoundTrip(t *testing.T) {
	g := &groupState{
		seq: 5, key: "k", to: "http://r/", flags: ordered, pattern: group.ReplyCallback,
		next: math.MaxUint64, bits: gClosed | gAborted, ackedMaxExpiry: t0.Add(time.Minute),
		x: &gextra{replyTo: "http://cb/", removeAt: t0.Add(time.Hour), lateFailed: map[uint64]struct{}{3: {}, 9: {}, math.MaxUint64: {}}},
	}
	g.life = group.Lifecycle{
		Timing:       group.Timing{HasMaxIdle: true, MaxIdle: group.Duration{Years: 1, Months: -2, Days: 3, Clock: 90 * time.Second}},
		Ordered:      true,
		LastActivity: t0, MaxExpiry: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), Last: 7, HasLast: true,
		Terminated: true, TerminatedAt: t0.Add(time.Second), Rule: group.RuleT32, RemoveAt: g.x.removeAt,
	}
	got, id, err := decodeMeta(encodeMeta(nil, g, "mid:5.x@wsrkit"))
	noErr(t, err)
	eq(t, id, "mid:5.x@wsrkit", "id")
	eq(t, got.life, g.life, "lifecycle")
	eq(t, []any{got.seq, got.key, got.to, got.flags, got.pattern, got.next, got.has(gClosed), got.has(gAborted), got.ackedMaxExpiry, *got.x},
		[]any{g.seq, g.key, g.to, g.flags, g.pattern, g.next, g.has(gClosed), g.has(gAborted), g.ackedMaxExpiry, *g.x}, "fields")
	// A group without extra state decodes without making any.
	plain := &groupState{seq: 6, to: "http://r/", pattern: group.ReplyResponse}
	got, _, err = decodeMeta(encodeMeta(nil, plain, "mid:6.x@wsrkit"))
	noErr(t, err)
	eq(t, got.x == nil, true, "no extra state")
}

func TestOutboundOutcomeRoundTrip(t *testing.T) {
	m := &message{last: true, expiry: t0, action: "urn:a", attempts: 4, nextAt: t0.Add(time.Second), untilExpiry: true, payload: []byte{0, 1, 2}}
	got, err := decodeOutbound(encodeOutbound(nil, m))
	noErr(t, err)
	eq(t, []any{got.last, got.expiry, got.action, got.attempts, got.nextAt, got.untilExpiry, got.payload},
		[]any{m.last, m.expiry, m.action, m.attempts, m.nextAt, m.untilExpiry, m.payload}, "outbound")
	e := &outboxEntry{o: Outcome{ID: 9, Ref: MessageRef{GroupID: "g", Number: 3}, GroupKey: "k", Kind: Failed, Reason: ReasonFaultReceived, Fault: faults.MessageExpired, At: t0}, blocksKey: true}
	ge, err := decodeOutcome(9, encodeOutcome(nil, e))
	noErr(t, err)
	eq(t, *ge, *e, "outcome")
	e.o.Kind, e.o.Reason, e.o.Fault, e.o.Response = Acknowledged, ReasonNone, 0, []byte("<r/>")
	ge, err = decodeOutcome(9, encodeOutcome(nil, e))
	noErr(t, err)
	eq(t, *ge, *e, "outcome with a business response (R73)")
	e.o.Kind, e.o.Reason, e.o.Response, e.o.SOAPFault = Failed, ReasonFaultReceived, nil, "MustUnderstand"
	ge, err = decodeOutcome(9, encodeOutcome(nil, e))
	noErr(t, err)
	eq(t, *ge, *e, "outcome with a SOAP-level fault code")
	// A SOAP fault code belongs to a fault outcome without a wsrm code only.
	e.o.Fault = faults.GroupAborted
	if _, err := decodeOutcome(9, encodeOutcome(nil, e)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("SOAP fault code beside a wsrm code decoded: %v", err)
	}
}

// Decoders refuse damaged records with ErrCorrupt: truncations, trailing
// bytes, unknown versions, bad enums.
func TestDecodeErrors(t *testing.T) {
	m := encodeOutbound(nil, &message{expiry: t0, payload: []byte("abc")})
	for i := 0; i < len(m); i++ {
		if _, err := decodeOutbound(m[:i]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated at %d: %v", i, err)
		}
	}
	if _, err := decodeOutbound(append(m, 0)); !errors.Is(err, ErrCorrupt) {
		t.Fatal("trailing byte accepted")
	}
	bad := slices.Clone(m)
	bad[0] = 9
	if _, err := decodeOutbound(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatal("unknown version accepted")
	}
	o := encodeOutcome(nil, &outboxEntry{o: Outcome{Kind: Acknowledged}})
	o[len(o)-1-2-1-1-1-1] = 7 // Kind byte: version,str(0),num,bool,str(0) then kind
	if _, err := decodeOutcome(0, o); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("bad kind accepted")
	}
	// The business response is optional and last; written, it is never
	// empty, and a truncated one is refused.
	o = encodeOutcome(nil, &outboxEntry{o: Outcome{Kind: Acknowledged}})
	for _, tail := range [][]byte{{0}, {5, 'a'}} {
		if _, err := decodeOutcome(0, append(slices.Clone(o), tail...)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("outcome with trailing %v accepted", tail)
		}
	}
	if _, err := decodeRun(5, encodeRun(nil, group.Range{From: 0, To: 4})); !errors.Is(err, ErrCorrupt) {
		t.Fatal("run ending before its start accepted")
	}
}

// Recover refuses records that do not fit: orphans, foreign roles, bad
// keys, numbers outside their group.
func TestRecoverRejects(t *testing.T) {
	h := newHarness(t, testConfig())
	r := h.submit(Submission{GroupKey: "k", Flags: ackReq, Payload: []byte("x")})
	base := h.st
	try := func(name string, mutate func(m map[group.Key][]byte)) {
		st := newMemStore()
		for k, v := range base.recs {
			st.recs[k] = v
		}
		mutate(st.recs)
		if _, err := Recover(h.cfg, st.scan()); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v", name, err)
		}
	}
	out := groupKey(r.GroupID, group.KindOutbound, 0)
	try("orphan outbound", func(m map[group.Key][]byte) { delete(m, groupKey(r.GroupID, group.KindMeta, 0)) })
	try("number beyond the group", func(m map[group.Key][]byte) { m[groupKey(r.GroupID, group.KindOutbound, 5)] = m[out] })
	try("receiver record", func(m map[group.Key][]byte) {
		m[group.Key{Role: group.RoleReceiver, GroupID: "g", Generation: 1, Kind: group.KindMeta}] = []byte{1}
	})
	try("bad generation", func(m map[group.Key][]byte) {
		m[group.Key{Role: group.RoleSender, GroupID: "g", Generation: 2, Kind: group.KindMeta}] = []byte{1}
	})
	try("garbage meta", func(m map[group.Key][]byte) { m[groupKey(r.GroupID, group.KindMeta, 0)] = []byte{1, 2, 3} })
	try("unknown kind", func(m map[group.Key][]byte) { m[groupKey(r.GroupID, group.KindHeld, 0)] = []byte{1} })
	try("bad outbox key", func(m map[group.Key][]byte) {
		m[group.Key{Role: group.RoleOutbox, GroupID: "x", Kind: group.KindOutcome}] = []byte{1}
	})
}

// KindReceived runs are written as deltas: out-of-order acks merge into one
// run keyed by its first number, the absorbed key is deleted (R89).
func TestAckedRunsDeltas(t *testing.T) {
	h := newHarness(t, testConfig())
	var g string
	for i := 0; i < 4; i++ {
		g = h.submit(Submission{GroupKey: "k", Flags: ackReq}).GroupID
	}
	h.reply(ack(g, 0, 0), ack(g, 2, 2))
	runs := func() map[uint64][]byte {
		out := map[uint64][]byte{}
		for k, v := range h.st.recs {
			if k.GroupID == g && k.Kind == group.KindReceived {
				out[k.Number] = v
			}
		}
		return out
	}
	eq(t, runs(), map[uint64][]byte{0: encodeRun(nil, group.Range{From: 0, To: 0}), 2: encodeRun(nil, group.Range{From: 2, To: 2})}, "two runs")
	h.reply(ack(g, 1, 1))
	eq(t, runs(), map[uint64][]byte{0: encodeRun(nil, group.Range{From: 0, To: 2})}, "merged")
	h.restart()
	gi, _ := h.s.Group(g)
	eq(t, gi.Acked, []group.Range{{From: 0, To: 2}}, "recovered")
	eq(t, gi.Pending, 1, "one pending")
}

// A reply range as wide as the number space costs O(pending), not O(range).
func TestHugeReplyRange_R30(t *testing.T) {
	h := newHarness(t, testConfig())
	g := h.submit(Submission{GroupKey: "k", Flags: ackReq}).GroupID
	h.reply(ack(g, 0, math.MaxUint64))
	eq(t, len(h.outcomes), 1, "acked")
	h.reply(group.Reply{GroupID: g, Sequenced: true, Ranges: []group.ReplyRange{{From: 0, To: math.MaxUint64, Fault: faults.MessageExpired}}})
	eq(t, len(h.outcomes), 2, "late fault over a huge range")
	h.reply(group.Reply{GroupID: g, Sequenced: true, Ranges: []group.ReplyRange{{From: 0, To: 3, Fault: faults.Code(200)}}})
	eq(t, len(h.outcomes), 2, "invalid code ignored")
}

// Determinism: the same inputs give the same Ready, field for field.
func TestDeterministicOutput(t *testing.T) {
	run := func() []Ready {
		s, err := New(testConfig())
		noErr(t, err)
		var out []Ready
		for i := 0; i < 30; i++ {
			key := "k" + strconv.Itoa(i%4)
			_, rd, err := s.Submit(t0, Submission{To: "d" + strconv.Itoa(i%4%3), GroupKey: key, Flags: ordered, Pattern: group.ReplyPattern(1 + i%4%3), ReplyTo: "http://cb", Expiry: t0.Add(time.Duration(5+i) * time.Second)})
			noErr(t, err)
			out = append(out, rd)
		}
		for d := time.Duration(0); d < time.Minute; d += 700 * time.Millisecond {
			out = append(out, s.Tick(t0.Add(d)))
		}
		return out
	}
	eq(t, run(), run(), "same inputs, same effects")
}

// STYLE.md / anchors §3.2: the package imports only rmp/group, faults and
// the standard library, and never reads a clock or starts a goroutine.
func TestPurity(t *testing.T) {
	files, err := filepath.Glob("*.go")
	noErr(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		noErr(t, err)
		af, err := parser.ParseFile(token.NewFileSet(), f, src, 0)
		noErr(t, err)
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(p, ".") && p != "github.com/wsrkit/wsrkit/rmp/group" && p != "github.com/wsrkit/wsrkit/faults" {
				t.Errorf("%s imports %s", f, p)
			}
			if p == "net" || strings.HasPrefix(p, "net/") || p == "os" || p == "sync" {
				t.Errorf("%s imports %s", f, p)
			}
		}
		ast.Inspect(af, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: goroutine", f)
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "time" {
					switch x.Sel.Name {
					case "Now", "Since", "Until", "After", "AfterFunc", "NewTimer", "NewTicker", "Tick", "Sleep":
						t.Errorf("%s: time.%s", f, x.Sel.Name)
					}
				}
			}
			return true
		})
	}
}
