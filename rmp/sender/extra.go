package sender

import "time"

// Memory per idle open group is a goal (BENCHMARKS.md): a group keeps no
// pending map while nothing is pending, and the fields few groups set live
// behind groupState.x, made on first use.

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
}

const (
	// pendingPoolMax bounds the emptied pending maps a Sender keeps.
	pendingPoolMax = 64
	// pendingSmall is the most entries a map may have held to be reused:
	// a map keeps its grown table after it empties.
	pendingSmall = 8
)

// more returns g's extra state, making it on first use.
func (g *groupState) more() *gextra {
	if g.x == nil {
		g.x = &gextra{}
	}
	return g.x
}

func (g *groupState) replyURL() string {
	if g.x == nil {
		return ""
	}
	return g.x.replyTo
}

func (g *groupState) setReplyTo(u string) {
	if g.x != nil || u != "" {
		g.more().replyTo = u
	}
}

func (g *groupState) removeAtTime() time.Time {
	if g.x == nil {
		return time.Time{}
	}
	return g.x.removeAt
}

func (g *groupState) setRemoveAt(t time.Time) {
	if g.x != nil || !t.IsZero() {
		g.more().removeAt = t
	}
}

// lateFailedSet is g's late-failed numbers; nil (read-only) when none.
func (g *groupState) lateFailedSet() map[uint64]struct{} {
	if g.x == nil {
		return nil
	}
	return g.x.lateFailed
}

func (g *groupState) addLateFailed(n uint64) {
	x := g.more()
	if x.lateFailed == nil {
		x.lateFailed = make(map[uint64]struct{}, 1)
	}
	x.lateFailed[n] = struct{}{}
}

// addPending records pending m of g, taking an emptied map when g has none.
func (s *Sender) addPending(g *groupState, m *message) {
	if g.pending == nil {
		if k := len(s.pendFree); k > 0 {
			g.pending = s.pendFree[k-1]
			s.pendFree[k-1] = nil
			s.pendFree = s.pendFree[:k-1]
		} else {
			g.pending = make(map[uint64]*message, 1)
		}
	}
	g.pending[m.number] = m
	if len(g.pending) > pendingSmall {
		g.bigPending = true
	}
}

// removePending forgets pending n of g and releases the map once empty.
func (s *Sender) removePending(g *groupState, n uint64) {
	delete(g.pending, n)
	if g.pending == nil || len(g.pending) > 0 {
		return
	}
	if !g.bigPending && len(s.pendFree) < pendingPoolMax {
		s.pendFree = append(s.pendFree, g.pending)
	}
	g.pending, g.bigPending = nil, false
}
