package group

import (
	"iter"
	"slices"
	"sort"
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

// ListEntry is one group of a Listing.
type ListEntry[T any] struct {
	Ref T
	Summary
}

// Listing is an ordered index of groups, each with its Summary: sorted
// blocks of at most listBlock entries, so that an insertion or a removal
// moves one block's entries, a lookup is two binary searches, and a page
// in order is read from its first entry on (O(log n + page)).
type Listing[T any] struct {
	cmp func(a, b T) int
	// blocks are sorted by cmp, each non-empty, every entry of one before
	// every entry of the next.
	blocks [][]ListEntry[T]
	n      int
}

// listBlock bounds a block; a block below listBlock/4 is merged into a
// neighbour that has room.
const listBlock = 256

// NewListing returns an empty Listing ordered by cmp, which must be a
// total order on the groups it will hold.
func NewListing[T any](cmp func(a, b T) int) *Listing[T] { return &Listing[T]{cmp: cmp} }

// Len returns the number of groups.
func (l *Listing[T]) Len() int { return l.n }

// find returns the block and the index within it of the first entry not
// below ref (by at: cmp(entry, target)), and whether it is ref.
func (l *Listing[T]) find(at func(T) int) (b, i int, found bool) {
	b = sort.Search(len(l.blocks), func(k int) bool {
		blk := l.blocks[k]
		return at(blk[len(blk)-1].Ref) >= 0
	})
	if b == len(l.blocks) {
		return b, 0, false
	}
	blk := l.blocks[b]
	i = sort.Search(len(blk), func(k int) bool { return at(blk[k].Ref) >= 0 })
	return b, i, at(blk[i].Ref) == 0
}

func (l *Listing[T]) target(ref T) func(T) int {
	return func(e T) int { return l.cmp(e, ref) }
}

// Set adds ref with s, or updates the summary of the entry equal to ref.
func (l *Listing[T]) Set(ref T, s Summary) {
	b, i, found := l.find(l.target(ref))
	if found {
		l.blocks[b][i] = ListEntry[T]{Ref: ref, Summary: s}
		return
	}
	e := ListEntry[T]{Ref: ref, Summary: s}
	l.n++
	if len(l.blocks) == 0 {
		l.blocks = append(l.blocks, append(make([]ListEntry[T], 0, listBlock), e))
		return
	}
	if b == len(l.blocks) { // after every entry: the end of the last block
		b--
		i = len(l.blocks[b])
	}
	if blk := l.blocks[b]; len(blk) == listBlock {
		if b == len(l.blocks)-1 && i == listBlock {
			// Ids that only grow fill block after block.
			l.blocks = append(l.blocks, append(make([]ListEntry[T], 0, listBlock), e))
			return
		}
		// Split the full block in two halves with room to grow.
		half := listBlock / 2
		hi := append(make([]ListEntry[T], 0, listBlock), blk[half:]...)
		clear(blk[half:])
		l.blocks[b] = blk[:half]
		l.blocks = slices.Insert(l.blocks, b+1, hi)
		if i > half {
			b, i = b+1, i-half
		}
	}
	l.blocks[b] = slices.Insert(l.blocks[b], i, e)
}

// Delete removes the entry equal to ref; it reports whether there was one.
func (l *Listing[T]) Delete(ref T) bool {
	b, i, found := l.find(l.target(ref))
	if !found {
		return false
	}
	l.n--
	blk := slices.Delete(l.blocks[b], i, i+1)
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

// Rank returns the number of entries at or before a target, which at
// places: at(ref) is the order of ref against it (cmp's sign).
func (l *Listing[T]) Rank(at func(T) int) int {
	b, i, found := l.find(at)
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
func (l *Listing[T]) All(from int) iter.Seq2[int, *ListEntry[T]] {
	return func(yield func(int, *ListEntry[T]) bool) {
		pos := 0
		for _, blk := range l.blocks {
			if pos+len(blk) <= from {
				pos += len(blk)
				continue
			}
			for i := max(from-pos, 0); i < len(blk); i++ {
				if !yield(pos+i, &blk[i]) {
					return
				}
			}
			pos += len(blk)
		}
	}
}
