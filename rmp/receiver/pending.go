package receiver

// Pending deliveries live in a per-group map that exists only while the
// group has some: an idle group holds none (goal: ≤ 512 B per idle open
// group). Emptied small maps go back to a bounded free list on the
// Receiver, so the in-order path (accept, hand out, Taken) reuses one map
// instead of allocating a new one per message.

const (
	// pendingPoolMax bounds the emptied maps kept for reuse.
	pendingPoolMax = 64
	// pendingSmall is the most entries a map may have held to be reused:
	// a map keeps its grown table after clear.
	pendingSmall = 8
)

// addPending records a new pending delivery n of g.
func (r *Receiver) addPending(g *gstate, n uint64, d delivery) {
	if g.pending == nil {
		if k := len(r.pendFree); k > 0 {
			g.pending = r.pendFree[k-1]
			r.pendFree[k-1] = nil
			r.pendFree = r.pendFree[:k-1]
		} else {
			g.pending = make(map[uint64]delivery, 1)
		}
	}
	g.pending[n] = d
	if len(g.pending) > pendingSmall {
		g.bigPending = true
	}
}

// removePending forgets pending n of g and releases the map once empty.
func (r *Receiver) removePending(g *gstate, n uint64) {
	delete(g.pending, n)
	if len(g.pending) > 0 || g.pending == nil {
		return
	}
	if !g.bigPending && len(r.pendFree) < pendingPoolMax {
		r.pendFree = append(r.pendFree, g.pending)
	}
	g.pending, g.bigPending = nil, false
}
