package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// planGroup is one group of the workload as the producer sees it.
type planGroup struct {
	key        string // GroupKey; "" for a singleton
	from, to   int    // producing and consuming node
	flags      group.Flags
	pattern    group.ReplyPattern
	timing     group.Timing
	guaranteed bool // long lifetime, many retries: must end delivered and acknowledged
	msgs       []int
}

// planMsg is one message the producer will submit.
type planMsg struct {
	id       int
	g        int // index of its planGroup
	at       time.Duration
	lifetime time.Duration
	last     bool
}

// workload is the seeded plan of a run.
type workload struct {
	groups []planGroup
	msgs   []planMsg
}

// makeWorkload draws groups of every kind (D1, D14, D17–D23): singletons,
// ordered and unordered groups with and without DuplicateElimination, with
// and without AckRequested, the
// three reply patterns, groupExpiryTime, groupMaxIdleDuration or neither,
// closed with last or not, short lifetimes that expire and guaranteed ones.
func makeWorkload(rng *rand.Rand, p params) workload {
	var w workload
	for gi := range p.groups {
		g := planGroup{from: rng.IntN(2)}
		g.to = 1 - g.from
		g.flags = group.Flags{AckRequested: true, DuplicateElimination: rng.IntN(3) > 0, MessageOrder: rng.IntN(2) == 0}
		g.pattern = group.ReplyPattern(1 + rng.IntN(3))
		start := time.Duration(rng.Int64N(int64(p.chaos) * 8 / 10))
		n := 1
		single := rng.IntN(5) == 0
		if !single {
			g.key = fmt.Sprintf("g%d", gi)
			n = 1 + rng.IntN(p.maxPerGroup)
		}
		g.guaranteed = rng.IntN(3) == 0
		if !g.guaranteed && rng.IntN(6) == 0 {
			// Best effort: sent once, no ack, no outcome (SPEC-NOTES); may
			// be lost, never delivered twice with DuplicateElimination,
			// out of order or after expiry.
			g.flags.AckRequested = false
		}
		if !single && !g.guaranteed {
			switch rng.IntN(5) {
			case 0: // t1, t3 with groupExpiryTime
				g.timing.Expiry = epoch.Add(start + time.Duration(5+rng.IntN(120))*time.Second).Truncate(time.Second)
			case 1: // t2, t3 with groupMaxIdleDuration
				g.timing.MaxIdle, g.timing.HasMaxIdle = group.Fixed(time.Duration(2+rng.IntN(30))*time.Second), true
			}
		}
		last := !single && rng.IntN(10) < 7
		at := start
		for i := range n {
			m := planMsg{id: len(w.msgs), g: gi, at: at}
			if g.guaranteed {
				m.lifetime = p.slack
			} else {
				m.lifetime = time.Duration(1+rng.IntN(90)) * time.Second
				if rng.IntN(4) == 0 {
					m.lifetime = time.Duration(200+rng.IntN(2000)) * time.Millisecond
				}
			}
			if e := g.timing.Expiry; !e.IsZero() && rng.IntN(5) > 0 && epoch.Add(at+m.lifetime).After(e) {
				// Mostly the producer respects R16 (ExpiryTime no later
				// than groupExpiryTime); sometimes it is refused for it.
				m.lifetime = max(e.Sub(epoch.Add(at)), time.Millisecond)
			}
			m.last = last && i == n-1
			g.msgs = append(g.msgs, m.id)
			w.msgs = append(w.msgs, m)
			gap := time.Duration(rng.Int64N(int64(2 * time.Second)))
			if rng.IntN(20) == 0 {
				gap = time.Duration(5+rng.IntN(40)) * time.Second // sometimes long enough for t2
			}
			at += gap
		}
		w.groups = append(w.groups, g)
	}
	return w
}
