package receiver

import (
	"fmt"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// A sequenced group's received set is persisted as KindReceived segments
// (From → To) whose union is received. Most groups receive in order and
// have one segment equal to received's one run; they keep no list: an
// empty gextra.segs means "exactly received's runs, at most one". Any
// other shape keeps the list explicitly. Both forms emit the same records.

// addReceived adds n to g's received set and persists the delta: the tail
// segment grows by one in order, anything else starts a segment; segments
// are compacted into the set's runs when they outnumber them.
func (r *Receiver) addReceived(g *gstate, n uint64) error {
	segs := g.segList()
	var run group.Range
	implicit := segs == nil
	if implicit {
		run = onlyRun(&g.received)
	}
	if _, err := g.received.Add(n); err != nil {
		return err
	}
	if implicit {
		switch {
		case g.received.RangeCount() == 1 && run.To+1 == n && n != 0 && run.From <= run.To:
			r.putSeg(g, group.Range{From: run.From, To: n}) // the run grew at its end
			return nil
		case g.received.RangeCount() == 1 && run.From > run.To:
			r.putSeg(g, group.Range{From: n, To: n}) // the first number
			return nil
		}
		segs = append(make([]group.Range, 0, 2), run)
	}
	if k := len(segs); k > 0 && segs[k-1].To+1 == n && n != 0 {
		segs[k-1].To = n
		g.x.segs = segs
		r.putSeg(g, segs[k-1])
		return nil
	}
	segs = append(segs, group.Range{From: n, To: n})
	g.more().segs = segs
	r.putSeg(g, segs[len(segs)-1])
	if len(segs) > 2*g.received.RangeCount()+16 {
		r.compactSegs(g)
	}
	return nil
}

// onlyRun is s's single run, or From > To when s is empty.
func onlyRun(s *group.SeqSet) group.Range {
	for run := range s.Ranges() {
		return run
	}
	return group.Range{From: 1, To: 0}
}

// compactSegs rewrites g's segments as the received set's runs.
func (r *Receiver) compactSegs(g *gstate) {
	for _, s := range g.x.segs {
		r.del(r.key(g, group.KindReceived, s.From))
	}
	g.x.segs = g.received.AppendRanges(g.x.segs[:0])
	for _, s := range g.x.segs {
		r.putSeg(g, s)
	}
	implicitSegs(g)
}

// implicitSegs drops g's explicit segment list when it is exactly
// received's single run.
func implicitSegs(g *gstate) {
	if g.x != nil && len(g.x.segs) <= 1 && len(g.x.segs) == g.received.RangeCount() {
		g.x.segs = nil
	}
}

// addSeg adds a stored received segment to s in one step, whatever its
// length. Segments of one generation are disjoint when written
// (addReceived, compactSegs), so an overlap means a corrupt store.
func addSeg(s *group.SeqSet, r group.Range) error {
	added, err := s.AddRange(r)
	if err != nil {
		return fmt.Errorf("%w: received segment %d..%d: %v", ErrCorrupt, r.From, r.To, err)
	}
	if added != r.Len() {
		return fmt.Errorf("%w: received segment %d..%d overlaps another", ErrCorrupt, r.From, r.To)
	}
	return nil
}
