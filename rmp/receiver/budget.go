package receiver

import (
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// Work per call is bounded (#18): a Persist must fit one store batch, and
// a state the limits let in (many due groups, a group with many messages
// to discard) may need more. Work is cut at a point the state re-derives:
//
//   - Tick handles due groups until Config.MaxStepMutations; the rest stay
//     due, in the order of ids, for the next Tick (Receiver.carry);
//   - discarding a group's messages stops at the budget; what is left is
//     still due: expired pending messages by their ExpiryTime; held
//     messages of a terminated group and anything an Abort left undone by
//     the earliest indexed instant (unfinished), so the next Tick, also
//     after a restart, goes on (finishDiscards).
//
// Each page is one Ready: its answers, deliveries and callbacks leave only
// once it is durable (D8), like any other.

// DefaultMaxStepMutations is Config.MaxStepMutations's default: well inside
// the store's 65,536 mutations per batch, with room for the Node to put
// several steps into one commit.
const DefaultMaxStepMutations = 4096

// room is how many more mutations this call may persist; finish adds up
// to two per touched group (meta and deadline).
func (r *Receiver) room() int {
	return r.cfg.MaxStepMutations - len(r.rd.Persist) - 2*len(r.touched)
}

// full reports that this call's budget is spent.
func (r *Receiver) full() bool { return r.room() <= 0 }

// unfinished reports that g has discards left over from a step cut at the
// budget: held messages of a terminated group (R51, R52) or anything an
// operator's Abort has not yet discarded.
func unfinished(g *gstate) bool {
	return g.lc.Terminated && (g.buf.Len() > 0 || g.deleted() && len(g.pending) > 0)
}

// finishDiscards goes on with the discards of unfinished g.
func (r *Receiver) finishDiscards(now time.Time, g *gstate) {
	if !unfinished(g) {
		return
	}
	if g.deleted() {
		// The retention every discarded message shares was fixed by the
		// first page as RemoveAt (abortGeneration).
		r.discardAborted(now, g, g.lc.RemoveAt)
		return
	}
	label := "receiver.group-terminated"
	if g.lc.Rule == group.RuleOrderAbort {
		label = "receiver.order-abort"
	}
	r.discardHeld(now, g, label)
}
