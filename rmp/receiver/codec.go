package receiver

import (
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

func b2u(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// newEnc starts a record after b: the version byte, then what the caller
// appends with group.RecordEncoder (the shared record codec).
func newEnc(b []byte) group.RecordEncoder {
	return group.NewRecordEncoder(append(b, codecVersion))
}

// newDec starts reading a record: it checks the version byte.
func newDec(v []byte) group.RecordDecoder {
	d := group.NewRecordDecoder(v)
	d.Version(codecVersion)
	return d
}

// end finishes d (no trailing bytes) and wraps its failure in ErrCorrupt.
func end(d *group.RecordDecoder) error {
	if err := d.End(); err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return nil
}

// metaSize is about the size of g's Meta record: flags, instants and
// counters take well under 96 bytes beside the strings.
func metaSize(g *gstate) int {
	n := 96 + len(g.replyURL())
	if g.peer != nil {
		n += len(g.peer.name)
	}
	return n
}

// Meta record (KindMeta): everything of a group generation but its numbers.
func encodeMeta(b []byte, g *gstate) []byte {
	e := newEnc(b)
	e.Bool(g.singleton)
	e.Uvarint(uint64(b2u(g.flags.AckRequested)) | uint64(b2u(g.flags.DuplicateElimination))<<1 | uint64(b2u(g.flags.MessageOrder))<<2)
	e.Uvarint(uint64(g.pattern))
	e.Str(g.replyURL())
	e.Time(g.expiryAt())
	e.Bool(g.has(plainZeroBit))
	e.Timing(g.lc.Timing)
	e.Termination(&g.lc, group.HasLastFirst)
	next, more := uint64(0), true
	if g.ordered() {
		next, more = g.buf.Next()
	}
	e.Uvarint(next)
	e.Bool(more)
	if g.peer != nil {
		e.Str(g.peer.name) // optional, last: records without one decode as before
	}
	return e.Encoded()
}

// decodeMeta fills g from a Meta record; the caller sets id.
func decodeMeta(v []byte, g *gstate) error {
	d := newDec(v)
	g.singleton = d.Bool()
	f := d.Uvarint()
	if f > 7 {
		d.Fail("flags")
	}
	g.flags = group.Flags{AckRequested: f&1 != 0, DuplicateElimination: f&2 != 0, MessageOrder: f&4 != 0}
	p := d.Uvarint()
	if p < uint64(group.ReplyResponse) || p > uint64(group.ReplyPoll) {
		d.Fail("reply pattern")
	}
	g.pattern = group.ReplyPattern(p)
	g.setReplyTo(d.Str())
	g.setExpiry(d.Time())
	g.mark(plainZeroBit, d.Bool())
	l := &g.lc
	l.Timing = d.Timing()
	l.Ordered = g.flags.MessageOrder
	d.Termination(l, group.HasLastFirst)
	next := d.Uvarint()
	more := d.Bool()
	if d.Err() == nil && d.Len() > 0 {
		if p := d.Str(); p != "" {
			g.peer = &peerCount{name: p} // Recover counts it (peerOf)
		}
	}
	if g.flags.MessageOrder && !g.singleton {
		g.buf.reset(next, false)
		if !more {
			// Replay the exhausting advance (D2: nothing after MaxUint64).
			g.buf.reset(^uint64(0), true)
		}
	}
	return end(&d)
}

// Received segment (KindReceived, keyed by From): To.
func encodeSeg(b []byte, to uint64) []byte {
	e := newEnc(b)
	e.Uvarint(to)
	return e.Encoded()
}

func decodeSeg(v []byte) (uint64, error) {
	d := newDec(v)
	to := d.Uvarint()
	return to, end(&d)
}

// Held (KindHeld) and delivery (KindDelivery) records: ExpiryTime,
// payload, then the action when there is one (an optional last field:
// records written before actions were kept decode with none).
func encodeMsg(b []byte, expiry time.Time, c content) []byte {
	e := newEnc(b)
	e.Time(expiry)
	e.Bytes(c.payload)
	if c.action != "" {
		e.Str(c.action)
	}
	return e.Encoded()
}

func decodeMsg(v []byte) (time.Time, content, error) {
	d := newDec(v)
	t := d.Time()
	c := content{payload: d.Bytes()}
	if d.Err() == nil && d.Len() > 0 {
		if c.action = d.Str(); d.Err() == nil && c.action == "" {
			d.Fail("empty action") // written only when set
		}
	}
	return t, c, end(&d)
}

// Fault status (KindReply in a group generation): code, reported. Code 0
// with reported false is an ack waiting for a Response (gstate.acks).
func encodeFault(b []byte, f faultRec) []byte {
	e := newEnc(b)
	e.Uvarint(uint64(f.code))
	e.Bool(f.reported)
	return e.Encoded()
}

func decodeFault(v []byte) (faultRec, error) {
	d := newDec(v)
	c := faults.Code(d.Uvarint())
	if d.Err() == nil && c != 0 && !c.Valid() {
		d.Fail("fault code")
	}
	r := d.Bool()
	if d.Err() == nil && c == 0 && r {
		d.Fail("reported ack")
	}
	return faultRec{code: c, reported: r}, end(&d)
}

// Business response (KindResponse): the body.
func encodeBody(b []byte, body []byte) []byte {
	e := newEnc(b)
	e.Bytes(body)
	return e.Encoded()
}

func decodeBody(v []byte) ([]byte, error) {
	d := newDec(v)
	p := d.Bytes()
	return p, end(&d)
}

// Callback entry (KindReply under the outbox key, see outboxKey).
func encodeEntry(b []byte, c *cbEntry) []byte {
	e := newEnc(b)
	e.Str(c.url)
	e.Str(c.groupID)
	e.Bool(c.sequence)
	e.Uvarint(c.from)
	e.Uvarint(c.to)
	e.Uvarint(uint64(c.code))
	e.Time(c.until)
	return e.Encoded()
}

func decodeEntry(v []byte, c *cbEntry) error {
	d := newDec(v)
	c.url = d.Str()
	c.groupID = d.Str()
	c.sequence = d.Bool()
	c.from, c.to = d.Uvarint(), d.Uvarint()
	c.code = faults.Code(d.Uvarint())
	if d.Err() == nil && c.code != 0 && !c.code.Valid() {
		d.Fail("fault code")
	}
	if d.Err() == nil && c.from > c.to {
		d.Fail("range")
	}
	c.until = d.Time()
	return end(&d)
}
