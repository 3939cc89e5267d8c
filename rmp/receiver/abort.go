package receiver

import (
	"slices"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// Abort deletes every listed generation of groupID on an operator's request
// (gateway DELETE /v1/groups/{groupId}?role=receiver). Each leaves Groups at
// once; its held messages and hand-offs not yet taken are discarded with
// GroupAborted, reported through the group's reply pattern (D13, R75). Its
// state stays, hidden, until the latest ExpiryTime among the discarded
// messages has passed, so that PollRequests and duplicates are still
// answered with those faults (D17, D24); with nothing discarded it is
// removed at once, unless it holds faults of earlier discards a poll may
// still ask about (Response and Poll: FaultRetention more, D13). Events report each discard, the termination and the
// removal under group.RuleDeleted. Unknown ids are ignored.
func (r *Receiver) Abort(now time.Time, groupID string) Ready {
	r.begin()
	f := r.groups[groupID]
	if f == nil {
		r.event(Event{Kind: EventIgnored, Group: group.ID{GroupID: groupID}, Label: "receiver.abort-unknown"})
		return r.finish(now)
	}
	r.advanceFamily(now, f) // due expiries and terminations apply first
	for _, g := range slices.Clone(f.gens) {
		if !g.has(removedBit) && listed(g) {
			r.abortGeneration(now, g)
		}
	}
	return r.finish(now)
}

// abortGeneration discards what g has not handed over and marks it deleted.
// The discards may take several steps (budget.go): the termination and
// the shared retention come first, with the first page.
func (r *Receiver) abortGeneration(now time.Time, g *gstate) {
	r.touch(g)
	// Every discarded message shares one retention: the latest ExpiryTime
	// among them (gateway notes), so compute it first.
	until := g.buf.LatestExpiry()
	for _, d := range g.pending {
		until = latest(until, d.expiry)
	}
	removeAt := now
	if g.buf.Len()+len(g.pending) > 0 {
		removeAt = group.PassDeadline(until)
	}
	if g.lc.Terminated {
		g.lc.Rule, g.lc.RemoveAt = group.RuleDeleted, removeAt
	} else {
		g.lc.Terminate(now, group.RuleDeleted, removeAt)
	}
	r.discardAborted(now, g, until)
	r.event(Event{Kind: EventTerminated, Group: g.id, Rule: group.RuleDeleted})
	r.dirty(g)
	// Faults it already held (an earlier discard) stay answerable like any
	// others: the sender may still be asking (D13, tick.go pollFaults).
	if !now.Before(removeAt) && !unfinished(g) && !(pollFaults(g) && keepsDeletedFaults(g)) {
		r.remove(g, group.RuleDeleted)
	}
}

// discardAborted discards deleted g's held messages, then its hand-offs
// not yet taken, with GroupAborted retained until until, as far as this
// call's budget goes.
func (r *Receiver) discardAborted(now time.Time, g *gstate, until time.Time) {
	for _, h := range r.drainHeld(g) {
		r.del(r.key(g, group.KindHeld, h.Number))
		r.discardUntil(now, g, h.Number, until, faults.GroupAborted, "receiver.group-deleted")
	}
	if g.buf.Len() > 0 {
		return
	}
	for _, n := range sortedKeys(g.pending) {
		if r.full() {
			return
		}
		r.dropPending(g, n)
		r.discardUntil(now, g, n, until, faults.GroupAborted, "receiver.group-deleted")
	}
}
