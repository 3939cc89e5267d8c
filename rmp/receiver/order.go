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
	// b holds the early messages; nil when none, and then next is the
	// position; exhaustedBuf when MaxUint64 was delivered (a sentinel, not
	// a bool: 8 bytes of gstate, TestGroupStateSize).
	b    *group.OrderBuffer[content]
	next uint64
}

// exhaustedBuf marks an orderBuf past MaxUint64; it never holds anything.
var exhaustedBuf = new(group.OrderBuffer[content])

// held returns the OrderBuffer holding early messages, nil when none.
func (o *orderBuf) held() *group.OrderBuffer[content] {
	if o.b == exhaustedBuf {
		return nil
	}
	return o.b
}

// reset places o at next with nothing held; exhausted: MaxUint64 was
// delivered, nothing follows (D2).
func (o *orderBuf) reset(next uint64, exhausted bool) {
	o.b, o.next = nil, next
	if exhausted {
		o.b = exhaustedBuf
	}
}

// Next is the next number to deliver in order, false once exhausted.
func (o *orderBuf) Next() (uint64, bool) {
	if b := o.held(); b != nil {
		return b.Next()
	}
	return o.next, o.b != exhaustedBuf
}

// Len is the number of held messages.
func (o *orderBuf) Len() int {
	b := o.held()
	if b == nil {
		return 0
	}
	return b.Len()
}

// Bytes is the size of the held messages.
func (o *orderBuf) Bytes() int {
	b := o.held()
	if b == nil {
		return 0
	}
	return b.Bytes()
}

// IsHeld reports whether n is held.
func (o *orderBuf) IsHeld(n uint64) bool { b := o.held(); return b != nil && b.IsHeld(n) }

// Push holds h; false when h is not after next or already held.
func (o *orderBuf) Push(h group.Held[content]) bool {
	if o.b == exhaustedBuf {
		return false // nothing comes after MaxUint64
	}
	if o.b == nil {
		o.b = group.NewOrderBuffer[content](o.next)
	}
	ok := o.b.Push(h)
	o.release()
	return ok
}

// Advance records that next was delivered directly.
func (o *orderBuf) Advance() {
	if b := o.held(); b != nil {
		b.Advance()
		return
	}
	if o.next == ^uint64(0) {
		o.b = exhaustedBuf
		return
	}
	o.next++
}

// PopReady removes and appends to dst the held messages now in order.
func (o *orderBuf) PopReady(dst []group.Held[content]) []group.Held[content] {
	b := o.held()
	if b == nil {
		return dst
	}
	dst = b.PopReady(dst)
	o.release()
	return dst
}

// EarliestExpiry is the earliest ExpiryTime held (D14).
func (o *orderBuf) EarliestExpiry() (time.Time, bool) {
	b := o.held()
	if b == nil {
		return time.Time{}, false
	}
	return b.EarliestExpiry()
}

// Drain removes and appends to dst every held message.
func (o *orderBuf) Drain(dst []group.Held[content]) []group.Held[content] {
	b := o.held()
	if b == nil {
		return dst
	}
	dst = b.Drain(dst)
	o.release()
	return dst
}

// LatestExpiry is the latest ExpiryTime held.
func (o *orderBuf) LatestExpiry() time.Time {
	b := o.held()
	if b == nil {
		return time.Time{}
	}
	return b.LatestExpiry()
}

// DrainUpTo removes and appends to dst the limit lowest-numbered held
// messages.
func (o *orderBuf) DrainUpTo(dst []group.Held[content], limit int) []group.Held[content] {
	b := o.held()
	if b == nil {
		return dst
	}
	dst = b.DrainUpTo(dst, limit)
	o.release()
	return dst
}

// Numbers returns the held numbers.
func (o *orderBuf) Numbers() *group.SeqSet {
	b := o.held()
	if b == nil {
		return &group.SeqSet{}
	}
	return b.Numbers()
}

// release drops an empty OrderBuffer, keeping its position.
func (o *orderBuf) release() {
	if b := o.held(); b != nil && b.Len() == 0 {
		next, more := b.Next()
		o.reset(next, !more)
	}
}
