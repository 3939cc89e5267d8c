package sender

import (
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// The send window (Config.Window, #22): a group's messages beyond it are
// stored at Submit (R21) and transmitted for the first time in number
// order as places free, at the end of the input that freed them (finish),
// so that a burst reaches the receiver as runs it accepts in one commit
// each, and every retry timer starts at its message's first transmission.
// A waiting message has attempts == 0 and its timer at its ExpiryTime.

// windowFull reports whether g's next message must wait: the window is
// full, or earlier ones wait already (first transmissions stay in order).
func (s *Sender) windowFull(g *groupState) bool {
	if s.cfg.Window <= 0 {
		return false
	}
	if g.extra().waiting > 0 {
		return true
	}
	return len(g.pending) >= s.cfg.Window
}

// wait stores m untransmitted; its timer is its ExpiryTime (D10).
func (s *Sender) wait(m *message) {
	x := m.g.more()
	if x.waiting == 0 {
		x.sendNext = m.number
	}
	x.waiting++
	m.nextAt = group.PassDeadline(m.expiry)
	m.g.dirty = true
	s.touch(m.g)
	s.dirtyMessage(m) // R21: stored before its first transmission
}

// fillWindow transmits g's waiting messages, lowest first, while the
// window has room. One already expired is left to its timer (D10).
func (s *Sender) fillWindow(now time.Time, g *groupState) {
	if g.extra().waiting == 0 || g.has(gRemoved) {
		return
	}
	x := g.x
	for n := x.sendNext; x.waiting > 0 && len(g.pending)-x.waiting < s.cfg.Window && n <= g.next; n++ {
		x.sendNext = n + 1
		m := g.pending[n]
		if m == nil || m.attempts > 0 || group.Passed(m.expiry, now) {
			continue
		}
		x.waiting--
		s.transmit(now, m)
		s.armRetry(now, m)
	}
}

// recoverWaiting counts a recovered group's untransmitted messages and
// marks it for the first input to fill its window.
func (s *Sender) recoverWaiting(g *groupState, m *message) {
	if m.attempts > 0 {
		return
	}
	x := g.more()
	if x.waiting == 0 || m.number < x.sendNext {
		x.sendNext = m.number
	}
	x.waiting++
	if x.waiting == 1 {
		s.refill = append(s.refill, g)
	}
}
