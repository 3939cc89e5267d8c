package sender

import "time"

// Memory per idle open group is a goal (BENCHMARKS.md): a group keeps no
// pending map while nothing is pending (group.MapPool), and the fields few
// groups set live behind groupState.x, made on first use.

// gextra is the part of a group's state most groups never set.
type gextra struct {
	// replyTo is the Callback pattern's ReplyTo.
	replyTo string
	// removeAt is when a terminated group's state goes (R94): at
	// termination, or after the late-fault window of its acked messages.
	removeAt time.Time
	// lateFailed holds acked numbers that a later fault failed; a repeated
	// fault about them is ignored (R30 spirit).
	lateFailed map[uint64]struct{}
	// id is the stored id of a group recovered under another instance id
	// (ids.go); "" when the id is made from seq.
	id string
	// waiting counts the pending messages not transmitted yet, beyond
	// Config.Window (window.go); sendNext is the lowest number that may be
	// one of them.
	waiting  int
	sendNext uint64
}

// more returns g's extra state, making it on first use.
func (g *groupState) more() *gextra {
	if g.x == nil {
		g.x = &gextra{}
	}
	return g.x
}

// noExtra is what a group without extra state reads; never written.
var noExtra gextra

// extra returns g's extra state to read, all zero when g has none; write
// through more() or the setters instead.
func (g *groupState) extra() *gextra {
	if g.x == nil {
		return &noExtra
	}
	return g.x
}

func (g *groupState) replyURL() string { return g.extra().replyTo }

func (g *groupState) setReplyTo(u string) {
	if g.x != nil || u != "" {
		g.more().replyTo = u
	}
}

func (g *groupState) removeAtTime() time.Time { return g.extra().removeAt }

func (g *groupState) setRemoveAt(t time.Time) {
	if g.x != nil || !t.IsZero() {
		g.more().removeAt = t
	}
}

// lateFailedSet is g's late-failed numbers; nil (read-only) when none.
func (g *groupState) lateFailedSet() map[uint64]struct{} { return g.extra().lateFailed }

func (g *groupState) addLateFailed(n uint64) {
	x := g.more()
	if x.lateFailed == nil {
		x.lateFailed = make(map[uint64]struct{}, 1)
	}
	x.lateFailed[n] = struct{}{}
}

// addPending records pending m of g, taking an emptied map when g has none.
func (s *Sender) addPending(g *groupState, m *message) {
	s.pendFree.Put(&g.pending, &g.bigPending, m.number, m)
}

// removePending forgets pending n of g and releases the map once empty.
func (s *Sender) removePending(g *groupState, n uint64) {
	s.pendFree.Delete(&g.pending, &g.bigPending, n)
}
