package sim

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Clocks. The world's virtual time (world.now) is the true time: it orders
// events and judges the network. Each node reads its own clock, the true
// time plus a skew. A forward jump moves the world's time, so both clocks
// jump together; a backward jump sets one node's clock back, for good, by
// up to maxJump. Every engine input carries its node's clock, and the
// invariants about time judge each side by its own clock (D9–D12: the
// receiving RMP makes a message available no later than its ExpiryTime on
// its clock; removals D20–D23 likewise), the way a deployment can only be
// judged.

// maxJumps forward and maxJumps backward jumps of at most maxJump each
// happen during chaos.
const (
	maxJumps = 2
	maxJump  = 120 * time.Second
)

// clockJump is one clock change during chaos: forward (by > 0, the world's
// time) or back (by < 0, node's clock only).
type clockJump struct {
	at, by time.Duration
	node   int
}

// drawJumps draws the clock changes of a run and returns the time they can
// cost a message: a forward jump its size; a backward one twice its size,
// as the node's clock then disagrees with the other's by as much (a
// message expires that much earlier there) and a timer it armed on the
// old clock fires that much later (seed 1001625: a destination's poll
// timer stalled for the 3m38s its sender's clock went back, and guaranteed
// messages, delivered at once, failed unacknowledged).
func drawJumps(rng *rand.Rand, chaos time.Duration) (js []clockJump, total time.Duration) {
	for _, sign := range []time.Duration{1, -1} {
		for range rng.IntN(maxJumps + 1) {
			j := clockJump{at: time.Duration(rng.Int64N(int64(chaos))), node: rng.IntN(2),
				by: sign * time.Duration(1+rng.Int64N(int64(maxJump/time.Second))) * time.Second}
			js = append(js, j)
			if sign > 0 {
				total += j.by
			} else {
				total -= 2 * j.by // twice |by|
			}
		}
	}
	return js, total
}

func jumpsString(js []clockJump) string {
	s := ""
	for _, j := range js {
		if j.by < 0 {
			s += fmt.Sprintf(" n%d%v@+%v", j.node, j.by, j.at)
		} else {
			s += fmt.Sprintf(" +%v@+%v", j.by, j.at)
		}
	}
	return s
}

// now is n's clock.
func (n *node) now() time.Time { return n.wd.now.Add(n.skew) }

// jump applies a clock change; none after the heal.
func (wd *world) jump(e *event) {
	if wd.healed {
		return
	}
	if e.jump > 0 {
		wd.now = wd.now.Add(e.jump)
		return
	}
	n := wd.nodes[e.node]
	n.skew += e.jump
	wd.res.BackJumps++
	// Its timer, armed on the old clock, fires early; Tick then finds
	// nothing due and the node re-arms on its new clock.
}
