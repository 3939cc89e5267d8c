package sender

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// ErrCorrupt wraps every error decoding a stored record.
var ErrCorrupt = errors.New("sender: corrupt record")

// enc appends the primitives of the record format: uvarints, zigzag
// varints, length-prefixed strings and instants as (present, seconds,
// nanoseconds) so that every representable time.Time round-trips.
type enc struct{ b []byte }

func (e *enc) u(v uint64)  { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) i(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) byte(v byte) { e.b = append(e.b, v) }
func (e *enc) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}
func (e *enc) str(s string) { e.u(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) bytes(p []byte) {
	e.u(uint64(len(p)))
	e.b = append(e.b, p...)
}
func (e *enc) time(t time.Time) {
	if t.IsZero() {
		e.byte(0)
		return
	}
	e.byte(1)
	e.i(t.Unix())
	e.u(uint64(t.Nanosecond()))
}
func (e *enc) duration(d group.Duration) {
	e.bool(d.Negative)
	e.i(d.Years)
	e.i(d.Months)
	e.i(d.Days)
	e.i(int64(d.Clock))
}

// dec reads what enc wrote; the first problem sticks in err and every
// later read returns zero values. It never panics on any input.
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
		d.fail("bad uvarint")
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
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail("truncated")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *dec) bool() bool {
	switch d.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail("bad bool")
	return false
}

func (d *dec) raw() []byte {
	n := d.u()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("length beyond record")
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *dec) str() string { return string(d.raw()) }

func (d *dec) bytes() []byte {
	p := d.raw()
	if p == nil {
		return nil
	}
	return append([]byte(nil), p...)
}

func (d *dec) time() time.Time {
	switch d.byte() {
	case 0:
		return time.Time{}
	case 1:
	default:
		d.fail("bad time tag")
		return time.Time{}
	}
	sec := d.i()
	ns := d.u()
	if ns >= 1e9 {
		d.fail("bad nanoseconds")
		return time.Time{}
	}
	return time.Unix(sec, int64(ns)).UTC()
}

func (d *dec) duration() group.Duration {
	var v group.Duration
	v.Negative = d.bool()
	v.Years, v.Months, v.Days = d.i(), d.i(), d.i()
	v.Clock = time.Duration(d.i())
	return v
}

func (d *dec) version(want byte, what string) {
	if v := d.byte(); d.err == nil && v != want {
		d.fail(fmt.Sprintf("%s: unknown version %d", what, v))
	}
}

func (d *dec) end(what string) error {
	if d.err == nil && len(d.b) != 0 {
		d.fail(what + ": trailing bytes")
	}
	if d.err != nil {
		return fmt.Errorf("%s: %w", what, d.err)
	}
	return nil
}

// Record versions.
const (
	instanceV1 = 1
	metaV1     = 1
	outboundV1 = 1
	runV1      = 1
	retryV1    = 1
	outcomeV2  = 2 // 2: Attempts appended; no v1 data was deployed
)

type instanceRec struct {
	nextGroupSeq uint64
	nextOutcome  uint64
}

func encodeInstance(s *Sender) []byte {
	e := enc{b: make([]byte, 0, 24)}
	e.byte(instanceV1)
	e.u(s.nextGroupSeq)
	e.u(uint64(s.nextOutcome))
	return e.b
}

func decodeInstance(b []byte) (instanceRec, error) {
	d := dec{b: b}
	d.version(instanceV1, "instance")
	r := instanceRec{nextGroupSeq: d.u(), nextOutcome: d.u()}
	return r, d.end("instance")
}

// encodeMeta writes a group's KindMeta record: identity, parameters,
// counters and lifecycle (digest §10 sender item 2).
func encodeMeta(g *groupState) []byte {
	e := enc{b: make([]byte, 0, 128+len(g.id)+len(g.key)+len(g.to)+len(g.replyURL()))}
	e.byte(metaV1)
	e.str(g.id)
	e.u(g.seq)
	e.str(g.key)
	e.bool(g.singleton)
	e.str(g.to)
	var f byte
	if g.flags.AckRequested {
		f |= 1
	}
	if g.flags.DuplicateElimination {
		f |= 2
	}
	if g.flags.MessageOrder {
		f |= 4
	}
	e.byte(f)
	e.byte(byte(g.pattern))
	e.str(g.replyURL())
	l := &g.life
	e.time(l.Timing.Expiry)
	e.bool(l.Timing.HasMaxIdle)
	e.duration(l.Timing.MaxIdle)
	e.u(g.next)
	e.bool(g.closed)
	e.bool(g.aborted)
	e.time(l.LastActivity)
	e.time(l.MaxExpiry)
	e.u(l.Last)
	e.bool(l.HasLast)
	e.bool(l.Terminated)
	e.time(l.TerminatedAt)
	e.byte(byte(l.Rule))
	e.time(g.removeAtTime())
	e.time(g.ackedMaxExpiry)
	late := make([]uint64, 0, len(g.lateFailedSet()))
	for n := range g.lateFailedSet() {
		late = append(late, n)
	}
	slices.Sort(late)
	e.u(uint64(len(late)))
	for _, n := range late {
		e.u(n)
	}
	return e.b
}

func decodeMeta(b []byte) (*groupState, error) {
	d := dec{b: b}
	d.version(metaV1, "group meta")
	g := &groupState{}
	g.id = d.str()
	g.seq = d.u()
	g.key = d.str()
	g.singleton = d.bool()
	g.to = d.str()
	f := d.byte()
	if f > 7 {
		d.fail("bad flags")
	}
	g.flags = group.Flags{AckRequested: f&1 != 0, DuplicateElimination: f&2 != 0, MessageOrder: f&4 != 0}
	g.pattern = group.ReplyPattern(d.byte())
	if g.pattern.String() == "" {
		d.fail("bad reply pattern")
	}
	g.setReplyTo(d.str())
	l := &g.life
	l.Timing.Expiry = d.time()
	l.Timing.HasMaxIdle = d.bool()
	l.Timing.MaxIdle = d.duration()
	l.Ordered = g.flags.MessageOrder
	g.next = d.u()
	g.closed = d.bool()
	g.aborted = d.bool()
	l.LastActivity = d.time()
	l.MaxExpiry = d.time()
	l.Last = d.u()
	l.HasLast = d.bool()
	l.Terminated = d.bool()
	l.TerminatedAt = d.time()
	l.Rule = group.Rule(d.byte())
	if l.Rule > group.RuleSingleton {
		d.fail("bad rule")
	}
	g.setRemoveAt(d.time())
	l.RemoveAt = g.removeAtTime()
	g.ackedMaxExpiry = d.time()
	n := d.u()
	if n > uint64(len(d.b)) { // each number takes at least one byte
		d.fail("too many late-failed numbers")
	}
	var prev uint64
	for k := uint64(0); k < n && d.err == nil; k++ {
		x := d.u()
		if k > 0 && x <= prev {
			d.fail("unsorted late-failed numbers")
		}
		prev = x
		g.addLateFailed(x)
	}
	if err := d.end("group meta"); err != nil {
		return nil, err
	}
	return g, nil
}

// encodeOutbound writes a pending message: the byte-exact payload, its
// header fields and its retry state (R21, R89).
func encodeOutbound(m *message) []byte {
	e := enc{b: make([]byte, 0, 48+len(m.action)+len(m.payload))}
	e.byte(outboundV1)
	e.bool(m.last)
	e.time(m.expiry)
	e.str(m.action)
	e.u(uint64(m.attempts))
	e.time(m.nextAt)
	e.bool(m.untilExpiry)
	e.bytes(m.payload)
	return e.b
}

func decodeOutbound(b []byte) (*message, error) {
	d := dec{b: b}
	d.version(outboundV1, "outbound")
	m := &message{}
	m.last = d.bool()
	m.expiry = d.time()
	m.action = d.str()
	a := d.u()
	if a > math.MaxInt32 {
		d.fail("bad attempts")
	}
	m.attempts = int(a)
	m.nextAt = d.time()
	m.untilExpiry = d.bool()
	m.payload = d.bytes()
	if m.payload == nil {
		m.payload = []byte{}
	}
	if err := d.end("outbound"); err != nil {
		return nil, err
	}
	return m, nil
}

// encodeRetry writes the retry-state record (under retryKeyBit|n): what a
// transmission or a retryable fault changes.
func encodeRetry(m *message) []byte {
	e := enc{b: make([]byte, 0, 24)}
	e.byte(retryV1)
	e.u(uint64(m.attempts))
	e.time(m.nextAt)
	e.bool(m.untilExpiry)
	return e.b
}

// decodeRetry applies a retry-state record to the loaded message m.
func decodeRetry(b []byte, m *message) error {
	d := dec{b: b}
	d.version(retryV1, "retry state")
	a := d.u()
	if a > math.MaxInt32 {
		d.fail("bad attempts")
	}
	nextAt := d.time()
	until := d.bool()
	if err := d.end("retry state"); err != nil {
		return err
	}
	m.attempts, m.nextAt, m.untilExpiry = int(a), nextAt, until
	return nil
}

func encodeRun(r group.Range) []byte {
	e := enc{b: make([]byte, 0, 11)}
	e.byte(runV1)
	e.u(r.To)
	return e.b
}

func decodeRun(from uint64, b []byte) (group.Range, error) {
	d := dec{b: b}
	d.version(runV1, "acked run")
	r := group.Range{From: from, To: d.u()}
	if d.err == nil && r.To < r.From {
		d.fail("run ends before it starts")
	}
	return r, d.end("acked run")
}

func encodeOutcome(x *outboxEntry) []byte {
	o := &x.o
	e := enc{b: make([]byte, 0, 48+len(o.Ref.GroupID)+len(o.GroupKey))}
	e.byte(outcomeV2)
	e.str(o.Ref.GroupID)
	e.u(o.Ref.Number)
	e.bool(o.Ref.Singleton)
	e.str(o.GroupKey)
	e.byte(byte(o.Kind))
	e.byte(byte(o.Reason))
	e.byte(byte(o.Fault))
	e.time(o.At)
	e.bool(x.blocksKey)
	e.u(uint64(o.Attempts))
	return e.b
}

func decodeOutcome(id OutcomeID, b []byte) (*outboxEntry, error) {
	d := dec{b: b}
	d.version(outcomeV2, "outcome")
	x := &outboxEntry{}
	o := &x.o
	o.ID = id
	o.Ref.GroupID = d.str()
	o.Ref.Number = d.u()
	o.Ref.Singleton = d.bool()
	o.GroupKey = d.str()
	o.Kind = OutcomeKind(d.byte())
	o.Reason = Reason(d.byte())
	o.Fault = faults.Code(d.byte())
	o.At = d.time()
	x.blocksKey = d.bool()
	a := d.u()
	if a > math.MaxInt32 {
		d.fail("bad attempts")
	}
	o.Attempts = int(a)
	switch {
	case d.err != nil:
	case o.Kind != Acknowledged && o.Kind != Failed:
		d.fail("bad outcome kind")
	case o.Reason > ReasonGroupAborted || (o.Kind == Failed) != (o.Reason != ReasonNone):
		d.fail("bad reason")
	case o.Fault != 0 && !o.Fault.Valid():
		d.fail("bad fault code")
	}
	if err := d.end("outcome"); err != nil {
		return nil, err
	}
	return x, nil
}
