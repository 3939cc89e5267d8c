package receiver

import (
	"container/heap"
	"slices"
	"strings"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// Tick applies the passing of time up to now: expiry of held and pending
// messages (D12, D14), termination and removal (D20–D24), hand-off and
// callback retries.
func (r *Receiver) Tick(now time.Time) Ready {
	r.begin()
	var due []*gstate
	for len(r.heap) > 0 && !now.Before(r.heap[0].deadline) {
		due = append(due, heap.Pop(&r.heap).(*gstate))
	}
	// Deterministic order: by group id, then generation.
	slices.SortFunc(due, byID)
	due = r.takeCarry(now, due)
	for i, g := range due {
		if r.full() {
			// The rest stay due for the next Tick (budget.go), kept in
			// order: pushed back into the heap they were popped and
			// sorted again by every Tick, quadratic in a restart's
			// 200,000 due groups (#18 item 1).
			r.carry, r.carryAt = due[i:], g.deadline
			for _, g := range r.carry {
				g.heapIdx = inCarry
				if g.deadline.Before(r.carryAt) {
					r.carryAt = g.deadline
				}
			}
			break
		}
		r.touch(g)
		r.advanceGroup(now, g)
	}
	return r.finish(now)
}

// inCarry is the heapIdx of a generation in Receiver.carry.
const inCarry = -2

func byID(a, b *gstate) int {
	if c := strings.Compare(a.id.GroupID, b.id.GroupID); c != 0 {
		return c
	}
	return cmpU64(a.id.Generation, b.id.Generation)
}

// takeCarry merges the generations the last Tick left (still due at now)
// into due, both by id: the order of one Tick over all of them. Those
// whose deadline moved past now go back into the heap; removed ones
// are dropped.
func (r *Receiver) takeCarry(now time.Time, due []*gstate) []*gstate {
	if len(r.carry) == 0 {
		return due
	}
	carry := r.carry
	r.carry = nil
	kept := carry[:0]
	for _, g := range carry {
		g.heapIdx = -1
		switch {
		case g.has(removedBit) || !g.has(hasDeadlineBit):
		case now.Before(g.deadline):
			heap.Push(&r.heap, g)
		default:
			kept = append(kept, g)
		}
	}
	if len(due) == 0 {
		return kept
	}
	merged := make([]*gstate, 0, len(kept)+len(due))
	i, j := 0, 0
	for i < len(kept) && j < len(due) {
		if byID(kept[i], due[j]) <= 0 {
			merged, i = append(merged, kept[i]), i+1
		} else {
			merged, j = append(merged, due[j]), j+1
		}
	}
	return append(append(merged, kept[i:]...), due[j:]...)
}

// advanceFamily applies what is due at now to f's generations.
func (r *Receiver) advanceFamily(now time.Time, f *family) {
	// advanceGroup may remove generations from f.gens: walk a copy, on the
	// stack for the usual few.
	var few [4]*gstate
	for _, g := range append(few[:0], f.gens...) {
		if g.has(hasDeadlineBit) && !now.Before(g.deadline) {
			r.touch(g)
			r.advanceGroup(now, g)
		}
	}
}

// advanceGroup applies the passing of time to g.
func (r *Receiver) advanceGroup(now time.Time, g *gstate) {
	if g.has(removedBit) {
		return
	}
	r.finishDiscards(now, g)
	if g.singleton {
		r.expireUnordered(now, g)
		if group.Passed(g.expiryAt(), now) && len(g.pending) == 0 && !r.keepsPollFaults(g, now) {
			rule := group.RuleSingleton // D17
			if g.deleted() {
				rule = group.RuleDeleted
			}
			r.remove(g, rule)
			return
		}
		r.pumpAll(now, g)
		return
	}
	if g.ordered() {
		r.expireOrdered(now, g)
	} else {
		r.expireUnordered(now, g)
	}
	r.advanceLifecycle(now, g)
	if g.has(removedBit) {
		return
	}
	r.pumpAll(now, g)
}

// advanceLifecycle applies D20–D23 and removes g when its time has come.
func (r *Receiver) advanceLifecycle(now time.Time, g *gstate) {
	g.lc.Blocked = g.ordered() && g.buf.Len() > 0
	if tr := g.lc.ReceiverAdvance(now); tr.Terminated {
		r.event(Event{Kind: EventTerminated, Group: g.id, Rule: tr.Rule})
		r.dirty(g)
		// R51, R52: held messages of a terminated group are never delivered.
		r.discardHeld(now, g, "receiver.group-terminated")
	}
	if at, ok := r.removeAt(g); ok && !now.Before(at) {
		r.remove(g, g.lc.Rule)
	}
}

// removeAt is when terminated g may be removed: its lifecycle's RemoveAt,
// once nothing is pending, later by FaultRetention while it holds faults a
// Response has not carried yet, or any fault under Poll (D13).
func (r *Receiver) removeAt(g *gstate) (time.Time, bool) {
	if !g.lc.Terminated || len(g.pending) > 0 || g.buf.Len() > 0 {
		return time.Time{}, false
	}
	if (g.unreportedCount() > 0 || pollFaults(g)) && keepsDeletedFaults(g) {
		return g.lc.RemoveAt.Add(r.cfg.FaultRetention), true
	}
	return g.lc.RemoveAt, true
}

// expireUnordered discards pending messages whose ExpiryTime passed before
// the consumer took them (D12).
func (r *Receiver) expireUnordered(now time.Time, g *gstate) {
	for _, n := range sortedKeys(g.pending) {
		if r.full() {
			return // the rest are still due (budget.go)
		}
		d := g.pending[n]
		if !d.inFlight && group.Passed(d.expiry, now) {
			r.dropPending(g, n)
			r.discard(now, g, n, d.expiry, faults.MessageExpired, "receiver.expired-awaiting-delivery")
		}
	}
}

// expireOrdered applies D14: once a held message, or a pending one waiting
// its turn, has expired, the group cannot deliver in order past it. It is
// terminated; held messages and pending ones from the first expired on are
// discarded, each with MessageExpired (expired) or GroupAborted.
func (r *Receiver) expireOrdered(now time.Time, g *gstate) {
	cut, found := uint64(0), false
	for k := g.nextTake; ; k++ {
		d, ok := g.pending[k]
		if !ok {
			break
		}
		if !d.inFlight && group.Passed(d.expiry, now) {
			cut, found = k, true
			break
		}
		if k == ^uint64(0) {
			break
		}
	}
	heldExpired := g.buf.Len() > 0 && group.Passed(g.heldMinAt(), now)
	if !found && !heldExpired {
		return
	}
	if !g.lc.Terminated {
		g.lc.Terminate(now, group.RuleOrderAbort, group.PassDeadline(g.lc.MaxExpiry))
		r.event(Event{Kind: EventTerminated, Group: g.id, Rule: group.RuleOrderAbort})
		r.dirty(g)
	}
	if found {
		var drop []uint64
		for _, n := range sortedKeys(g.pending) {
			if n >= cut {
				drop = append(drop, n)
			}
		}
		if r.room() < perDiscard*len(drop) {
			// Paged from the top (budget.go): the expired pending[cut]
			// goes last, so the next Tick finds the same cut.
			for i := len(drop) - 1; i >= 0 && !r.full(); i-- {
				r.discardPending(now, g, drop[i])
			}
			return
		}
		for _, n := range drop {
			r.discardPending(now, g, n)
		}
	}
	r.discardHeld(now, g, "receiver.order-abort")
}

// discardHeld empties g's ordering buffer, reporting each message (D14).
func (r *Receiver) discardHeld(now time.Time, g *gstate, label string) {
	if g.buf.Len() == 0 {
		return
	}
	for _, h := range r.drainHeld(g) {
		r.del(r.key(g, group.KindHeld, h.Number))
		r.discard(now, g, h.Number, h.Expiry, expiryCode(h.Expiry, now), label)
	}
}

// perDiscard bounds the mutations of discarding one message: its record,
// its retry state, its fault and a callback entry.
const perDiscard = 4

// drainHeld removes from g's ordering buffer as many held messages, lowest
// first, as this call's budget has room to discard (budget.go).
func (r *Receiver) drainHeld(g *gstate) []group.Held[content] {
	held := g.buf.DrainUpTo(nil, max(r.room()/perDiscard, 1))
	for _, h := range held {
		r.heldCount--
		r.heldBytes -= h.Bytes
	}
	r.recomputeHeldMin(g)
	return held
}

// discardPending drops pending n of terminated g (D14).
func (r *Receiver) discardPending(now time.Time, g *gstate, n uint64) {
	d := g.pending[n]
	r.dropPending(g, n)
	r.discard(now, g, n, d.expiry, expiryCode(d.expiry, now), "receiver.order-abort")
}

// remove deletes g's state: its ids are forgotten (D17, D20–D23, R59).
func (r *Receiver) remove(g *gstate, rule group.Rule) {
	r.rd.Persist = append(r.rd.Persist, group.Mutation{Op: group.OpDeleteGeneration, Key: r.key(g, group.KindMeta, 0)})
	r.event(Event{Kind: EventRemoved, Group: g.id, Rule: rule})
	r.dropState(g)
}

// pollFaults reports whether g holds faults a poll may ask about: a
// PollRequest may reference groups of any reply pattern (digest §8.3, R77),
// and the sender polls acknowledged numbers whose fault may not have
// reached it (a lost Response, a callback given up). No answer is ever
// confirmed, so they stay answerable for FaultRetention after the group's
// state would otherwise go (D13: "for as long as the group's state
// exists").
func pollFaults(g *gstate) bool {
	return g.flags.AckRequested && len(g.faultMap()) > 0
}

// keepsDeletedFaults says whether g, if deleted, keeps its faults past
// RemoveAt like any other generation. A deleted Callback generation keeps
// them only until RemoveAt (gateway notes: the latest ExpiryTime of what
// Abort discarded): they are pushed to ReplyTo for FaultRetention anyway.
// Under Response and Poll the sender learns them only by asking, and its
// last ask comes after that ExpiryTime plus its clock-skew margin (D13).
func keepsDeletedFaults(g *gstate) bool {
	return !g.deleted() || g.pattern != group.ReplyCallback
}

// singletonRemoveAt is when singleton g may be removed: once its
// ExpiryTime has passed (D17), later by FaultRetention when it holds a
// fault a poll may ask about (D13).
func (r *Receiver) singletonRemoveAt(g *gstate) time.Time {
	at := group.PassDeadline(g.expiryAt())
	if pollFaults(g) && keepsDeletedFaults(g) {
		at = at.Add(r.cfg.FaultRetention)
	}
	return at
}

// keepsPollFaults reports whether singleton g stays for its poll faults.
func (r *Receiver) keepsPollFaults(g *gstate, now time.Time) bool {
	return now.Before(r.singletonRemoveAt(g))
}
