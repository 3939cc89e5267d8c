package group

import (
	"iter"
	"slices"
	"time"
)

// Summary is what a page of groups filters and sorts a group by (gateway
// GET /v1/groups, #21), kept up to date in a Listing by the state machine
// that owns the group, so that a page over 100,000 groups reads none of
// them but the ones it shows.
type Summary struct {
	// NextDeadline is the group's next timer, valid when HasDeadline;
	// LastActivity its last message received or sent, valid when
	// HasActivity: time.Time.UnixNano of each.
	NextDeadline, LastActivity int64
	// Held: at the receiver, messages not yet taken by the consumer; at
	// the sender, messages not yet acknowledged.
	Held int
	// Terminated: the group expects no new message (D20–D23, D16).
	Terminated bool
	// Gap: a number below the highest received (sender: acknowledged)
	// one is missing, what an ordered group waits for (R48).
	Gap                      bool
	HasDeadline, HasActivity bool
}

// SetTimes sets the deadline and the last activity; a zero Time is none.
func (s *Summary) SetTimes(deadline, activity time.Time) {
	s.HasDeadline, s.HasActivity = !deadline.IsZero(), !activity.IsZero()
	s.NextDeadline, s.LastActivity = 0, 0
	if s.HasDeadline {
		s.NextDeadline = deadline.UnixNano()
	}
	if s.HasActivity {
		s.LastActivity = activity.UnixNano()
	}
}

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

// listed is a group in a block: its ref and the slot of its summary.
type listed[T any] struct {
	ref  T
	slot int32
}

// Listing is an ordered index of groups, each with its Summary. The order
// is held in sorted blocks of at most listBlock groups, so that adding or
// deleting a group moves one block's entries, a lookup is two binary
// searches, and a page in order is read from its first entry on (O(log n
// + page)). The summaries live in slots of their own, so that the owner,
// keeping a group's slot, updates its summary at once (every message
// changes one) without a lookup.
type Listing[T any] struct {
	cmp func(a, b T) int
	// blocks are sorted by cmp, each non-empty, every entry of one before
	// every entry of the next.
	blocks [][]listed[T]
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
// total order on the groups it will hold.
func NewListing[T any](cmp func(a, b T) int) *Listing[T] {
	return &Listing[T]{cmp: cmp, sums: make([]Summary, 1)}
}

// Len returns the number of groups.
func (l *Listing[T]) Len() int { return l.n }

// find returns the block and the index within it of the first entry not
// below the target, and whether that entry is the target: the target is
// ref, or when at is not nil the one at places (at(e) is the order of e
// against it). Plain loops: a closure over ref would cost an allocation
// per lookup.
func (l *Listing[T]) find(ref T, at func(T) int) (b, i int, found bool) {
	order := func(e T) int {
		if at != nil {
			return at(e)
		}
		return l.cmp(e, ref)
	}
	lo, hi := 0, len(l.blocks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if blk := l.blocks[m]; order(blk[len(blk)-1].ref) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if b = lo; b == len(l.blocks) {
		return b, 0, false
	}
	blk := l.blocks[b]
	lo, hi = 0, len(blk)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if order(blk[m].ref) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return b, lo, order(blk[lo].ref) == 0
}

// Add adds ref with s and returns the slot of its summary (never 0) for
// Update; for a ref it holds already, it updates the summary.
func (l *Listing[T]) Add(ref T, s Summary) int32 {
	b, i, found := l.find(ref, nil)
	if found { // held already: the same slot
		slot := l.blocks[b][i].slot
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
	e := listed[T]{ref: ref, slot: slot}
	l.n++
	if len(l.blocks) == 0 {
		l.blocks = append(l.blocks, append(make([]listed[T], 0, listBlock), e))
		return slot
	}
	if b == len(l.blocks) { // after every entry: the end of the last block
		b--
		i = len(l.blocks[b])
	}
	if blk := l.blocks[b]; len(blk) == listBlock {
		if b == len(l.blocks)-1 && i == listBlock {
			// Ids that only grow fill block after block.
			l.blocks = append(l.blocks, append(make([]listed[T], 0, listBlock), e))
			return slot
		}
		// Split the full block in two halves with room to grow.
		half := listBlock / 2
		hi := append(make([]listed[T], 0, listBlock), blk[half:]...)
		clear(blk[half:])
		l.blocks[b] = blk[:half]
		l.blocks = slices.Insert(l.blocks, b+1, hi)
		if i > half {
			b, i = b+1, i-half
		}
	}
	l.blocks[b] = slices.Insert(l.blocks[b], i, e)
	return slot
}

// Update sets the summary in slot, which Add returned.
func (l *Listing[T]) Update(slot int32, s Summary) { l.sums[slot] = s }

// Delete removes the entry equal to ref; it reports whether there was one.
func (l *Listing[T]) Delete(ref T) bool {
	b, i, found := l.find(ref, nil)
	if !found {
		return false
	}
	l.n--
	blk := l.blocks[b]
	l.sums[blk[i].slot] = Summary{}
	l.free = append(l.free, blk[i].slot)
	blk = slices.Delete(blk, i, i+1)
	l.blocks[b] = blk
	switch {
	case len(blk) == 0:
		l.blocks = slices.Delete(l.blocks, b, b+1)
	case len(blk) < listBlock/4:
		// Merge with a neighbour that has room, so that the blocks stay
		// few however the groups come and go.
		if b+1 < len(l.blocks) && len(blk)+len(l.blocks[b+1]) <= listBlock {
			l.blocks[b] = append(blk, l.blocks[b+1]...)
			l.blocks = slices.Delete(l.blocks, b+1, b+2)
		} else if b > 0 && len(blk)+len(l.blocks[b-1]) <= listBlock {
			l.blocks[b-1] = append(l.blocks[b-1], blk...)
			l.blocks = slices.Delete(l.blocks, b, b+1)
		}
	}
	return true
}

// Rank returns the number of entries at or before the target that at
// places: at(ref) is the order of ref against it (cmp's sign).
func (l *Listing[T]) Rank(at func(T) int) int {
	var none T
	b, i, found := l.find(none, at)
	if found {
		i++
	}
	for _, blk := range l.blocks[:b] {
		i += len(blk)
	}
	return i
}

// All yields the entries from position from on, in order, with their
// positions. The Listing must not change during the iteration.
func (l *Listing[T]) All(from int) iter.Seq2[int, ListEntry[T]] {
	return func(yield func(int, ListEntry[T]) bool) {
		pos := 0
		for _, blk := range l.blocks {
			if pos+len(blk) <= from {
				pos += len(blk)
				continue
			}
			for i := max(from-pos, 0); i < len(blk); i++ {
				if !yield(pos+i, ListEntry[T]{Ref: blk[i].ref, Sum: &l.sums[blk[i].slot]}) {
					return
				}
			}
			pos += len(blk)
		}
	}
}
