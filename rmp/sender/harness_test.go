package sender

import (
	"bytes"
	"errors"
	"iter"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// memStore applies Persist batches to a map, honouring the four ops, and
// scans in key order: the store a Recover test restarts from.
type memStore struct {
	recs      map[group.Key][]byte
	deadlines map[group.Key]time.Time // by (role, group, generation)
}

func newMemStore() *memStore {
	return &memStore{recs: map[group.Key][]byte{}, deadlines: map[group.Key]time.Time{}}
}

func genKey(k group.Key) group.Key {
	return group.Key{Role: k.Role, GroupID: k.GroupID, Generation: k.Generation}
}

func (m *memStore) apply(ms []group.Mutation) {
	for _, mu := range ms {
		switch mu.Op {
		case group.OpPut:
			m.recs[mu.Key] = bytes.Clone(mu.Value)
		case group.OpDelete:
			delete(m.recs, mu.Key)
		case group.OpDeleteGeneration:
			g := genKey(mu.Key)
			for k := range m.recs {
				if genKey(k) == g {
					delete(m.recs, k)
				}
			}
			delete(m.deadlines, g)
		case group.OpSetDeadline:
			if mu.At.IsZero() {
				delete(m.deadlines, genKey(mu.Key))
			} else {
				m.deadlines[genKey(mu.Key)] = mu.At
			}
		default:
			panic("unknown op")
		}
	}
}

func (m *memStore) scan() iter.Seq2[group.Key, []byte] {
	keys := make([]group.Key, 0, len(m.recs))
	for k := range m.recs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	return func(yield func(group.Key, []byte) bool) {
		for _, k := range keys {
			if !yield(k, m.recs[k]) {
				return
			}
		}
	}
}

// harness drives a Sender like a driver would: Persist first, then sends,
// then outcomes to a producer that (unless told otherwise) handles each
// one at once. With restarts set, every step begins by rebuilding the
// Sender from the store.
type harness struct {
	t        *testing.T
	cfg      Config
	s        *Sender
	st       *memStore
	now      time.Time
	restarts bool

	sent     []Transmission
	outcomes []Outcome
	events   []Event
	polls    []Poll
	notified map[OutcomeID]int
	handled  map[OutcomeID]bool
	// hold: outcomes are recorded but not handled (producer away).
	hold bool
	// indexed: the At of every OpSetDeadline persisted, in order.
	indexed []time.Time
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func testConfig() Config {
	return Config{
		InstanceID: "test",
		Retry:      RetryPolicy{Interval: time.Second, Backoff: 2, MaxInterval: 4 * time.Second, MaxRetries: 3},
		JitterSeed: 1, LateFaultGrace: time.Minute, DefaultLifetime: time.Hour,
	}
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	s, err := New(cfg)
	noErr(t, err)
	return &harness{t: t, cfg: cfg, s: s, st: newMemStore(), now: t0, notified: map[OutcomeID]int{}, handled: map[OutcomeID]bool{}}
}

// step is called at the start of every input; in restart mode it rebuilds
// the Sender from the store first.
func (h *harness) step() {
	if h.restarts {
		h.restart()
	}
}

func (h *harness) restart() {
	h.t.Helper()
	s, err := Recover(h.cfg, h.st.scan())
	noErr(h.t, err)
	h.s = s
}

func (h *harness) apply(rd Ready) {
	h.t.Helper()
	h.st.apply(rd.Persist)
	h.checkDeadlineIndex()
	for _, m := range rd.Persist {
		if m.Op == group.OpSetDeadline {
			h.indexed = append(h.indexed, m.At)
		}
	}
	h.sent = append(h.sent, rd.Send...)
	h.polls = append(h.polls, rd.Polls...)
	h.events = append(h.events, rd.Events...)
	for _, o := range rd.Notify {
		if h.handled[o.ID] {
			h.t.Fatalf("outcome %d notified again after it was handled: %+v", o.ID, o)
		}
		h.notified[o.ID]++
		if h.notified[o.ID] == 1 {
			h.outcomes = append(h.outcomes, o)
		}
	}
	if h.hold {
		return
	}
	for _, o := range rd.Notify {
		h.handle(o.ID)
	}
}

func (h *harness) handle(id OutcomeID) {
	h.t.Helper()
	if h.handled[id] {
		return
	}
	h.handled[id] = true
	h.apply(h.s.OutcomeHandled(h.now, id))
}

func (h *harness) submit(sub Submission) MessageRef {
	h.t.Helper()
	h.step()
	if sub.To == "" {
		sub.To = "http://r.example/rmp"
	}
	ref, rd, err := h.s.Submit(h.now, sub)
	noErr(h.t, err)
	h.apply(rd)
	return ref
}

func (h *harness) submitErr(sub Submission) error {
	h.t.Helper()
	h.step()
	if sub.To == "" {
		sub.To = "http://r.example/rmp"
	}
	_, rd, err := h.s.Submit(h.now, sub)
	if !rd.Empty() {
		h.t.Fatalf("a refused submission has effects: %+v", rd)
	}
	return err
}

// at moves the clock to t0+d and ticks.
func (h *harness) at(d time.Duration) {
	h.t.Helper()
	h.step()
	h.now = t0.Add(d)
	h.apply(h.s.Tick(h.now))
}

// run ticks at every deadline up to t0+d.
func (h *harness) run(d time.Duration) { h.runThen(d, nil) }

// runThen is run calling then (when set) after each Tick's Ready is
// applied, before the next step.
func (h *harness) runThen(d time.Duration, then func(Ready)) {
	h.t.Helper()
	end := t0.Add(d)
	for {
		next, ok := h.s.NextDeadline()
		if !ok || next.After(end) {
			break
		}
		h.step()
		if next.After(h.now) {
			h.now = next
		}
		rd := h.s.Tick(h.now)
		h.apply(rd)
		if then != nil {
			then(rd)
		}
	}
	h.now = end
}

func (h *harness) reply(rs ...group.Reply) {
	h.t.Helper()
	h.step()
	h.apply(h.s.Replies(h.now, rs))
}

func ack(gid string, from, to uint64) group.Reply {
	return group.Reply{GroupID: gid, Sequenced: true, Ranges: []group.ReplyRange{{From: from, To: to}}}
}

// outcomeLine is an outcome without its id and instant, for comparisons.
type outcomeLine struct {
	Number uint64
	Kind   OutcomeKind
	Reason Reason
	Fault  string
}

func (h *harness) outcomesOf(gid string) []outcomeLine {
	var out []outcomeLine
	for _, o := range h.outcomes {
		if o.Ref.GroupID == gid {
			f := ""
			if o.Fault != 0 {
				f = o.Fault.String()
			}
			out = append(out, outcomeLine{o.Ref.Number, o.Kind, o.Reason, f})
		}
	}
	return out
}

func (h *harness) sendsOf(gid string, n uint64) []Transmission {
	var out []Transmission
	for _, tr := range h.sent {
		if tr.Ref.GroupID == gid && tr.Ref.Number == n {
			out = append(out, tr)
		}
	}
	return out
}

func sendTimes(trs []Transmission) []int {
	out := make([]int, len(trs))
	for i, tr := range trs {
		out[i] = tr.Attempt
	}
	return out
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// eq fails the test when got and want differ (reflect.DeepEqual).
func eq[T any](t *testing.T, got, want T, msg string, args ...any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf(msg+"\n got: %+v\nwant: %+v", append(args, got, want)...)
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func eventsOf(es []Event, gid string) []Event {
	var out []Event
	for _, e := range es {
		if e.GroupID == gid {
			out = append(out, e)
		}
	}
	return out
}

// checkDeadlineIndex checks, after every applied Ready, that each group
// with a timer is in the store's deadline index at an instant no later
// than the timer's (a reader of the index may wake early, never late),
// clamped instants aside.
func (h *harness) checkDeadlineIndex() {
	h.t.Helper()
	for _, g := range h.s.groups {
		if !g.tm.scheduled() {
			continue
		}
		due := h.s.timers.at(&g.tm)
		if !due.After(group.MinIndexedDeadline()) {
			continue
		}
		at, ok := h.st.deadlines[genKey(groupKey(h.s.idOf(g), group.KindMeta, 0))]
		if !ok || at.After(due) {
			h.t.Fatalf("group %s: indexed at %v (present %v), due at %v", h.s.idOf(g), at, ok, due)
		}
	}
}
