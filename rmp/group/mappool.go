package group

// Per-group maps by number (a receiving group's pending deliveries, a
// sending group's pending messages) exist only while the group has
// entries: an idle group holds none (goal: ≤ 512 B per idle open group).
// A MapPool keeps emptied small maps for reuse, so that entries coming and
// going one at a time (accept, hand out, Taken; submit, ack) reuse one map
// instead of allocating one per message.
const (
	// mapPoolMax bounds the emptied maps a MapPool keeps.
	mapPoolMax = 64
	// mapPoolSmall is the most entries a map may have held to be reused:
	// a map keeps its grown table after it empties.
	mapPoolSmall = 8
)

// MapPool keeps up to 64 emptied maps that never held more than 8 entries.
// The zero value is an empty pool. The owner of a map keeps a bool beside
// it ("big"), set once the map held more than 8 entries.
type MapPool[V any] struct {
	free []map[uint64]V
}

// Put stores v under n in *m, taking a kept map (or a new one) when *m is
// nil, and sets *big once *m holds more than 8 entries.
func (p *MapPool[V]) Put(m *map[uint64]V, big *bool, n uint64, v V) {
	if *m == nil {
		if k := len(p.free); k > 0 {
			*m = p.free[k-1]
			p.free[k-1] = nil
			p.free = p.free[:k-1]
		} else {
			*m = make(map[uint64]V, 1)
		}
	}
	(*m)[n] = v
	if len(*m) > mapPoolSmall {
		*big = true
	}
}

// Delete removes n from *m; once *m is empty it sets *m to nil and *big to
// false, keeping the map for reuse unless *big was set or the pool is full.
func (p *MapPool[V]) Delete(m *map[uint64]V, big *bool, n uint64) {
	delete(*m, n)
	if *m == nil || len(*m) > 0 {
		return
	}
	if !*big && len(p.free) < mapPoolMax {
		p.free = append(p.free, *m)
	}
	*m, *big = nil, false
}
