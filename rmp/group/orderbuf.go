package group

import (
	"sort"
	"time"
)

// Held is one out-of-order message of an ordered group, waiting in the
// ordering buffer (D14, R48).
type Held[T any] struct {
	Number uint64
	// Expiry is the message's ExpiryTime.
	Expiry time.Time
	// Bytes is what the message counts against the buffer bounds (D15).
	Bytes int
	Item  T
}

// OrderBuffer holds the out-of-order messages of one ordered group until
// their predecessors are delivered (D14). It knows the next number to
// deliver; numbers below it were delivered (or skipped by termination).
type OrderBuffer[T any] struct {
	// next is the next number to deliver in order.
	next uint64
	// exhausted is set once MaxUint64 was delivered: nothing comes next (D2).
	exhausted bool
	// held is sorted by Number, without duplicates; every Number > next.
	held []Held[T]
	// bytes is the sum of held[i].Bytes.
	bytes int
	// minExpiry is the earliest held[i].Expiry when minValid; removals of
	// that entry clear minValid and EarliestExpiry recomputes it (D14 asks
	// for it after every input, removals are rarer).
	minExpiry time.Time
	minValid  bool
}

// NewOrderBuffer returns an empty buffer whose next number is next.
func NewOrderBuffer[T any](next uint64) *OrderBuffer[T] {
	return &OrderBuffer[T]{next: next}
}

// Next returns the next number to deliver and false once MaxUint64 was
// delivered.
func (b *OrderBuffer[T]) Next() (uint64, bool) { return b.next, !b.exhausted }

// Len returns how many messages are held.
func (b *OrderBuffer[T]) Len() int { return len(b.held) }

// Bytes returns the bytes held.
func (b *OrderBuffer[T]) Bytes() int { return b.bytes }

// IsHeld reports whether n is held.
func (b *OrderBuffer[T]) IsHeld(n uint64) bool {
	i := b.search(n)
	return i < len(b.held) && b.held[i].Number == n
}

func (b *OrderBuffer[T]) search(n uint64) int {
	return sort.Search(len(b.held), func(i int) bool { return b.held[i].Number >= n })
}

// Push holds h. It returns false, leaving the buffer unchanged, when h's
// number is the next one (deliver it instead), below it, or already held, or
// when h.Bytes is negative. Bounds (D15) are the caller's: check Len and
// Bytes before pushing.
func (b *OrderBuffer[T]) Push(h Held[T]) bool {
	if b.exhausted || h.Number <= b.next || h.Bytes < 0 {
		return false
	}
	i := b.search(h.Number)
	if i < len(b.held) && b.held[i].Number == h.Number {
		return false
	}
	b.held = append(b.held, Held[T]{})
	copy(b.held[i+1:], b.held[i:])
	b.held[i] = h
	b.bytes += h.Bytes
	if len(b.held) == 1 {
		b.minExpiry, b.minValid = h.Expiry, true
	} else if b.minValid && h.Expiry.Before(b.minExpiry) {
		b.minExpiry = h.Expiry
	}
	return true
}

// forget notes that h left the buffer.
func (b *OrderBuffer[T]) forget(h *Held[T]) {
	b.bytes -= h.Bytes
	if b.minValid && !h.Expiry.After(b.minExpiry) {
		b.minValid = false
	}
}

// Advance records that the next number was delivered directly, without
// passing through the buffer.
func (b *OrderBuffer[T]) Advance() {
	if b.exhausted {
		return
	}
	if b.next == ^uint64(0) {
		b.exhausted = true
		return
	}
	b.next++
}

// PopReady removes and appends to dst every held message that is now
// deliverable in order (next, next+1, …), advancing next past them.
func (b *OrderBuffer[T]) PopReady(dst []Held[T]) []Held[T] {
	k := 0
	for k < len(b.held) && !b.exhausted && b.held[k].Number == b.next {
		dst = append(dst, b.held[k])
		b.forget(&b.held[k])
		b.Advance()
		k++
	}
	if k > 0 {
		n := copy(b.held, b.held[k:])
		clear(b.held[n:]) // drop references to delivered items
		b.held = b.held[:n]
	}
	return dst
}

// EarliestExpiry returns the earliest ExpiryTime among held messages: once it
// passes, the group can no longer deliver in order (D14).
// It is constant time except after the entry holding the minimum left.
func (b *OrderBuffer[T]) EarliestExpiry() (time.Time, bool) {
	if len(b.held) == 0 {
		return time.Time{}, false
	}
	if !b.minValid {
		b.minExpiry = b.held[0].Expiry
		for i := range b.held {
			if b.held[i].Expiry.Before(b.minExpiry) {
				b.minExpiry = b.held[i].Expiry
			}
		}
		b.minValid = true
	}
	return b.minExpiry, true
}

// RemoveExpired removes and appends to dst every held message whose
// ExpiryTime has passed at now (D12).
func (b *OrderBuffer[T]) RemoveExpired(now time.Time, dst []Held[T]) []Held[T] {
	kept := b.held[:0]
	for _, h := range b.held {
		if Passed(h.Expiry, now) {
			dst = append(dst, h)
			b.forget(&h)
		} else {
			kept = append(kept, h)
		}
	}
	clear(b.held[len(kept):])
	b.held = kept
	return dst
}

// Drain removes and appends to dst every held message, in number order.
func (b *OrderBuffer[T]) Drain(dst []Held[T]) []Held[T] {
	dst = append(dst, b.held...)
	clear(b.held)
	b.held = b.held[:0]
	b.bytes = 0
	b.minValid = false
	return dst
}

// LatestExpiry is the latest ExpiryTime held; the zero Time when empty.
func (b *OrderBuffer[T]) LatestExpiry() time.Time {
	var at time.Time
	for _, h := range b.held {
		if h.Expiry.After(at) {
			at = h.Expiry
		}
	}
	return at
}

// DrainUpTo removes and appends to dst the limit lowest-numbered held
// messages (every one when limit >= Len), in number order: a bulk discard
// done in pages that each fit a store batch.
func (b *OrderBuffer[T]) DrainUpTo(dst []Held[T], limit int) []Held[T] {
	if limit >= len(b.held) {
		return b.Drain(dst)
	}
	limit = max(limit, 0)
	for i := range limit {
		b.forget(&b.held[i])
	}
	dst = append(dst, b.held[:limit]...)
	n := copy(b.held, b.held[limit:])
	clear(b.held[n:])
	b.held = b.held[:n]
	return dst
}

// Numbers returns the held numbers as a set of ranges.
func (b *OrderBuffer[T]) Numbers() *SeqSet {
	s := &SeqSet{}
	for _, h := range b.held {
		s.Add(h.Number) //nolint:errcheck // no range limit
	}
	return s
}
