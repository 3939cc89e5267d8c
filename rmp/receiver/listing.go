package receiver

import (
	"strings"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// Listing is the Receiver's index of its groups, each kept as its Listed.
type Listing = group.Listing[Listed, Listed]

// Listed is a listed group generation of the Receiver's Listing.
type Listed struct{ g *gstate }

// GroupID returns the group's id.
func (l Listed) GroupID() string { return l.g.id.GroupID }

// Generation returns the group's generation.
func (l Listed) Generation() uint64 { return l.g.id.Generation }

// AppendGroupID appends the group's id to b.
func (l Listed) AppendGroupID(b []byte) []byte { return append(b, l.g.id.GroupID...) }

// Compare orders the group against the group id and generation given,
// as the Listing does: by GroupID, then Generation.
func (l Listed) Compare(groupID string, generation uint64) int {
	if c := strings.Compare(l.g.id.GroupID, groupID); c != 0 {
		return c
	}
	return cmpU64(l.g.id.Generation, generation)
}

// LastActivity returns the group's last message received or sent, the
// zero Time for none: read from the group, not kept in its Summary.
func (l Listed) LastActivity() time.Time { return l.g.lc.LastActivity }

// NextDeadline returns the group's next deadline, false when none: read
// from the group, not kept in its Summary (group.Summary).
func (l Listed) NextDeadline() (time.Time, bool) {
	if !l.g.has(hasDeadlineBit) || l.g.deadline.IsZero() {
		return time.Time{}, false
	}
	return l.g.deadline, true
}

// Info returns the group's GroupInfo; its slices belong to the caller.
func (l Listed) Info() GroupInfo { return infoInto(l.g, nil) }

func compareListed(a, b Listed) int { return a.Compare(b.g.id.GroupID, b.g.id.Generation) }

// Listing returns the listed group generations (those Groups returns) in
// the order of GroupID then Generation, each with its Summary (gateway GET
// /v1/groups, #21). It is kept as the groups change: read it between
// calls and do not modify it.
func (r *Receiver) Listing() *Listing { return r.list }

// relist brings g's entry in the Listing up to date: every change of a
// group that a Summary shows goes through finish (or Recover), which
// calls it; a group deleted by Abort or removed leaves the Listing.
func (r *Receiver) relist(g *gstate) {
	if g.has(removedBit) || !listed(g) {
		if g.listSlot != 0 {
			r.list.Delete(Listed{g})
			g.listSlot = 0
		}
		return
	}
	s := group.Summary{Terminated: g.lc.Terminated}
	s.SetHeld(len(g.pending) + g.buf.Len())
	if !g.singleton {
		// group.HasGap of its ranges, without copying them.
		n := g.received.RangeCount()
		s.Gap = n > 1 || (n == 1 && !g.received.ContainsAll(0))
	}
	if g.listSlot == 0 {
		g.listSlot = r.list.Add(Listed{g}, s)
	} else {
		r.list.Update(g.listSlot, s) // no lookup: the hot path's cost
	}
}
