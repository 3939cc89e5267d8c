package receiver

// Pending deliveries live in a per-group map that exists only while the
// group has some; emptied small maps go back to the Receiver's
// group.MapPool.

// addPending records a new pending delivery n of g.
func (r *Receiver) addPending(g *gstate, n uint64, d delivery) {
	r.pendFree.Put(&g.pending, &g.bigPending, n, d)
}

// removePending forgets pending n of g and releases the map once empty.
func (r *Receiver) removePending(g *gstate, n uint64) {
	r.pendFree.Delete(&g.pending, &g.bigPending, n)
}
