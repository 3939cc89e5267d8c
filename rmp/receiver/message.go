package receiver

import (
	"errors"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// Message processes a reliable message that arrived at now.
func (r *Receiver) Message(now time.Time, m Message) Ready {
	r.begin()
	r.message(now, &m)
	return r.finish(now)
}

func (r *Receiver) message(now time.Time, m *Message) {
	if f := checkRequest(m); f != nil {
		f.GroupID = m.GroupID
		r.rd.SOAPFault = f
		r.event(Event{Kind: EventRefused, Group: group.ID{GroupID: m.GroupID}, Code: f.Code, Label: f.Rule})
		return
	}
	if rf := r.checkMessage(m); rf != nil {
		r.refuse(now, m, nil, *rf)
		return
	}
	if rf := r.checkLifetime(now, m); rf != nil {
		r.refuse(now, m, nil, *rf)
		return
	}
	if group.Passed(m.Expiry, now) {
		// D11, R39: expired on arrival — not accepted; MessageExpired only
		// when AckRequested. D17: no duplicate check is needed for it.
		rf := refusal{faults.MessageExpired, "receiver.expired-on-arrival"}
		if m.Flags.AckRequested {
			r.refuse(now, m, nil, rf)
		} else {
			r.event(Event{Kind: EventRefused, Group: group.ID{GroupID: m.GroupID}, HasNumber: m.HasNumber,
				Number: m.Number, Code: rf.code, Label: rf.label})
		}
		return
	}
	if !r.allowed(m.Peer, m.GroupID) {
		r.refuseForeign(m, LabelGroupNotAllowed)
		return
	}
	if f := r.groups[m.GroupID]; f != nil {
		r.advanceFamily(now, f) // due terminations apply before this message
	}
	if r.foreign(m.GroupID, m.Peer) {
		r.refuseForeign(m, LabelForeignPeer)
		return
	}
	if m.HasNumber {
		r.sequenced(now, m)
	} else {
		r.singletonMsg(now, m)
	}
}

// singletonMsg handles a message without SequenceNum (D1, R06).
func (r *Receiver) singletonMsg(now time.Time, m *Message) {
	f := r.groups[m.GroupID]
	if f != nil {
		for _, g := range f.gens {
			if g.singleton {
				r.duplicate(now, m, g, 0) // D17, D18: id kept until its expiry
				return
			}
		}
		if cur := f.current(); cur != nil && !cur.lc.Terminated {
			r.refuse(now, m, nil, refusal{faults.InvalidMessageId, "receiver.singleton-id-in-use"})
			return
		}
	}
	g := r.open(now, m, f)
	if g == nil {
		return
	}
	g.singleton = true
	g.setExpiry(m.Expiry)
	g.received.Add(0) //nolint:errcheck // empty set
	r.accept(now, m, g)
}

// sequenced handles a message with SequenceNum.
func (r *Receiver) sequenced(now time.Time, m *Message) {
	f := r.groups[m.GroupID]
	var cur *gstate
	if f != nil {
		// D24: a number recorded (and, by D11, not expired) in a terminated
		// generation is a duplicate there.
		for i := len(f.gens) - 1; i >= 0; i-- {
			g := f.gens[i]
			if !g.singleton && g.lc.Terminated && g.received.Contains(m.Number) {
				r.duplicate(now, m, g, m.Number)
				return
			}
		}
		cur = f.current()
		if cur != nil && cur.singleton {
			r.refuse(now, m, nil, refusal{faults.InvalidMessageId, "receiver.sequence-id-is-singleton"})
			return
		}
	}
	if cur == nil || cur.lc.Terminated {
		// D24: any other message of a terminated group opens a new generation.
		prevMax := uint64(0)
		if f != nil {
			prevMax = f.maxGen
		}
		if cur = r.open(now, m, f); cur == nil {
			return
		}
		if !r.accept(now, m, cur) {
			// R94: a defence; open already refuses what D15 would.
			r.unopen(cur, prevMax)
		}
		return
	}
	if rf := checkGroup(cur, m); rf != nil {
		r.refuse(now, m, cur, *rf)
		return
	}
	if cur.received.Contains(m.Number) {
		r.duplicate(now, m, cur, m.Number)
		return
	}
	r.accept(now, m, cur)
}

// open creates the next generation of m's group, or refuses m when the
// group limit is reached or m, early in a new ordered group, would overflow
// the ordering buffers (D15). Refusing before creating keeps a generation
// without an accepted message from ever existing: it would be stored with
// no reply pattern, which Recover rejects, and never removed (R94).
func (r *Receiver) open(now time.Time, m *Message, f *family) *gstate {
	if r.states >= r.cfg.MaxGroups {
		r.refuse(now, m, nil, refusal{faults.MessageStoreOverflow, "receiver.too-many-groups"})
		return nil
	}
	if p := r.peers[m.Peer]; p != nil && p.groups >= r.cfg.MaxGroupsPerPeer {
		r.refuse(now, m, nil, refusal{faults.MessageStoreOverflow, "receiver.too-many-groups-peer"})
		return nil
	}
	if m.HasNumber && m.Flags.MessageOrder && m.Number > 0 { // held: the next in order is 0
		if rf := r.holdRefusal(0, 0, len(m.Payload)); rf != nil {
			r.refuse(now, m, nil, *rf)
			return nil
		}
	}
	gen := uint64(1)
	if f != nil {
		gen = f.maxGen + 1
	}
	g := r.newState(group.ID{GroupID: m.GroupID, Generation: gen})
	g.peer = r.peerOf(m.Peer)
	g.flags = m.Flags
	g.lc.Ordered = m.Flags.MessageOrder
	if m.HasNumber && m.Flags.MessageOrder {
		g.buf.reset(0, false)
	}
	r.addState(g)
	r.dirty(g)
	if gen > 1 {
		r.event(Event{Kind: EventGeneration, Group: g.id})
	}
	return g
}

// unopen forgets g, just opened by open, whose first message was refused:
// nothing of it was stored (R94). prevMax is its family's maxGen before.
func (r *Receiver) unopen(g *gstate, prevMax uint64) {
	r.dropState(g)
	if f := r.groups[g.id.GroupID]; f != nil {
		f.maxGen = prevMax
	}
}

// accept stores a new message of g: held when it is early in an ordered
// group, otherwise queued for the consumer (D8, D14, D15). It reports
// whether m was accepted.
func (r *Receiver) accept(now time.Time, m *Message, g *gstate) bool {
	n := m.Number
	if g.singleton {
		n = 0
	}
	if g.ordered() {
		if next, _ := g.buf.Next(); n > next {
			if !r.hold(now, m, g) {
				return false
			}
			r.acceptedMeta(now, m, g)
			if !r.cfg.AckOnDelivery {
				r.ack(now, m, g, n) // D8: held counts as durably accepted
			} else {
				r.pendingFaults(m, g)
			}
			r.advanceLifecycle(now, g)
			return true
		}
	}
	if !g.singleton {
		if err := r.addReceived(g, n); err != nil {
			r.overflowRanges(now, m, g, err)
			return false
		}
	}
	r.acceptedMeta(now, m, g)
	if g.ordered() {
		g.buf.Advance()
		r.enqueue(g, n, m.Expiry, m.content())
		r.release(g)
		r.pumpOrdered(now, g)
	} else {
		r.enqueue(g, n, m.Expiry, m.content())
		r.emit(now, g, n, false)
	}
	if !r.cfg.AckOnDelivery {
		r.ack(now, m, g, n)
	} else {
		r.pendingFaults(m, g)
	}
	r.advanceLifecycle(now, g)
	return true
}

func (r *Receiver) overflowRanges(now time.Time, m *Message, g *gstate, err error) {
	if errors.Is(err, group.ErrTooManyRanges) {
		// Interpretation: the range cap is a store bound (D15).
		r.refuse(now, m, g, refusal{faults.MessageStoreOverflow, "receiver.too-many-ranges"})
		return
	}
	r.refuse(now, m, g, refusal{faults.MessageProcessingFailure, "receiver.received-set"})
}

// hold puts an early message of an ordered group into its buffer (R48),
// within the bounds of D15. It reports whether m was stored.
func (r *Receiver) hold(now time.Time, m *Message, g *gstate) bool {
	c := m.content()
	size := c.size()
	if rf := r.holdRefusal(g.buf.Len(), g.buf.Bytes(), size); rf != nil {
		// D15: refuse the newcomer, keep everything already accepted.
		r.refuse(now, m, g, *rf)
		return false
	}
	if err := r.addReceived(g, m.Number); err != nil {
		r.overflowRanges(now, m, g, err)
		return false
	}
	g.buf.Push(group.Held[content]{Number: m.Number, Expiry: m.Expiry, Bytes: size, Item: c})
	if g.buf.Len() == 1 || m.Expiry.Before(g.heldMinAt()) {
		g.setHeldMin(m.Expiry)
	}
	r.heldCount++
	r.heldBytes += size
	r.putMsg(g, group.KindHeld, m.Number, m.Expiry, c)
	r.numEvent(EventHeld, g, m.Number, 0, "")
	return true
}

// holdRefusal is the D15 refusal of one more held message of size bytes in
// a group holding held messages of heldBytes, nil when it fits.
func (r *Receiver) holdRefusal(held, heldBytes, size int) *refusal {
	switch {
	case held+1 > r.cfg.MaxHeldPerGroup:
		return &refusal{faults.MessageStoreOverflow, "receiver.held-overflow-group"}
	case heldBytes+size > r.cfg.MaxHeldBytesPerGroup:
		return &refusal{faults.MessageStoreOverflow, "receiver.held-bytes-overflow-group"}
	case r.heldCount+1 > r.cfg.MaxHeldTotal:
		return &refusal{faults.MessageStoreOverflow, "receiver.held-overflow-total"}
	case r.heldBytes+size > r.cfg.MaxHeldBytesTotal:
		return &refusal{faults.MessageStoreOverflow, "receiver.held-bytes-overflow-total"}
	}
	return nil
}

// acceptedMeta records what an accepted message says about its group.
func (r *Receiver) acceptedMeta(now time.Time, m *Message, g *gstate) {
	g.pattern = m.Pattern
	g.setReplyTo(m.ReplyTo)
	if g.singleton {
		r.dirty(g)
		return
	}
	t := &g.lc.Timing
	if m.Timing.HasExpiry() && !t.HasExpiry() {
		t.Expiry = m.Timing.Expiry.UTC() // A6: adopt the first carrier's value
	}
	if m.Timing.HasMaxIdle && !t.HasMaxIdle {
		t.MaxIdle, t.HasMaxIdle = m.Timing.MaxIdle, true
	}
	if m.Number == 0 && m.Timing.None() {
		g.mark(plainZeroBit, true)
	}
	g.lc.Observe(now, m.Expiry)
	if m.Last {
		g.lc.HasLast, g.lc.Last = true, m.Number
	}
	if g.lc.HasLast {
		g.lc.Complete = g.received.ContainsAll(g.lc.Last)
	}
	r.dirty(g)
}

// enqueue records an accepted message for the consumer (KindDelivery).
func (r *Receiver) enqueue(g *gstate, n uint64, expiry time.Time, c content) {
	r.addPending(g, n, delivery{expiry: expiry, content: c})
	r.putMsg(g, group.KindDelivery, n, expiry, c)
	r.touch(g)
}

// release moves held messages that became in order into the delivery
// queue (R47, R48).
func (r *Receiver) release(g *gstate) {
	if g.buf.Len() == 0 {
		return
	}
	if next, _ := g.buf.Next(); !g.buf.IsHeld(next) {
		return
	}
	ready := g.buf.PopReady(nil)
	for _, h := range ready {
		r.heldCount--
		r.heldBytes -= h.Bytes
		r.del(r.key(g, group.KindHeld, h.Number))
		r.enqueue(g, h.Number, h.Expiry, h.Item)
	}
	r.recomputeHeldMin(g)
}

func (r *Receiver) recomputeHeldMin(g *gstate) {
	if at, ok := g.buf.EarliestExpiry(); ok {
		g.setHeldMin(at)
	}
}

// duplicate answers a copy of the recorded number n of g (D18, D19, R44–R46).
func (r *Receiver) duplicate(now time.Time, m *Message, g *gstate, n uint64) {
	r.numEvent(EventDuplicate, g, n, 0, "")
	if !g.lc.Terminated && !g.singleton {
		g.lc.Observe(now, m.Expiry) // a copy is a message received (D21)
		r.dirty(g)
	}
	fr, faulted := g.faultMap()[n]
	_, pending := g.pending[n]
	held := g.buf.IsHeld(n)
	// R46: without DuplicateElimination an unordered copy may be delivered
	// again; never in an ordered group (D19, A10).
	if !faulted && !pending && !held && !g.flags.DuplicateElimination && !g.ordered() {
		r.enqueue(g, n, m.Expiry, m.content())
		r.emit(now, g, n, false)
	}
	if body, ok := g.responseMap()[n]; ok && m.Pattern == group.ReplyResponse {
		r.rd.Response = body // D18, R45
	}
	switch {
	case faulted:
		r.route(now, m, g, n, fr.code)
	case m.Flags.AckRequested && r.ackable(g, n):
		r.route(now, m, g, n, 0) // D18, R44: acknowledged again
	}
	r.pendingFaults(m, g)
}

// ackable reports whether n of g counts as acknowledged (D8).
func (r *Receiver) ackable(g *gstate, n uint64) bool {
	if !g.received.Contains(n) {
		return false
	}
	if _, f := g.faultMap()[n]; f {
		return false
	}
	if !r.cfg.AckOnDelivery {
		return true
	}
	_, pending := g.pending[n]
	return !pending && !g.buf.IsHeld(n)
}

// ack acknowledges n of g through m's reply pattern when AckRequested
// (R40, A16/R82), with the group's unreported faults (D13).
func (r *Receiver) ack(now time.Time, m *Message, g *gstate, n uint64) {
	if m.Flags.AckRequested {
		r.route(now, m, g, n, 0)
	}
	r.pendingFaults(m, g)
}

// route routes one status about n of g through m's reply pattern.
func (r *Receiver) route(now time.Time, m *Message, g *gstate, n uint64, code faults.Code) {
	it := replyItem{groupID: g.id.GroupID, sequence: !g.singleton, from: n, to: n, code: code}
	switch m.Pattern {
	case group.ReplyResponse:
		r.reply.add(it) // R72
	case group.ReplyCallback:
		r.callback(now, m.ReplyTo, it, m.Expiry) // R74
	}
	// Poll: answered from state (R77).
}

// pendingFaults adds the faults of m's group (every generation) not yet
// carried by a Response to this request's Response (D13), and the acks
// made at Taken that wait for one (AckOnDelivery, D8).
func (r *Receiver) pendingFaults(m *Message, _ *gstate) {
	if m.Pattern != group.ReplyResponse {
		return
	}
	f := r.groups[m.GroupID]
	if f == nil {
		return
	}
	for _, g := range f.gens {
		r.pendingAcks(g)
		if g.unreportedCount() == 0 {
			continue
		}
		for _, n := range sortedKeys(g.x.faults) {
			fr := g.x.faults[n]
			if fr.reported {
				continue
			}
			r.reply.add(replyItem{groupID: g.id.GroupID, sequence: !g.singleton, from: n, to: n, code: fr.code})
			fr.reported = true
			g.x.faults[n] = fr
			r.putFault(g, n, fr)
		}
		g.x.unreported = 0
		r.touch(g)
	}
}

// refuse reports a fault about the identified message m, which is not
// accepted (D7, R67). g is its group when known. A refused Callback message
// with a usable ReplyTo gets the fault there (A17); any other goes in this
// request's Response, the one channel left for a message without state.
func (r *Receiver) refuse(now time.Time, m *Message, g *gstate, rf refusal) {
	id := group.ID{GroupID: m.GroupID}
	if g != nil {
		id = g.id
	}
	r.event(Event{Kind: EventRefused, Group: id, HasNumber: m.HasNumber, Number: m.Number, Code: rf.code, Label: rf.label})
	it := replyItem{groupID: m.GroupID, sequence: m.HasNumber, from: m.Number, to: m.Number, code: rf.code}
	if m.Pattern == group.ReplyCallback && usableURL(m.ReplyTo) && !m.ReplyToRefused && !r.cfg.DisableCallback {
		r.callback(now, m.ReplyTo, it, m.Expiry)
	} else {
		r.reply.add(it)
	}
	r.pendingFaults(m, g)
}

// pendingAcks moves g's waiting acks into this request's Response.
func (r *Receiver) pendingAcks(g *gstate) {
	if !g.hasAcks() {
		return
	}
	for run := range g.x.acks.Ranges() {
		r.reply.add(replyItem{groupID: g.id.GroupID, sequence: !g.singleton, from: run.From, to: run.To})
		for n := run.From; ; n++ {
			r.del(r.key(g, group.KindReply, n))
			if n == run.To {
				break
			}
		}
	}
	g.x.acks = group.SeqSet{}
	r.touch(g)
}
