package group

import (
	"iter"
	"math"
	"slices"
)

// Summary is what a page of groups filters and sorts a group by (gateway
// GET /v1/groups, #21), kept up to date in a Listing by the state machine
// that owns the group, so that a page over 100,000 groups reads none of
// them but the ones it shows.
type Summary struct {
	// Held: at the receiver, messages not yet taken by the consumer; at
	// the sender, messages not yet acknowledged (SetHeld). 32 bits keep a
	// Summary at 8 bytes; the bounds on held and pending messages are far
	// below them. The group's last activity and next deadline are not kept
	// here but read from the group by the pages sorted by them, the only
	// ones that need them: 16 bytes per group (BenchmarkIdleGroupMemory).
	Held int32
	// Terminated: the group expects no new message (D20–D23, D16).
	Terminated bool
	// Gap: a number below the highest received (sender: acknowledged)
	// one is missing, what an ordered group waits for (R48).
	Gap bool
}

// SetHeld sets Held to n, saturating.
func (s *Summary) SetHeld(n int) { s.Held = int32(min(n, math.MaxInt32)) }

// HasGap reports whether ranges (sorted, disjoint) miss a number below
// their highest one.
func HasGap(ranges []Range) bool {
	return len(ranges) > 1 || (len(ranges) == 1 && ranges[0].From > 0)
}

// ListEntry is one group of a Listing and its summary, which the Listing
// keeps apart (Listing.Update changes it in place).
type ListEntry[T any] struct {
	Ref T
	Sum *Summary
}

// block is a run of the Listing's groups: refs sorted, slots[i] the slot
// of refs[i]'s summary. Two slices rather than one of pairs: a pointer
// and a slot pair would take 16 bytes, these 12.
type block[E any] struct {
	refs  []E
	slots []int32
}

func (b *block[E]) len() int { return len(b.refs) }

func (b *block[E]) last() E { return b.refs[len(b.refs)-1] }

// Listing is an ordered index of groups, each with its Summary. The order
// is held in sorted blocks of at most listBlock groups, so that adding or
// deleting a group moves one block's entries, a lookup is two binary
// searches, and a page in order is read from its first entry on (O(log n
// + page)). The summaries live in slots of their own, so that the owner,
// keeping a group's slot, updates its summary at once (every message
// changes one) without a lookup.
//
// It keeps each group as an E and shows it to its readers as the T that
// view makes of it, so that an entry need not hold what every entry
// shares (the sender's: its Sender, 8 bytes a group).
type Listing[E, T any] struct {
	cmp  func(a, b E) int
	view func(E) T
	// blocks are sorted by cmp, each non-empty, every entry of one before
	// every entry of the next.
	blocks []block[E]
	n      int
	// sums[slot] is a summary; slot 0 is never used, free lists the
	// slots of deleted groups.
	sums []Summary
	free []int32
}

// listBlock bounds a block; a block below listBlock/4 is merged into a
// neighbour that has room.
const listBlock = 256

// NewListing returns an empty Listing ordered by cmp, which must be a
// total order on the groups it will hold, that shows them as they are.
func NewListing[T any](cmp func(a, b T) int) *Listing[T, T] {
	return NewListingView(cmp, func(t T) T { return t })
}

// NewListingView returns an empty Listing ordered by cmp that shows each
// group as view makes it.
func NewListingView[E, T any](cmp func(a, b E) int, view func(E) T) *Listing[E, T] {
	return &Listing[E, T]{cmp: cmp, view: view, sums: make([]Summary, 1)}
}

// Len returns the number of groups.
func (l *Listing[E, T]) Len() int { return l.n }

// find returns the block and the index within it of the first entry not
// below the target, and whether that entry is the target: the target is
// ref, or when at is not nil the one at places (at(e) is the order of e
// against it). Plain loops: a closure over ref would cost an allocation
// per lookup.
func (l *Listing[E, T]) find(ref E, at func(T) int) (b, i int, found bool) {
	order := func(e E) int {
		if at != nil {
			return at(l.view(e))
		}
		return l.cmp(e, ref)
	}
	lo, hi := 0, len(l.blocks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if order(l.blocks[m].last()) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if b = lo; b == len(l.blocks) {
		return b, 0, false
	}
	refs := l.blocks[b].refs
	lo, hi = 0, len(refs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if order(refs[m]) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return b, lo, order(refs[lo]) == 0
}

// insertAt inserts v at i, growing s by a quarter when full (not append's
// doubling: blocks stay about nine tenths full).
func insertAt[E any](s []E, i int, v E) []E {
	if len(s) == cap(s) {
		ns := make([]E, len(s), min(listBlock, len(s)+len(s)/4+4))
		copy(ns, s)
		s = ns
	}
	return slices.Insert(s, i, v)
}

// Add adds ref with s and returns the slot of its summary (never 0) for
// Update; for a ref it holds already, it updates the summary.
func (l *Listing[E, T]) Add(ref E, s Summary) int32 {
	b, i, found := l.find(ref, nil)
	if found { // held already: the same slot
		slot := l.blocks[b].slots[i]
		l.sums[slot] = s
		return slot
	}
	var slot int32
	if n := len(l.free); n > 0 {
		slot, l.free = l.free[n-1], l.free[:n-1]
		l.sums[slot] = s
	} else {
		slot = int32(len(l.sums))
		l.sums = append(l.sums, s)
	}
	l.n++
	switch {
	case len(l.blocks) == 0:
		l.blocks = append(l.blocks, block[E]{refs: []E{ref}, slots: []int32{slot}})
		return slot
	case b == len(l.blocks): // after every entry: the end of the last block
		b--
		i = l.blocks[b].len()
	}
	if blk := &l.blocks[b]; blk.len() == listBlock {
		if b == len(l.blocks)-1 && i == listBlock {
			// Ids that only grow fill block after block.
			l.blocks = append(l.blocks, block[E]{refs: []E{ref}, slots: []int32{slot}})
			return slot
		}
		// Split the full block in two halves, each its own size.
		half := listBlock / 2
		hi := block[E]{refs: slices.Clone(blk.refs[half:]), slots: slices.Clone(blk.slots[half:])}
		*blk = block[E]{refs: slices.Clone(blk.refs[:half]), slots: slices.Clone(blk.slots[:half])}
		l.blocks = slices.Insert(l.blocks, b+1, hi)
		if i > half {
			b, i = b+1, i-half
		}
	}
	blk := &l.blocks[b]
	blk.refs, blk.slots = insertAt(blk.refs, i, ref), insertAt(blk.slots, i, slot)
	return slot
}

// Update sets the summary in slot, which Add returned.
func (l *Listing[E, T]) Update(slot int32, s Summary) { l.sums[slot] = s }

// Delete removes the entry equal to ref; it reports whether there was one.
func (l *Listing[E, T]) Delete(ref E) bool {
	b, i, found := l.find(ref, nil)
	if !found {
		return false
	}
	l.n--
	blk := &l.blocks[b]
	slot := blk.slots[i]
	l.sums[slot] = Summary{}
	l.free = append(l.free, slot)
	blk.refs, blk.slots = slices.Delete(blk.refs, i, i+1), slices.Delete(blk.slots, i, i+1)
	switch n := blk.len(); {
	case n == 0:
		l.blocks = slices.Delete(l.blocks, b, b+1)
	case n < listBlock/4:
		// Merge with a neighbour that has room, so that the blocks stay
		// few however the groups come and go.
		if b+1 < len(l.blocks) && n+l.blocks[b+1].len() <= listBlock {
			l.merge(b)
		} else if b > 0 && n+l.blocks[b-1].len() <= listBlock {
			l.merge(b - 1)
		}
	}
	return true
}

// merge appends block b+1 to block b.
func (l *Listing[E, T]) merge(b int) {
	blk, next := &l.blocks[b], l.blocks[b+1]
	blk.refs, blk.slots = append(blk.refs, next.refs...), append(blk.slots, next.slots...)
	l.blocks = slices.Delete(l.blocks, b+1, b+2)
}

// Rank returns the number of entries at or before the target that at
// places: at(ref) is the order of ref against it (cmp's sign).
func (l *Listing[E, T]) Rank(at func(T) int) int {
	var none E
	b, i, found := l.find(none, at)
	if found {
		i++
	}
	for k := range l.blocks[:b] {
		i += l.blocks[k].len()
	}
	return i
}

// All yields the entries from position from on, in order, with their
// positions. The Listing must not change during the iteration.
func (l *Listing[E, T]) All(from int) iter.Seq2[int, ListEntry[T]] {
	return func(yield func(int, ListEntry[T]) bool) {
		pos := 0
		for k := range l.blocks {
			blk := &l.blocks[k]
			if pos+blk.len() <= from {
				pos += blk.len()
				continue
			}
			for i := max(from-pos, 0); i < blk.len(); i++ {
				if !yield(pos+i, ListEntry[T]{Ref: l.view(blk.refs[i]), Sum: &l.sums[blk.slots[i]]}) {
					return
				}
			}
			pos += blk.len()
		}
	}
}
