package receiver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// Stored values are compact binary records: a version byte, then fields as
// uvarints / varints / length-prefixed bytes. Decoding checks every length
// before use and never panics.
const codecVersion = 1

// ErrCorrupt is wrapped by decode errors.
var ErrCorrupt = errors.New("receiver: corrupt stored record")

type enc struct{ b []byte }

func (e *enc) u(v uint64)  { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) i(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) bool(v bool) { e.b = append(e.b, b2u(v)) }
func (e *enc) bytes(p []byte) {
	e.u(uint64(len(p)))
	e.b = append(e.b, p...)
}
func (e *enc) str(s string) {
	e.u(uint64(len(s)))
	e.b = append(e.b, s...)
}
func (e *enc) time(t time.Time) {
	if t.IsZero() {
		e.b = append(e.b, 0)
		return
	}
	e.b = append(e.b, 1)
	e.i(t.Unix())
	e.u(uint64(t.Nanosecond()))
}

func b2u(v bool) byte {
	if v {
		return 1
	}
	return 0
}

type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrCorrupt, what)
	}
}

func (d *dec) u() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) i() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) byte1() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail("short")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *dec) bool() bool {
	switch d.byte1() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail("bool")
	return false
}

func (d *dec) bytes() []byte {
	n := d.u()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("length")
		return nil
	}
	p := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return p
}

func (d *dec) str() string { return string(d.bytes()) }

func (d *dec) time() time.Time {
	if !d.bool() {
		return time.Time{}
	}
	s, ns := d.i(), d.u()
	if ns >= 1e9 {
		d.fail("nanoseconds")
		return time.Time{}
	}
	return time.Unix(s, int64(ns)).UTC()
}

func (d *dec) version() {
	if v := d.byte1(); d.err == nil && v != codecVersion {
		d.fail(fmt.Sprintf("version %d", v))
	}
}

func (d *dec) end() error {
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	return d.err
}

// Meta record (KindMeta): everything of a group generation but its numbers.
func encodeMeta(b []byte, g *gstate) []byte {
	e := enc{b: append(b, codecVersion)}
	e.bool(g.singleton)
	e.u(uint64(b2u(g.flags.AckRequested)) | uint64(b2u(g.flags.DuplicateElimination))<<1 | uint64(b2u(g.flags.MessageOrder))<<2)
	e.u(uint64(g.pattern))
	e.str(g.replyURL())
	e.time(g.expiryAt())
	e.bool(g.plainZero)
	t := g.lc.Timing
	e.time(t.Expiry)
	e.bool(t.HasMaxIdle)
	e.bool(t.MaxIdle.Negative)
	e.i(t.MaxIdle.Years)
	e.i(t.MaxIdle.Months)
	e.i(t.MaxIdle.Days)
	e.i(int64(t.MaxIdle.Clock))
	l := &g.lc
	e.time(l.LastActivity)
	e.time(l.MaxExpiry)
	e.bool(l.HasLast)
	e.u(l.Last)
	e.bool(l.Terminated)
	e.time(l.TerminatedAt)
	e.u(uint64(l.Rule))
	e.time(l.RemoveAt)
	next, more := uint64(0), true
	if g.ordered() {
		next, more = g.buf.Next()
	}
	e.u(next)
	e.bool(more)
	return e.b
}

// decodeMeta fills g from a Meta record; the caller sets id.
func decodeMeta(v []byte, g *gstate) error {
	d := dec{b: v}
	d.version()
	g.singleton = d.bool()
	f := d.u()
	if f > 7 {
		d.fail("flags")
	}
	g.flags = group.Flags{AckRequested: f&1 != 0, DuplicateElimination: f&2 != 0, MessageOrder: f&4 != 0}
	p := d.u()
	if p < uint64(group.ReplyResponse) || p > uint64(group.ReplyPoll) {
		d.fail("reply pattern")
	}
	g.pattern = group.ReplyPattern(p)
	g.setReplyTo(d.str())
	g.setExpiry(d.time())
	g.plainZero = d.bool()
	var t group.Timing
	t.Expiry = d.time()
	t.HasMaxIdle = d.bool()
	t.MaxIdle.Negative = d.bool()
	t.MaxIdle.Years, t.MaxIdle.Months, t.MaxIdle.Days = d.i(), d.i(), d.i()
	t.MaxIdle.Clock = time.Duration(d.i())
	l := &g.lc
	l.Timing = t
	l.Ordered = g.flags.MessageOrder
	l.LastActivity = d.time()
	l.MaxExpiry = d.time()
	l.HasLast = d.bool()
	l.Last = d.u()
	l.Terminated = d.bool()
	l.TerminatedAt = d.time()
	rule := d.u()
	if rule > uint64(group.RuleSingleton) {
		d.fail("rule")
	}
	l.Rule = group.Rule(rule)
	l.RemoveAt = d.time()
	next := d.u()
	more := d.bool()
	if g.flags.MessageOrder && !g.singleton {
		g.buf.reset(next, false)
		if !more {
			// Replay the exhausting advance (D2: nothing after MaxUint64).
			g.buf.reset(^uint64(0), true)
		}
	}
	return d.end()
}

// Received segment (KindReceived, keyed by From): To.
func encodeSeg(b []byte, to uint64) []byte {
	e := enc{b: append(b, codecVersion)}
	e.u(to)
	return e.b
}

func decodeSeg(v []byte) (uint64, error) {
	d := dec{b: v}
	d.version()
	to := d.u()
	return to, d.end()
}

// Held (KindHeld) and delivery (KindDelivery) records: ExpiryTime, payload.
func encodeMsg(b []byte, expiry time.Time, payload []byte) []byte {
	e := enc{b: append(b, codecVersion)}
	e.time(expiry)
	e.bytes(payload)
	return e.b
}

func decodeMsg(v []byte) (time.Time, []byte, error) {
	d := dec{b: v}
	d.version()
	t := d.time()
	p := d.bytes()
	return t, p, d.end()
}

// Fault status (KindReply in a group generation): code, reported. Code 0
// with reported false is an ack waiting for a Response (gstate.acks).
func encodeFault(b []byte, f faultRec) []byte {
	e := enc{b: append(b, codecVersion)}
	e.u(uint64(f.code))
	e.bool(f.reported)
	return e.b
}

func decodeFault(v []byte) (faultRec, error) {
	d := dec{b: v}
	d.version()
	c := faults.Code(d.u())
	if d.err == nil && c != 0 && !c.Valid() {
		d.fail("fault code")
	}
	r := d.bool()
	if d.err == nil && c == 0 && r {
		d.fail("reported ack")
	}
	return faultRec{code: c, reported: r}, d.end()
}

// Business response (KindResponse): the body.
func encodeBody(b []byte, body []byte) []byte {
	e := enc{b: append(b, codecVersion)}
	e.bytes(body)
	return e.b
}

func decodeBody(v []byte) ([]byte, error) {
	d := dec{b: v}
	d.version()
	p := d.bytes()
	return p, d.end()
}

// Callback entry (KindReply under the outbox key, see outboxKey).
func encodeEntry(b []byte, c *cbEntry) []byte {
	e := enc{b: append(b, codecVersion)}
	e.str(c.url)
	e.str(c.groupID)
	e.bool(c.sequence)
	e.u(c.from)
	e.u(c.to)
	e.u(uint64(c.code))
	e.time(c.until)
	return e.b
}

func decodeEntry(v []byte, c *cbEntry) error {
	d := dec{b: v}
	d.version()
	c.url = d.str()
	c.groupID = d.str()
	c.sequence = d.bool()
	c.from, c.to = d.u(), d.u()
	c.code = faults.Code(d.u())
	if d.err == nil && c.code != 0 && !c.code.Valid() {
		d.fail("fault code")
	}
	if d.err == nil && c.from > c.to {
		d.fail("range")
	}
	c.until = d.time()
	return d.end()
}
