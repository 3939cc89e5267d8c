package group

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"
	"time"
)

// recordSample writes one of each primitive; readRecordSample reads them
// back in the same order.
func recordSample(e *RecordEncoder, t time.Time) {
	e.Byte(7)
	e.Uvarint(math.MaxUint64)
	e.Varint(-300)
	e.Bool(true)
	e.Bool(false)
	e.Str("héllo")
	e.Bytes([]byte{0, 1, 2})
	e.Bytes(nil)
	e.Time(time.Time{})
	e.Time(t)
	e.Duration(Duration{Negative: true, Years: 1, Months: -2, Days: 3, Clock: 90 * time.Second})
}

type recordValues struct {
	b          byte
	u          uint64
	i          int64
	t, f       bool
	s          string
	raw, empty []byte
	zero, at   time.Time
	dur        Duration
}

func readRecordSample(d *RecordDecoder) recordValues {
	var v recordValues
	v.b = d.Byte()
	v.u = d.Uvarint()
	v.i = d.Varint()
	v.t, v.f = d.Bool(), d.Bool()
	v.s = d.Str()
	v.raw = d.Raw()
	v.empty = d.Bytes()
	v.zero, v.at = d.Time(), d.Time()
	v.dur = d.Duration()
	return v
}

// The encoding is pinned byte for byte: sender and receiver records already
// stored with it must still decode.
func TestRecordCodecGolden(t *testing.T) {
	at := time.Unix(1, 5).In(time.FixedZone("x", 3600))
	var e RecordEncoder
	recordSample(&e, at)
	want := []byte{
		7,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, // MaxUint64
		0xd7, 0x04, // zigzag -300 = 599
		1, 0,
		6, 'h', 0xc3, 0xa9, 'l', 'l', 'o',
		3, 0, 1, 2,
		0,
		0,
		1, 2, 5, // present, zigzag 1, 5 ns
		1, 2, 3, 6, // Duration: Negative, zigzag 1, -2, 3
	}
	want = binary.AppendVarint(want, int64(90*time.Second)) // Duration.Clock
	if got := e.Encoded(); !bytes.Equal(got, want) {
		t.Fatalf("encoding\n got %x\nwant %x", got, want)
	}
}

func TestRecordCodecRoundTrip(t *testing.T) {
	at := time.Date(2031, 2, 3, 4, 5, 6, 789, time.FixedZone("x", -7200))
	e := NewRecordEncoder([]byte("prefix"))
	recordSample(&e, at)
	enc := e.Encoded()
	if !bytes.HasPrefix(enc, []byte("prefix")) {
		t.Fatalf("encoder dropped dst: %q", enc)
	}
	d := NewRecordDecoder(enc[len("prefix"):])
	v := readRecordSample(&d)
	if err := d.End(); err != nil {
		t.Fatalf("End: %v", err)
	}
	if d.Len() != 0 {
		t.Fatalf("Len = %d after End", d.Len())
	}
	want := recordValues{b: 7, u: math.MaxUint64, i: -300, t: true, s: "héllo",
		dur: Duration{Negative: true, Years: 1, Months: -2, Days: 3, Clock: 90 * time.Second}}
	if v.b != want.b || v.u != want.u || v.i != want.i || v.t != want.t || v.f != want.f || v.s != want.s || v.dur != want.dur {
		t.Fatalf("decoded %+v, want %+v", v, want)
	}
	if !bytes.Equal(v.raw, []byte{0, 1, 2}) || v.empty != nil {
		t.Fatalf("raw %v, empty %v", v.raw, v.empty)
	}
	if !v.zero.IsZero() || !v.at.Equal(at) || v.at.Location() != time.UTC {
		t.Fatalf("times %v, %v; want zero and %v in UTC", v.zero, v.at, at)
	}
}

// Raw aliases the input with its capacity capped; Bytes copies.
func TestRecordDecoderRawAliasesBytesCopies(t *testing.T) {
	var e RecordEncoder
	e.Bytes([]byte("ab"))
	e.Bytes([]byte("cd"))
	in := e.Encoded()
	d := NewRecordDecoder(in)
	raw, cp := d.Raw(), d.Bytes()
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
	if cap(raw) != 2 {
		t.Fatalf("cap(raw) = %d, want 2", cap(raw))
	}
	in[1], in[4] = 'X', 'Y'
	if string(raw) != "Xb" {
		t.Fatalf("raw = %q, want it to alias the input", raw)
	}
	if string(cp) != "cd" {
		t.Fatalf("bytes = %q, want a copy", cp)
	}
}

// Every damaged input fails with ErrCorruptRecord, the first failure sticks
// and later reads return zero values.
func TestRecordDecoderGarbage(t *testing.T) {
	var e RecordEncoder
	recordSample(&e, time.Unix(1e9, 1))
	full := e.Encoded()
	for i := range full {
		d := NewRecordDecoder(full[:i])
		readRecordSample(&d)
		if err := d.End(); !errors.Is(err, ErrCorruptRecord) {
			t.Fatalf("truncated at %d: err = %v", i, err)
		}
	}
	cases := map[string]func(d *RecordDecoder){
		"uvarint overflow": func(d *RecordDecoder) { d.Uvarint() },
		"varint overflow":  func(d *RecordDecoder) { d.Varint() },
		"bool 2":           func(d *RecordDecoder) { d.Bool() },
		"time tag 2":       func(d *RecordDecoder) { d.Time() },
		"length":           func(d *RecordDecoder) { d.Raw() },
		"nanoseconds":      func(d *RecordDecoder) { d.Time() },
		"version":          func(d *RecordDecoder) { d.Version(1) },
		"trailing":         func(d *RecordDecoder) { d.Byte() },
	}
	inputs := map[string][]byte{
		"uvarint overflow": bytes.Repeat([]byte{0xff}, 11),
		"varint overflow":  bytes.Repeat([]byte{0xff}, 11),
		"bool 2":           {2},
		"time tag 2":       {2},
		"length":           {5, 'a'},
		"nanoseconds":      {1, 0, 0x80, 0x94, 0xeb, 0xdc, 0x03}, // 1e9 ns
		"version":          {2},
		"trailing":         {1, 2},
	}
	for name, read := range cases {
		d := NewRecordDecoder(inputs[name])
		read(&d)
		if err := d.End(); !errors.Is(err, ErrCorruptRecord) {
			t.Errorf("%s: err = %v, want ErrCorruptRecord", name, err)
		}
	}

	d := NewRecordDecoder([]byte{3, 1})
	d.Fail("first")
	d.Fail("second")
	if d.Byte() != 0 || d.Uvarint() != 0 || d.Varint() != 0 || d.Raw() != nil || d.Len() != 2 {
		t.Fatal("reads after a failure must return zero values and consume nothing")
	}
	if err := d.Err(); err == nil || err.Error() != "group: corrupt record: first" {
		t.Fatalf("err = %v, want the first failure", err)
	}
	ok := NewRecordDecoder([]byte{1})
	if ok.Version(1); ok.End() != nil {
		t.Fatalf("version 1 refused: %v", ok.Err())
	}
}
