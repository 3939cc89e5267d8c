package group

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// The record codec: the primitives of the values rmp/sender and
// rmp/receiver store under their Keys. A record is a sequence of
//
//	uvarint | zigzag varint | byte | bool (1 byte, 0 or 1)
//	| string or bytes (uvarint length, then the bytes)
//	| instant (byte 0 for the zero time, or 1, varint Unix seconds, uvarint nanoseconds)
//	| Duration (bool Negative, varint Years, Months, Days, Clock)
//
// in an order each record kind fixes, usually after a version byte. Varints
// need not be minimal (unlike SeqSet and run encodings): the formats were
// written so before this codec was shared, and must not change.

// ErrCorruptRecord is wrapped by every RecordDecoder error: the bytes are
// not a record RecordEncoder wrote in the expected order. Callers wrap it in
// their own sentinel (sender.ErrCorrupt, receiver.ErrCorrupt).
var ErrCorruptRecord = errors.New("group: corrupt record")

// RecordEncoder appends record primitives to a byte slice. The zero value
// encodes into a new slice.
type RecordEncoder struct {
	b []byte // dst as given to NewRecordEncoder, then what was appended
}

// NewRecordEncoder returns an encoder appending to dst.
func NewRecordEncoder(dst []byte) RecordEncoder { return RecordEncoder{b: dst} }

// Encoded returns dst with everything appended so far.
func (e *RecordEncoder) Encoded() []byte { return e.b }

// Uvarint appends v as a uvarint.
func (e *RecordEncoder) Uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

// Varint appends v as a zigzag varint.
func (e *RecordEncoder) Varint(v int64) { e.b = binary.AppendVarint(e.b, v) }

// Byte appends v.
func (e *RecordEncoder) Byte(v byte) { e.b = append(e.b, v) }

// Bool appends 1 for true, 0 for false.
func (e *RecordEncoder) Bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// Bytes appends p, length first.
func (e *RecordEncoder) Bytes(p []byte) {
	e.Uvarint(uint64(len(p)))
	e.b = append(e.b, p...)
}

// Str appends s, length first (the encoding of Bytes).
func (e *RecordEncoder) Str(s string) {
	e.Uvarint(uint64(len(s)))
	e.b = append(e.b, s...)
}

// Time appends t so that every time.Time round-trips as the same instant
// (in UTC): 0 for the zero time, else 1, Unix seconds, nanoseconds.
func (e *RecordEncoder) Time(t time.Time) {
	if t.IsZero() {
		e.b = append(e.b, 0)
		return
	}
	e.b = append(e.b, 1)
	e.Varint(t.Unix())
	e.Uvarint(uint64(t.Nanosecond()))
}

// Duration appends d field by field.
func (e *RecordEncoder) Duration(d Duration) {
	e.Bool(d.Negative)
	e.Varint(d.Years)
	e.Varint(d.Months)
	e.Varint(d.Days)
	e.Varint(int64(d.Clock))
}

// RecordDecoder reads what RecordEncoder wrote. The first problem sticks:
// Err returns it (wrapping ErrCorruptRecord) and every later read returns a
// zero value. It checks every length before use and never panics.
type RecordDecoder struct {
	b   []byte // what is left to read
	err error  // first failure; nil or wraps ErrCorruptRecord
}

// NewRecordDecoder returns a decoder reading b.
func NewRecordDecoder(b []byte) RecordDecoder { return RecordDecoder{b: b} }

// Fail records a failure named what, unless one is recorded already. Callers
// use it for their own checks of decoded values.
func (d *RecordDecoder) Fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrCorruptRecord, what)
	}
}

// Err returns the first failure, or nil.
func (d *RecordDecoder) Err() error { return d.err }

// Len returns how many bytes are left to read.
func (d *RecordDecoder) Len() int { return len(d.b) }

// Uvarint reads a uvarint.
func (d *RecordDecoder) Uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.Fail("bad uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Varint reads a zigzag varint.
func (d *RecordDecoder) Varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.Fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Byte reads one byte.
func (d *RecordDecoder) Byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.Fail("truncated")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

// Bool reads a byte that must be 0 or 1.
func (d *RecordDecoder) Bool() bool {
	switch d.Byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.Fail("bad bool")
	return false
}

// Raw reads length-prefixed bytes without copying: the result aliases the
// input (capacity capped, so appending to it cannot overwrite the record).
func (d *RecordDecoder) Raw() []byte {
	n := d.Uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.Fail("length beyond record")
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

// Bytes reads length-prefixed bytes into a new slice (nil when empty).
func (d *RecordDecoder) Bytes() []byte { return append([]byte(nil), d.Raw()...) }

// Str reads length-prefixed bytes as a string.
func (d *RecordDecoder) Str() string { return string(d.Raw()) }

// Time reads an instant written by RecordEncoder.Time, in UTC.
func (d *RecordDecoder) Time() time.Time {
	switch d.Byte() {
	case 0:
		return time.Time{}
	case 1:
	default:
		d.Fail("bad time tag")
		return time.Time{}
	}
	sec := d.Varint()
	ns := d.Uvarint()
	if ns >= 1e9 {
		d.Fail("bad nanoseconds")
		return time.Time{}
	}
	return time.Unix(sec, int64(ns)).UTC()
}

// Duration reads a Duration written by RecordEncoder.Duration.
func (d *RecordDecoder) Duration() Duration {
	var v Duration
	v.Negative = d.Bool()
	v.Years, v.Months, v.Days = d.Varint(), d.Varint(), d.Varint()
	v.Clock = time.Duration(d.Varint())
	return v
}

// Version reads the version byte and fails unless it is want.
func (d *RecordDecoder) Version(want byte) {
	if v := d.Byte(); d.err == nil && v != want {
		d.Fail(fmt.Sprintf("unknown version %d", v))
	}
}

// End fails if bytes are left over and returns Err.
func (d *RecordDecoder) End() error {
	if d.err == nil && len(d.b) != 0 {
		d.Fail("trailing bytes")
	}
	return d.err
}
