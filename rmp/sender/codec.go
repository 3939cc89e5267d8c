package sender

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// ErrCorrupt wraps every error decoding a stored record.
var ErrCorrupt = errors.New("sender: corrupt record")

// end finishes a record read with the shared codec (group.RecordDecoder):
// no trailing bytes; a failure is wrapped in ErrCorrupt, prefixed by what.
func end(d *group.RecordDecoder, what string) error {
	if err := d.End(); err != nil {
		return fmt.Errorf("%s: %w: %w", what, ErrCorrupt, err)
	}
	return nil
}

// decodeAttempts reads a transmission count, written as a uvarint: one
// above math.MaxInt32 (an int on every platform) fails the record.
func decodeAttempts(d *group.RecordDecoder) int {
	a := d.Uvarint()
	if a > math.MaxInt32 {
		d.Fail("bad attempts")
	}
	return int(a)
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

// The encoders append a record to b; finish hands them a buffer of the
// arena (group.Arena) with room for the record's size below.

const instanceSize = 24

func encodeInstance(b []byte, s *Sender) []byte {
	e := group.NewRecordEncoder(b)
	e.Byte(instanceV1)
	e.Uvarint(s.nextGroupSeq)
	e.Uvarint(uint64(s.nextOutcome))
	return e.Encoded()
}

func decodeInstance(b []byte) (instanceRec, error) {
	d := group.NewRecordDecoder(b)
	d.Version(instanceV1)
	r := instanceRec{nextGroupSeq: d.Uvarint(), nextOutcome: d.Uvarint()}
	return r, end(&d, "instance")
}

func metaSize(g *groupState, id string) int {
	return 128 + len(id) + len(g.key) + len(g.to) + len(g.replyURL())
}

// encodeMeta writes a group's KindMeta record: identity, parameters,
// counters and lifecycle (digest §10 sender item 2); id is g's id.
func encodeMeta(b []byte, g *groupState, id string) []byte {
	e := group.NewRecordEncoder(b)
	e.Byte(metaV1)
	e.Str(id)
	e.Uvarint(g.seq)
	e.Str(g.key)
	e.Bool(g.singleton)
	e.Str(g.to)
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
	e.Byte(f)
	e.Byte(byte(g.pattern))
	e.Str(g.replyURL())
	e.Timing(g.life.Timing)
	e.Uvarint(g.next)
	e.Bool(g.has(gClosed))
	e.Bool(g.has(gAborted))
	l := g.life
	l.RemoveAt = g.removeAtTime() // kept in g.x, not in life
	e.Termination(&l, group.LastFirst)
	e.Time(g.ackedMaxExpiry)
	late := make([]uint64, 0, len(g.lateFailedSet()))
	for n := range g.lateFailedSet() {
		late = append(late, n)
	}
	slices.Sort(late)
	e.Uvarint(uint64(len(late)))
	for _, n := range late {
		e.Uvarint(n)
	}
	if lf := lateFlags(g); lf != 0 {
		e.Byte(lf) // optional and last: records written before it decode
	}
	return e.Encoded()
}

// Late-fault polling state of a group (poll.go), the meta record's
// optional trailing byte.
const (
	lateCheckedBit = 1 << iota
	cbSuspectBit
)

func lateFlags(g *groupState) byte {
	var f byte
	if g.has(gLateChecked) {
		f |= lateCheckedBit
	}
	if g.has(gCBSuspect) {
		f |= cbSuspectBit
	}
	return f
}

// decodeMeta returns the group and its stored id.
func decodeMeta(b []byte) (*groupState, string, error) {
	d := group.NewRecordDecoder(b)
	d.Version(metaV1)
	g := &groupState{}
	id := d.Str()
	g.seq = d.Uvarint()
	g.key = d.Str()
	g.singleton = d.Bool()
	g.to = d.Str()
	f := d.Byte()
	if f > 7 {
		d.Fail("bad flags")
	}
	g.flags = group.Flags{AckRequested: f&1 != 0, DuplicateElimination: f&2 != 0, MessageOrder: f&4 != 0}
	g.pattern = group.ReplyPattern(d.Byte())
	if g.pattern.String() == "" {
		d.Fail("bad reply pattern")
	}
	g.setReplyTo(d.Str())
	l := &g.life
	l.Timing = d.Timing()
	l.Ordered = g.flags.MessageOrder
	g.next = d.Uvarint()
	g.set(gClosed, d.Bool())
	g.set(gAborted, d.Bool())
	d.Termination(l, group.LastFirst)
	g.setRemoveAt(l.RemoveAt)
	l.RemoveAt = g.removeAtTime()
	g.ackedMaxExpiry = d.Time()
	n := d.Uvarint()
	if n > uint64(d.Len()) { // each number takes at least one byte
		d.Fail("too many late-failed numbers")
	}
	var prev uint64
	for k := uint64(0); k < n && d.Err() == nil; k++ {
		x := d.Uvarint()
		if k > 0 && x <= prev {
			d.Fail("unsorted late-failed numbers")
		}
		prev = x
		g.addLateFailed(x)
	}
	if d.Err() == nil && d.Len() > 0 {
		f := d.Byte()
		if f == 0 || f > lateCheckedBit|cbSuspectBit {
			d.Fail("bad late-fault flags")
		}
		g.set(gLateChecked, f&lateCheckedBit != 0)
		g.set(gCBSuspect, f&cbSuspectBit != 0)
	}
	if err := end(&d, "group meta"); err != nil {
		return nil, "", err
	}
	return g, id, nil
}

func outboundSize(m *message) int { return 48 + len(m.action) + len(m.payload) }

// encodeOutbound writes a pending message: the byte-exact payload, its
// header fields and its retry state (R21, R89).
func encodeOutbound(b []byte, m *message) []byte {
	e := group.NewRecordEncoder(b)
	e.Byte(outboundV1)
	e.Bool(m.last)
	e.Time(m.expiry)
	e.Str(m.action)
	e.Uvarint(uint64(m.attempts))
	e.Time(m.nextAt)
	e.Bool(m.untilExpiry)
	e.Bytes(m.payload)
	return e.Encoded()
}

func decodeOutbound(b []byte) (*message, error) {
	d := group.NewRecordDecoder(b)
	d.Version(outboundV1)
	m := &message{}
	m.last = d.Bool()
	m.expiry = d.Time()
	m.action = d.Str()
	m.attempts = decodeAttempts(&d)
	m.nextAt = d.Time()
	m.untilExpiry = d.Bool()
	m.payload = d.Bytes()
	if m.payload == nil {
		m.payload = []byte{}
	}
	if err := end(&d, "outbound"); err != nil {
		return nil, err
	}
	return m, nil
}

const retrySize = 24

// encodeRetry writes the retry-state record (under retryKeyBit|n): what a
// transmission or a retryable fault changes.
func encodeRetry(b []byte, m *message) []byte {
	e := group.NewRecordEncoder(b)
	e.Byte(retryV1)
	e.Uvarint(uint64(m.attempts))
	e.Time(m.nextAt)
	e.Bool(m.untilExpiry)
	return e.Encoded()
}

// decodeRetry applies a retry-state record to the loaded message m.
func decodeRetry(b []byte, m *message) error {
	d := group.NewRecordDecoder(b)
	d.Version(retryV1)
	a := decodeAttempts(&d)
	nextAt := d.Time()
	until := d.Bool()
	if err := end(&d, "retry state"); err != nil {
		return err
	}
	m.attempts, m.nextAt, m.untilExpiry = a, nextAt, until
	return nil
}

const runSize = 11

func encodeRun(b []byte, r group.Range) []byte {
	e := group.NewRecordEncoder(b)
	e.Byte(runV1)
	e.Uvarint(r.To)
	return e.Encoded()
}

func decodeRun(from uint64, b []byte) (group.Range, error) {
	d := group.NewRecordDecoder(b)
	d.Version(runV1)
	r := group.Range{From: from, To: d.Uvarint()}
	if d.Err() == nil && r.To < r.From {
		d.Fail("run ends before it starts")
	}
	return r, end(&d, "acked run")
}

func outcomeSize(x *outboxEntry) int {
	return 48 + len(x.o.Ref.GroupID) + len(x.o.GroupKey) + len(x.o.Response) + len(x.o.SOAPFault)
}

func encodeOutcome(b []byte, x *outboxEntry) []byte {
	o := &x.o
	e := group.NewRecordEncoder(b)
	e.Byte(outcomeV2)
	e.Str(o.Ref.GroupID)
	e.Uvarint(o.Ref.Number)
	e.Bool(o.Ref.Singleton)
	e.Str(o.GroupKey)
	e.Byte(byte(o.Kind))
	e.Byte(byte(o.Reason))
	e.Byte(byte(o.Fault))
	e.Time(o.At)
	e.Bool(x.blocksKey)
	e.Uvarint(uint64(o.Attempts))
	switch {
	// Optional and last: records written before it still decode. An
	// Acknowledged outcome may carry a business response, a Failed one a
	// SOAP-level fault code, never both.
	case o.Kind == Acknowledged && len(o.Response) > 0:
		e.Bytes(o.Response)
	case o.Kind == Failed && o.SOAPFault != "":
		e.Str(o.SOAPFault)
	}
	return e.Encoded()
}

func decodeOutcome(id OutcomeID, b []byte) (*outboxEntry, error) {
	d := group.NewRecordDecoder(b)
	d.Version(outcomeV2)
	x := &outboxEntry{}
	o := &x.o
	o.ID = id
	o.Ref.GroupID = d.Str()
	o.Ref.Number = d.Uvarint()
	o.Ref.Singleton = d.Bool()
	o.GroupKey = d.Str()
	o.Kind = OutcomeKind(d.Byte())
	o.Reason = Reason(d.Byte())
	o.Fault = faults.Code(d.Byte())
	o.At = d.Time()
	x.blocksKey = d.Bool()
	o.Attempts = decodeAttempts(&d)
	if d.Err() == nil && d.Len() > 0 {
		if o.Kind == Failed {
			if o.SOAPFault = d.Str(); o.SOAPFault == "" || o.Reason != ReasonFaultReceived || o.Fault != 0 {
				d.Fail("bad SOAP fault code")
			}
		} else if o.Response = d.Bytes(); len(o.Response) == 0 {
			d.Fail("empty business response")
		}
	}
	switch {
	case d.Err() != nil:
	case o.Kind != Acknowledged && o.Kind != Failed:
		d.Fail("bad outcome kind")
	case o.Reason > ReasonGroupAborted || (o.Kind == Failed) != (o.Reason != ReasonNone):
		d.Fail("bad reason")
	case o.Fault != 0 && !o.Fault.Valid():
		d.Fail("bad fault code")
	}
	if err := end(&d, "outcome"); err != nil {
		return nil, err
	}
	return x, nil
}
