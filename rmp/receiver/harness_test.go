package receiver

import (
	"cmp"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// memStore is a map store honouring the four mutation ops, scanned in key
// order, for restart tests.
type memStore struct {
	recs      map[group.Key][]byte
	deadlines map[group.ID]time.Time
}

func newMemStore() *memStore {
	return &memStore{recs: map[group.Key][]byte{}, deadlines: map[group.ID]time.Time{}}
}

func (s *memStore) apply(ms []group.Mutation) {
	for _, m := range ms {
		id := group.ID{GroupID: m.Key.GroupID, Generation: m.Key.Generation}
		switch m.Op {
		case group.OpPut:
			s.recs[m.Key] = slices.Clone(m.Value)
		case group.OpDelete:
			delete(s.recs, m.Key)
		case group.OpDeleteGeneration:
			for k := range s.recs {
				if k.Role == m.Key.Role && k.GroupID == m.Key.GroupID && k.Generation == m.Key.Generation {
					delete(s.recs, k)
				}
			}
			delete(s.deadlines, id)
		case group.OpSetDeadline:
			if m.At.IsZero() {
				delete(s.deadlines, id)
			} else {
				s.deadlines[id] = m.At
			}
		default:
			panic("unknown op")
		}
	}
}

func cmpKey(a, b group.Key) int {
	return cmp.Or(cmp.Compare(a.Role, b.Role), strings.Compare(a.GroupID, b.GroupID),
		cmp.Compare(a.Generation, b.Generation), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Number, b.Number))
}

func (s *memStore) scan() iter.Seq2[group.Key, []byte] {
	keys := slices.SortedFunc(maps.Keys(s.recs), cmpKey)
	return func(yield func(group.Key, []byte) bool) {
		for _, k := range keys {
			if k.Role != group.RoleReceiver {
				continue
			}
			if !yield(k, s.recs[k]) {
				return
			}
		}
	}
}

var t0 = time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC)

// harness drives a Receiver like an engine would: it applies Persist to a
// memStore, takes every delivery (unless told to fail it), answers every
// callback, and logs every effect as a line of text.
type harness struct {
	t   testing.TB
	cfg Config
	r   *Receiver
	st  *memStore
	now time.Time
	log []string
	// failTake makes the consumer refuse hand-offs.
	failTake bool
	// holdTake leaves hand-offs unanswered.
	holdTake bool
	// cbFail makes callback POSTs fail.
	cbFail bool
	// holdCB leaves callback POSTs unanswered in cbHeld (answerCB).
	holdCB bool
	cbHeld []CallbackRef
	// restartAt: restart at the checkpoint with this index (-1: never).
	restartAt, cps int
	taken          map[DeliveryRef]int
	inflight       []DeliveryRef
	// onReady, when set, sees every Ready before it is applied.
	onReady func(Ready)
	// restarted: h.r came from Recover (checkCompact).
	restarted bool
}

func newHarness(t testing.TB, cfg Config) *harness {
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, cfg: cfg, r: r, st: newMemStore(), now: t0, restartAt: -1, taken: map[DeliveryRef]int{}}
}

func (h *harness) at(d time.Duration) { h.now = t0.Add(d) }

// cp is a checkpoint: the restart variant rebuilds the Receiver here.
func (h *harness) cp() {
	if h.cps == h.restartAt {
		h.restart()
	}
	h.cps++
}

func (h *harness) restart() {
	r, err := Recover(h.cfg, h.st.scan())
	if err != nil {
		h.t.Fatalf("recover: %v", err)
	}
	h.r = r
	h.restarted = true
	h.inflight = nil // the consumer lost them with the crash
}

func (h *harness) msg(m Message) { h.process(h.r.Message(h.now, m)) }
func (h *harness) tick()         { h.process(h.r.Tick(h.now)) }
func (h *harness) poll(p PollRequest) {
	rd := h.r.Poll(h.now, p)
	if rd.PollAnswer == nil && rd.SOAPFault == nil && len(rd.Callbacks) == 0 {
		h.log = append(h.log, "poll -")
	}
	h.process(rd)
}

// takeAll reports every unanswered hand-off as taken.
func (h *harness) takeAll() {
	in := h.inflight
	h.inflight = nil
	for _, ref := range in {
		h.taken[ref]++
		h.process(h.r.Taken(h.now, ref))
	}
}

func (h *harness) process(rd Ready) {
	if h.onReady != nil {
		h.onReady(rd)
	}
	h.st.apply(rd.Persist)
	h.checkCompact()
	var lines []string
	for _, d := range rd.Deliver {
		line := "deliver " + refStr(d.Ref)
		if d.InRun {
			line += " run"
		}
		lines = append(lines, line)
	}
	if rd.SOAPFault != nil {
		lines = append(lines, fmt.Sprintf("soapfault %s %s", rd.SOAPFault.Code.String(), rd.SOAPFault.Rule))
	}
	if rd.Reply != nil {
		lines = append(lines, "reply "+replyStr(*rd.Reply))
	}
	if rd.Response != nil {
		lines = append(lines, "response "+string(rd.Response))
	}
	if rd.PollAnswer != nil {
		lines = append(lines, "poll "+replyStr(*rd.PollAnswer))
	}
	var cbs []CallbackRef
	for _, c := range rd.Callbacks {
		lines = append(lines, fmt.Sprintf("callback %s %s", c.URL, replyStr(c.Reply)))
		cbs = append(cbs, c.ID)
	}
	for _, e := range rd.Events {
		lines = append(lines, eventStr(e))
	}
	h.log = append(h.log, lines...)
	type handOff struct {
		ref   DeliveryRef
		inRun bool
	}
	var hs []handOff
	for _, d := range rd.Deliver {
		hs = append(hs, handOff{d.Ref, d.InRun})
	}
	taken := false // the hand-off before, for a run (Delivery.InRun)
	for _, d := range hs {
		switch {
		case d.inRun && !taken:
			h.log = append(h.log, "returned "+refStr(d.ref))
			h.process(h.r.Returned(h.now, d.ref))
		case h.holdTake:
			h.inflight = append(h.inflight, d.ref)
			taken = false
		case h.failTake:
			h.process(h.r.DeliveryFailed(h.now, d.ref))
			taken = false
		default:
			h.taken[d.ref]++
			h.process(h.r.Taken(h.now, d.ref))
			taken = true
		}
	}
	if h.holdCB {
		h.cbHeld = append(h.cbHeld, cbs...)
		return
	}
	for _, id := range cbs {
		h.process(h.r.CallbackResult(h.now, id, !h.cbFail))
	}
}

// answerCB reports the oldest held callback POST as accepted or failed.
func (h *harness) answerCB(ok bool) {
	id := h.cbHeld[0]
	h.cbHeld = h.cbHeld[1:]
	h.process(h.r.CallbackResult(h.now, id, ok))
}

func refStr(r DeliveryRef) string {
	if !r.HasNumber {
		return fmt.Sprintf("%s#%d", r.Group.GroupID, r.Group.Generation)
	}
	return fmt.Sprintf("%s#%d/%d", r.Group.GroupID, r.Group.Generation, r.Number)
}

func replyStr(r Reply) string {
	var parts []string
	for _, e := range r.Entries {
		if !e.Sequenced {
			s := e.GroupID
			if e.Fault != 0 {
				s += "!" + e.Fault.String()
			}
			parts = append(parts, s)
			continue
		}
		var rs []string
		for _, q := range e.Ranges {
			s := fmt.Sprint(q.From)
			if q.To != q.From {
				s += fmt.Sprintf("-%d", q.To)
			}
			if q.Fault != 0 {
				s += "!" + q.Fault.String()
			}
			rs = append(rs, s)
		}
		parts = append(parts, e.GroupID+"["+strings.Join(rs, " ")+"]")
	}
	return strings.Join(parts, " ")
}

func eventStr(e Event) string {
	s := e.Kind.String() + " " + e.Group.GroupID + fmt.Sprintf("#%d", e.Group.Generation)
	if e.HasNumber {
		s += fmt.Sprintf("/%d", e.Number)
	}
	if e.Rule != group.RuleNone {
		s += " " + e.Rule.String()
	}
	if e.Code != 0 {
		s += " " + e.Code.String()
	}
	if e.Label != "" {
		s += " " + e.Label
	}
	return s
}

// Message builders.
type mopt func(*Message)

func seq(gid string, n uint64, opts ...mopt) Message {
	m := Message{GroupID: gid, HasNumber: true, Number: n, Expiry: t0.Add(time.Hour),
		Flags: group.Flags{AckRequested: true, DuplicateElimination: true}, Pattern: group.ReplyResponse,
		Payload: fmt.Appendf(nil, "%s/%d", gid, n)}
	for _, o := range opts {
		o(&m)
	}
	return m
}

func single(gid string, opts ...mopt) Message {
	m := Message{GroupID: gid, Expiry: t0.Add(time.Hour), Flags: group.Flags{AckRequested: true, DuplicateElimination: true},
		Pattern: group.ReplyResponse, Payload: []byte(gid)}
	for _, o := range opts {
		o(&m)
	}
	return m
}

func ordered(m *Message) { m.Flags.MessageOrder = true }
func noDE(m *Message)    { m.Flags.DuplicateElimination = false }
func last(m *Message)    { m.Last = true }
func pollP(m *Message)   { m.Pattern = group.ReplyPoll }
func exp(d time.Duration) mopt {
	return func(m *Message) { m.Expiry = t0.Add(d) }
}
func gexp(d time.Duration) mopt {
	return func(m *Message) { m.Timing.Expiry = t0.Add(d) }
}
func idle(d time.Duration) mopt {
	return func(m *Message) { m.Timing.MaxIdle, m.Timing.HasMaxIdle = group.Fixed(d), true }
}
func cb(url string) mopt {
	return func(m *Message) { m.Pattern, m.ReplyTo = group.ReplyCallback, url }
}
func payload(p string) mopt { return func(m *Message) { m.Payload = []byte(p) } }

// deadlineSets records the At of every OpSetDeadline in the Readies that
// follow (through onReady).
func (h *harness) deadlineSets() *[]time.Time {
	var sets []time.Time
	h.onReady = func(rd Ready) {
		for _, m := range rd.Persist {
			if m.Op == group.OpSetDeadline {
				sets = append(sets, m.At)
			}
		}
	}
	return &sets
}
