package receiver

import (
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// orderBuf is an ordered group's place in its sequence (D2, R48) with a
// group.OrderBuffer that exists only while it holds out-of-order messages:
// an idle ordered group keeps just next (goal: ≤ 512 B per idle open
// group). Its methods are OrderBuffer's; the zero value is at number 0.
type orderBuf struct {
	// b holds the early messages; nil when none, and then next and
	// exhausted are the position.
	b         *group.OrderBuffer[content]
	next      uint64
	exhausted bool
}

// reset places o at next with nothing held; exhausted: MaxUint64 was
// delivered, nothing follows (D2).
func (o *orderBuf) reset(next uint64, exhausted bool) {
	o.b, o.next, o.exhausted = nil, next, exhausted
}

// Next is the next number to deliver in order, false once exhausted.
func (o *orderBuf) Next() (uint64, bool) {
	if o.b != nil {
		return o.b.Next()
	}
	return o.next, !o.exhausted
}

// Len is the number of held messages.
func (o *orderBuf) Len() int {
	if o.b == nil {
		return 0
	}
	return o.b.Len()
}

// Bytes is the size of the held messages.
func (o *orderBuf) Bytes() int {
	if o.b == nil {
		return 0
	}
	return o.b.Bytes()
}

// IsHeld reports whether n is held.
func (o *orderBuf) IsHeld(n uint64) bool { return o.b != nil && o.b.IsHeld(n) }

// Push holds h; false when h is not after next or already held.
func (o *orderBuf) Push(h group.Held[content]) bool {
	if o.b == nil {
		if o.exhausted {
			return false // nothing comes after MaxUint64
		}
		o.b = group.NewOrderBuffer[content](o.next)
	}
	ok := o.b.Push(h)
	o.release()
	return ok
}

// Advance records that next was delivered directly.
func (o *orderBuf) Advance() {
	if o.b != nil {
		o.b.Advance()
		return
	}
	if o.next == ^uint64(0) {
		o.exhausted = true
		return
	}
	o.next++
}

// PopReady removes and appends to dst the held messages now in order.
func (o *orderBuf) PopReady(dst []group.Held[content]) []group.Held[content] {
	if o.b == nil {
		return dst
	}
	dst = o.b.PopReady(dst)
	o.release()
	return dst
}

// EarliestExpiry is the earliest ExpiryTime held (D14).
func (o *orderBuf) EarliestExpiry() (time.Time, bool) {
	if o.b == nil {
		return time.Time{}, false
	}
	return o.b.EarliestExpiry()
}

// Drain removes and appends to dst every held message.
func (o *orderBuf) Drain(dst []group.Held[content]) []group.Held[content] {
	if o.b == nil {
		return dst
	}
	dst = o.b.Drain(dst)
	o.release()
	return dst
}

// LatestExpiry is the latest ExpiryTime held.
func (o *orderBuf) LatestExpiry() time.Time {
	if o.b == nil {
		return time.Time{}
	}
	return o.b.LatestExpiry()
}

// DrainUpTo removes and appends to dst the limit lowest-numbered held
// messages.
func (o *orderBuf) DrainUpTo(dst []group.Held[content], limit int) []group.Held[content] {
	if o.b == nil {
		return dst
	}
	dst = o.b.DrainUpTo(dst, limit)
	o.release()
	return dst
}

// Numbers returns the held numbers.
func (o *orderBuf) Numbers() *group.SeqSet {
	if o.b == nil {
		return &group.SeqSet{}
	}
	return o.b.Numbers()
}

// release drops an empty OrderBuffer, keeping its position.
func (o *orderBuf) release() {
	if o.b != nil && o.b.Len() == 0 {
		next, more := o.b.Next()
		o.reset(next, !more)
	}
}
