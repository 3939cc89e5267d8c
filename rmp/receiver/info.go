package receiver

import (
	"slices"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// GroupInfo describes one group generation in state, for the gateway's
// GET /v1/groups and metrics. Its slices belong to the caller.
type GroupInfo struct {
	GroupID string
	// Generation starts at 1 and counts the GroupId's generations (D24).
	Generation uint64
	// Singleton: a message without SequenceNum (D1); it has no numbers, so
	// Ranges is empty and HasLast false.
	Singleton bool
	// Terminated: the generation expects no new message (D14, D20–D23);
	// Rule says why.
	Terminated bool
	Rule       group.Rule
	// Ranges are the received numbers: sorted, disjoint, non-adjacent.
	Ranges []group.Range
	// Held counts the messages not yet taken by the consumer: the ordering
	// buffer plus the hand-offs waiting or in flight (R47, R48).
	Held int
	// LastNumber is the number of the message with last="true"; valid when
	// HasLast.
	LastNumber uint64
	HasLast    bool
	// NextDeadline is the next instant Tick has work for this generation;
	// valid when HasDeadline.
	NextDeadline time.Time
	HasDeadline  bool
	Flags        group.Flags
	// LastActivity is when the generation last received a message (D21).
	LastActivity time.Time
}

// Stats are counts for metrics (wsrkit_held_messages,
// wsrkit_open_groups{role="receiver"}).
type Stats struct {
	// Groups counts listed group generations; OpenGroups those of them not
	// terminated.
	Groups, OpenGroups int
	// HeldMessages and HeldBytes total the ordering buffers (D15).
	HeldMessages, HeldBytes int
	// PendingDeliveries counts accepted messages not yet taken (waiting or
	// in flight).
	PendingDeliveries int
	// PendingCallbacks counts callback entries queued or in flight (R75).
	PendingCallbacks int
}

// listed reports whether g shows in Groups: a generation deleted by Abort
// is gone from listings at once, though its faults stay answerable.
func listed(g *gstate) bool { return !g.deleted() }

func (r *Receiver) info(g *gstate) GroupInfo { return infoInto(g, nil) }

// infoInto is g's GroupInfo with its Ranges appended to buf.
func infoInto(g *gstate, buf []group.Range) GroupInfo {
	gi := GroupInfo{
		GroupID: g.id.GroupID, Generation: g.id.Generation, Singleton: g.singleton,
		Terminated: g.lc.Terminated, Rule: g.lc.Rule, Held: len(g.pending), Flags: g.flags,
		NextDeadline: g.deadline, HasDeadline: g.has(hasDeadlineBit), LastActivity: g.lc.LastActivity,
		Ranges: buf,
	}
	if !g.singleton {
		gi.Ranges = g.received.AppendRanges(buf)
		gi.LastNumber, gi.HasLast = g.lc.Last, g.lc.HasLast
	}
	gi.Held += g.buf.Len() // 0 unless ordered
	if !gi.HasDeadline {
		gi.NextDeadline = time.Time{}
	}
	return gi
}

// Groups returns every listed group generation, sorted by GroupID then
// Generation.
func (r *Receiver) Groups() []GroupInfo {
	ids := make([]string, 0, len(r.groups))
	for id := range r.groups {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []GroupInfo
	for _, id := range ids {
		for _, g := range r.groups[id].gens { // sorted by generation
			if listed(g) {
				out = append(out, r.info(g))
			}
		}
	}
	return out
}

// Group returns the newest listed generation of groupID.
func (r *Receiver) Group(groupID string) (GroupInfo, bool) {
	f := r.groups[groupID]
	if f == nil {
		return GroupInfo{}, false
	}
	for i := len(f.gens) - 1; i >= 0; i-- {
		if g := f.gens[i]; listed(g) {
			return r.info(g), true
		}
	}
	return GroupInfo{}, false
}

// Stats returns the current counts.
func (r *Receiver) Stats() Stats {
	st := Stats{HeldMessages: r.heldCount, HeldBytes: r.heldBytes}
	for _, f := range r.groups {
		for _, g := range f.gens {
			st.PendingDeliveries += len(g.pending)
			if !listed(g) {
				continue
			}
			st.Groups++
			if !g.lc.Terminated {
				st.OpenGroups++
			}
		}
	}
	st.PendingCallbacks = r.out.queued
	for _, fl := range r.out.flights {
		st.PendingCallbacks += len(fl.entries)
	}
	return st
}

// Undelivered reports whether the message ref names is accepted and not yet
// taken by the consumer: held out of order, or waiting for (or in) its
// hand-off. A driver holding the HTTP answer of a Response-pattern message
// for its business response (R73) waits only for such a message.
func (r *Receiver) Undelivered(ref DeliveryRef) bool {
	g := r.lookup(ref.Group)
	if g == nil || g.singleton == ref.HasNumber {
		return false
	}
	n := ref.Number
	if g.singleton {
		n = 0
	}
	_, pending := g.pending[n]
	return pending || g.buf.IsHeld(n)
}
