package sender

import (
	"cmp"
	"strings"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// Listed is a group in state of the Sender's Listing.
type Listed struct {
	g *groupState
	s *Sender
}

// GroupID returns the group's id.
func (l Listed) GroupID() string { return l.s.idOf(l.g) }

// Generation returns 1: sender group ids are never reused (R05).
func (l Listed) Generation() uint64 { return generation }

// AppendGroupID appends the group's id to b without making it.
func (l Listed) AppendGroupID(b []byte) []byte {
	if id := l.g.foreignID(); id != "" {
		return append(b, id...)
	}
	return appendGroupID(b, l.s.cfg.InstanceID, l.g.seq)
}

// Compare orders the group against the group id and generation given,
// as the Listing does: by id (as strings), then generation.
func (l Listed) Compare(groupID string, gen uint64) int {
	c := 0
	if seq, ok := parseID(groupID, l.s.cfg.InstanceID); ok && l.g.foreignID() == "" {
		c = compareSeqText(l.g.seq, seq)
	} else {
		c = strings.Compare(l.s.idOf(l.g), groupID)
	}
	if c != 0 {
		return c
	}
	return cmp.Compare(generation, gen)
}

// LastActivity returns the group's last message received or sent, the
// zero Time for none: read from the group, not kept in its Summary.
func (l Listed) LastActivity() time.Time { return l.g.life.LastActivity }

// NextDeadline returns the group's next timer, false when none: read
// from the group, not kept in its Summary (group.Summary).
func (l Listed) NextDeadline() (time.Time, bool) {
	if !l.g.tm.scheduled() {
		return time.Time{}, false
	}
	at := l.s.timers.at(&l.g.tm)
	return at, !at.IsZero()
}

// Info returns the group's GroupInfo; its slices belong to the caller.
func (l Listed) Info() GroupInfo { return l.s.info(l.g) }

// Listing is the Sender's index of its groups: it keeps each as its
// groupState alone and shows it as a Listed (8 bytes a group, not 16).
type Listing = group.Listing[*groupState, Listed]

// newListing returns s's empty Listing.
func (s *Sender) newListing() *Listing {
	return group.NewListingView(
		func(a, b *groupState) int { return compareIDs(s.cfg.InstanceID, a, b) },
		func(g *groupState) Listed { return Listed{g, s} })
}

// Listing returns the groups in state (those Groups returns) in the order
// of their ids, each with its Summary (gateway GET /v1/groups, #21). It is
// kept as the groups change: read it between calls and do not modify it.
func (s *Sender) Listing() *Listing { return s.list }

// relist brings g's entry in the Listing up to date: every change of a
// group that a Summary shows touches it, and finish (or Recover) calls
// relist; a removed group leaves the Listing.
func (s *Sender) relist(g *groupState) {
	if g.has(gRemoved) {
		s.list.Delete(g)
		return
	}
	sum := group.Summary{Terminated: g.life.Terminated || g.has(gAborted), Gap: group.HasGap(g.acked.rs)}
	sum.SetHeld(len(g.pending))
	// A lookup (ids compare as numbers, compareIDs): groupState keeps no
	// slot, to stay in its size class (TestGroupStateSize).
	s.list.Add(g, sum)
}
