package sim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// deliveryKey is the identity of a hand-off: (group, generation, number),
// the key on which the consumer is idempotent (R92).
type deliveryKey struct {
	id        group.ID
	hasNumber bool
	number    uint64
}

// take is the consumer's record of an identity it took.
type take struct {
	msg     int
	durable bool          // the Taken was persisted by a later successful Apply
	skew    time.Duration // the receiving node's clock skew when taken
}

// clockBackLabel names deliveries again that only a receiver's clock set
// back explains: D17 detects duplicates while a group's state exists, and
// removes it once every ExpiryTime passed on the receiver's clock; set
// back past that, the receiver takes a resend as new.
const clockBackLabel = "delivered again after the receiver's clock was set back past the group's removal (D17)"

type handleKey struct {
	node int
	id   sender.OutcomeID
}

// handled is the producer's record of an outcome it handled.
type handled struct {
	durable bool
}

// rec is the model's view of one planned message.
type rec struct {
	submitted bool
	refusals  int
	ref       sender.MessageRef
	expiry    time.Time
	sends     int
	outcomes  []sender.Outcome
	taken     []deliveryKey // identities taken, in order
	discarded bool          // the receiver discarded it after accepting it
	responded bool          // the consumer gave its business response (R73)
	takeSkew  time.Duration // the receiving node's clock skew at the first take
	// abortedFailed: failed when the operator aborted its sending group.
	abortedFailed bool
	trace         []string
}

// model holds what the producers and consumers saw and checks the
// invariants of the issue on every effect and at the end.
type model struct {
	wd      *world
	recs    []rec
	byRef   map[sender.MessageRef]int
	taken   map[deliveryKey]*take
	handled map[handleKey]*handled
	next    map[group.ID]uint64 // ordered groups: next number to take (D14)
	byGen   map[group.ID][]int  // messages taken in each receiving generation
	byGroup map[string][]int    // messages submitted to each sending group
	deleted map[group.ID]bool   // receiving generations the operator deleted
	hidden  map[group.ID]bool   // … whose state is not yet removed (abort.go)
	removed map[group.ID]bool   // receiving generations removed (D20–D23)
	// sendDeleted: sending groups the operator aborted (abort.go).
	sendDeleted map[string]bool
}

func newModel(wd *world) model {
	return model{wd: wd, recs: make([]rec, len(wd.w.msgs)), byRef: map[sender.MessageRef]int{},
		taken: map[deliveryKey]*take{}, handled: map[handleKey]*handled{},
		next: map[group.ID]uint64{}, deleted: map[group.ID]bool{}, hidden: map[group.ID]bool{}, sendDeleted: map[string]bool{}, removed: map[group.ID]bool{}, byGen: map[group.ID][]int{}, byGroup: map[string][]int{}}
}

func (m *model) note(id int, format string, args ...any) {
	r := &m.recs[id]
	if len(r.trace) < 40 {
		r.trace = append(r.trace, fmt.Sprintf("    +%v %s", m.wd.now.Sub(epoch), fmt.Sprintf(format, args...)))
	}
}

// trace explains one message: its plan and what happened to it.
func (m *model) trace(id int) string {
	pm := m.wd.w.msgs[id]
	g := m.wd.w.groups[pm.g]
	r := &m.recs[id]
	s := fmt.Sprintf("  message %d: group %q n%d->n%d flags=%+v pattern=%v timing=%+v guaranteed=%v lifetime=%v last=%v ref=%+v expiry=+%v\n",
		id, g.key, g.from, g.to, g.flags, g.pattern, g.timing, g.guaranteed, pm.lifetime, pm.last, r.ref, r.expiry.Sub(epoch))
	return s + strings.Join(r.trace, "\n")
}

func (m *model) refused(id int, err error) (retry bool) {
	r := &m.recs[id]
	r.refusals++
	m.note(id, "submit refused: %v", err)
	transient := errors.Is(err, sender.ErrBoundsFull) || errors.Is(err, sender.ErrGroupAborted)
	if transient && r.refusals < 20 {
		return true
	}
	label := "other"
	for _, e := range []error{sender.ErrBoundsFull, sender.ErrGroupAborted, sender.ErrGroupParams, sender.ErrInvalidSubmission} {
		if errors.Is(err, e) {
			label = e.Error()
		}
	}
	if label == "other" || errors.Is(err, sender.ErrGroupParams) {
		m.wd.violate(id, "the workload's submission was refused unexpectedly: %v", err)
	}
	m.wd.res.Refused[label]++
	return false
}

func (m *model) submitted(id int, ref sender.MessageRef, expiry time.Time) {
	r := &m.recs[id]
	r.submitted, r.ref, r.expiry = true, ref, expiry
	if old, dup := m.byRef[ref]; dup {
		m.wd.violate(id, "R05/R90: Submit returned ref %+v already given to message %d", ref, old)
	}
	m.byRef[ref] = id
	m.byGroup[ref.GroupID] = append(m.byGroup[ref.GroupID], id)
	m.wd.res.Submitted++
	m.note(id, "submitted as %s#%d", ref.GroupID, ref.Number)
}

// lost forgets a submission whose Persist failed; it is submitted again.
func (m *model) lost(id int) {
	r := &m.recs[id]
	delete(m.byRef, r.ref)
	gs := m.byGroup[r.ref.GroupID]
	m.byGroup[r.ref.GroupID] = gs[:len(gs)-1]
	m.wd.res.Submitted--
	m.note(id, "submission lost with its failed Persist; submitting again")
	r.submitted = false
}

func (m *model) transmitted(ref rmp.OutboundRef) {
	if id, ok := m.byRef[ref.Message]; ok {
		m.recs[id].sends++
		if ref.Attempt < 3 || ref.Attempt%10 == 0 {
			m.note(id, "transmission attempt %d", ref.Attempt)
		}
	}
}

// messageOf reads the plan id out of a delivered envelope.
func messageOf(payload []byte) (int, bool) {
	s := string(payload)
	i := strings.Index(s, `urn:sim">`)
	if i < 0 {
		return 0, false
	}
	s = s[i+len(`urn:sim">`):]
	j := strings.IndexByte(s, '<')
	if j < 0 {
		return 0, false
	}
	id, err := strconv.Atoi(s[:j])
	return id, err == nil
}

// deliver is the consumer: it checks each hand-off, sometimes refuses it,
// and otherwise takes it.
func (m *model) deliver(n *node, d rmp.Delivery) (taken bool) {
	wd := m.wd
	now := n.now()               // expiry is judged by the consumer's node clock (D9, D12)
	defer n.complete(d.Ref, nil) // an answer still waiting goes out as it is
	id, ok := messageOf(d.Payload)
	if !ok || id >= len(m.recs) || !m.recs[id].submitted {
		wd.violate(-1, "%s: delivery %+v of an unknown message: %.200q", n.name, d.Ref, d.Payload)
		return false
	}
	r := &m.recs[id]
	g := &wd.w.groups[wd.w.msgs[id].g]
	key := deliveryKey{d.Ref.Group, d.Ref.HasNumber, d.Ref.Number}
	if key.id.GroupID != r.ref.GroupID || key.hasNumber == r.ref.Singleton || key.number != r.ref.Number || n.idx != g.to {
		wd.violate(id, "%s: delivery identity %+v does not match the message's ref %+v", n.name, d.Ref, r.ref)
		return false
	}
	// D9, D12, R47: nothing is made available after its ExpiryTime.
	if now.After(d.Expiry) || now.After(r.expiry) {
		wd.violate(id, "D9/D12: handed out at +%v after ExpiryTime +%v", now.Sub(epoch), d.Expiry.Sub(epoch))
	}
	if d.Expiry.After(r.expiry) || d.Expiry.Before(r.expiry.Add(-time.Second)) {
		wd.violate(id, "D9: delivered ExpiryTime +%v differs from the submitted +%v", d.Expiry.Sub(epoch), r.expiry.Sub(epoch))
	}
	if t := m.taken[key]; t != nil && !g.flags.DuplicateElimination && !g.flags.MessageOrder {
		// R44: without DuplicateElimination a resend may be delivered
		// again, under the same identity.
		t = nil
		_ = t
	} else if t != nil {
		// A hand-off of an identity already taken: allowed only when the
		// Taken never became durable before a restart (R92).
		if t.durable && m.removed[key.id] && n.skew < t.skew {
			// The receiver's clock went back past the removal of the
			// generation, which the resend then reopened with the same
			// number; the consumer, idempotent on it (R92), confirms it.
			wd.res.Exclusions[clockBackLabel]++
			m.note(id, "handed out again under %v after the receiver's clock was set back", key)
			m.take(n, id, d.Ref, key)
			return true
		}
		if t.durable {
			wd.violate(id, "R92/D18: %v handed out again after its Taken was durable", key)
			return false
		}
		wd.res.Redelivery++
		m.note(id, "handed out again after a restart (gen %d), taken again", key.id.Generation)
		m.take(n, id, d.Ref, key)
		return true
	}
	if m.hidden[key.id] {
		if g.flags.DuplicateElimination || g.flags.MessageOrder || m.taken[key] == nil {
			wd.violate(id, "%v handed out from a receiving generation the operator deleted", key)
			return false
		}
		// A resend of a number it took: without DuplicateElimination a
		// copy may be delivered again (R44), the deleted generation too
		// (seeds 2000800, 2001801; reported).
		wd.res.Exclusions["R44 copy handed out again by a receiving generation the operator deleted"]++
	}
	if wd.chance(wd.p.consumerFail) {
		m.note(id, "consumer refused hand-off %d", d.Attempt)
		n.e.DeliveryFailed(now, d.Ref)
		n.complete(d.Ref, nil)
		return false
	}
	if g.flags.MessageOrder {
		// D14, R47, R49: an ordered generation takes 0,1,2,… with no gap.
		if want := m.next[key.id]; !key.hasNumber || key.number != want {
			wd.violate(id, "D14: ordered %s gen %d handed out %d while %d is next", key.id.GroupID, key.id.Generation, key.number, want)
			return false
		}
		m.next[key.id]++
	}
	if len(r.taken) > 0 {
		switch {
		case !g.flags.DuplicateElimination:
			wd.res.Exclusions["duplicate delivered without DuplicateElimination (allowed, R44)"]++
		case m.deleted[r.taken[0].id]:
			// D17: duplicates are detected while the group's state exists;
			// the operator deleted it, and an unacknowledged resend opened
			// a new generation.
			wd.res.Exclusions["delivered again after the operator deleted its receiving generation (D17)"]++
		case m.removed[r.taken[0].id] && n.skew < r.takeSkew:
			wd.res.Exclusions[clockBackLabel]++
		default:
			wd.violate(id, "D18/R44: delivered twice with DuplicateElimination: first %v, now %v", r.taken[0], key)
			return false
		}
	} else {
		wd.res.Delivered++
	}
	if len(r.taken) == 0 {
		r.takeSkew = n.skew
	}
	r.taken = append(r.taken, key)
	if m.taken[key] == nil {
		m.taken[key] = &take{msg: id, skew: n.skew}
	}
	m.byGen[key.id] = append(m.byGen[key.id], id)
	m.note(id, "taken by the consumer (gen %d, attempt %d)", key.id.Generation, d.Attempt)
	m.take(n, id, d.Ref, key)
	return true
}

// take reports a hand-off taken and, for a request-response message, the
// consumer's business response (R73), which its waiting answer carries.
func (m *model) take(n *node, id int, ref receiver.DeliveryRef, key deliveryKey) {
	now := n.now()
	n.e.Taken(now, ref)
	n.undurTaken = append(n.undurTaken, key)
	var resp []byte
	if m.wd.responds(id) {
		resp = businessResponse(id)
		n.e.Respond(now, ref, resp)
		m.recs[id].responded = true
	}
	n.complete(ref, resp)
}

// outcome is the producer: each outcome is reported exactly once (D27).
func (m *model) outcome(n *node, o sender.Outcome) {
	wd := m.wd
	m.outcomeResponse(o)
	hk := handleKey{n.idx, o.ID}
	if h := m.handled[hk]; h != nil {
		if h.durable {
			wd.violate(m.byRef[o.Ref], "D27: outcome %d (%v) reported again after it was durably handled", o.ID, o.Kind)
			return
		}
		wd.res.Rereported++
	} else {
		id, ok := m.byRef[o.Ref]
		if !ok {
			wd.violate(-1, "%s: outcome %+v for a message never submitted", n.name, o)
			return
		}
		r := &m.recs[id]
		if !wd.w.groups[wd.w.msgs[id].g].flags.AckRequested {
			wd.violate(id, "a best-effort message (no AckRequested) got an outcome: %+v", o)
		}
		if o.Kind == sender.Failed && o.Reason == sender.ReasonNone || o.Kind != sender.Failed && o.Kind != sender.Acknowledged {
			wd.violate(id, "D27: outcome without a reason: %+v", o)
		}
		r.outcomes = append(r.outcomes, o)
		m.note(id, "outcome %v %v (attempts %d)", o.Kind, o.Reason, o.Attempts)
		m.handled[hk] = &handled{}
	}
	n.e.OutcomeHandled(n.now(), o.ID)
	n.undurHandled = append(n.undurHandled, o.ID)
}

// receiverEvent checks removals (D20–D23) and records discards.
func (m *model) receiverEvent(n *node, ev *receiver.Event) {
	wd := m.wd
	switch ev.Kind {
	case receiver.EventTerminated, receiver.EventRemoved:
		wd.res.Rules[fmt.Sprintf("receiver %v %v", ev.Kind, ev.Rule)]++
		m.receiverDeleted(ev)
	case receiver.EventDiscarded:
		ref := sender.MessageRef{GroupID: ev.Group.GroupID, Number: ev.Number, Singleton: !ev.HasNumber}
		if id, ok := m.byRef[ref]; ok {
			m.recs[id].discarded = true
			m.note(id, "receiver discarded it: %v %s", ev.Code, ev.Label)
		}
	}
	if ev.Kind != receiver.EventRemoved {
		return
	}
	m.removed[ev.Group] = true
	// State is removed no earlier than D20–D23 allow: after groupExpiryTime
	// under t1, otherwise after the ExpiryTime of every message taken in
	// the generation (the duplicate window, D17, D21, D23).
	for _, id := range m.byGen[ev.Group] {
		g := &wd.w.groups[wd.w.msgs[id].g]
		r := &m.recs[id]
		switch {
		case ev.Rule == group.RuleDeleted:
		case ev.Rule == group.RuleT1 || (ev.Rule == group.RuleT31 || ev.Rule == group.RuleT32) && g.timing.HasExpiry():
			if !n.now().After(g.timing.Expiry) {
				wd.violate(id, "D20: receiver removed %v under %v before groupExpiryTime", ev.Group, ev.Rule)
			}
		default:
			if !n.now().After(r.expiry) {
				wd.violate(id, "D21/D23: receiver removed %v under %v before the ExpiryTime of a message it took", ev.Group, ev.Rule)
			}
		}
	}
	delete(m.byGen, ev.Group)
}

// senderEvent checks that a sending group is removed only once every one
// of its messages has an outcome (D16, D20–D23, D27).
func (m *model) senderEvent(n *node, ev *sender.Event) {
	wd := m.wd
	wd.res.Rules[fmt.Sprintf("sender %v %v", ev.Kind, ev.Rule)]++
	if ev.Rule == group.RuleDeleted {
		m.senderDeleted(ev.GroupID)
	}
	if ev.Kind != sender.EventRemoved {
		return
	}
	for _, id := range m.byGroup[ev.GroupID] {
		if len(m.recs[id].outcomes) == 0 && wd.w.groups[wd.w.msgs[id].g].flags.AckRequested {
			wd.violate(id, "D27: sending group %s removed (%v) while a message has no outcome", ev.GroupID, ev.Rule)
			return
		}
	}
}

// rebuilt notes a restart of n.
func (m *model) rebuilt(n *node) {}

// bounds checks bounded memory after each drain (D15, sender Limits).
func (m *model) bounds(n *node) {
	rs := n.e.Admin().ReceiverStats()
	if rs.HeldMessages > n.cfg.Receiver.MaxHeldTotal {
		m.wd.violate(-1, "D15: %s holds %d messages, limit %d", n.name, rs.HeldMessages, n.cfg.Receiver.MaxHeldTotal)
	}
	if p := n.e.Admin().Metrics().Pending; p > n.cfg.Sender.Limits.MaxPending {
		m.wd.violate(-1, "%s: %d pending messages, limit %d", n.name, p, n.cfg.Sender.Limits.MaxPending)
	}
}
