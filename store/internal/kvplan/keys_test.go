package kvplan

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
)

func TestKeyRoundTripAndOrder(t *testing.T) {
	keys := []group.Key{
		{Role: 1, GroupID: "", Generation: 0, Kind: 1, Number: 0},
		{Role: 1, GroupID: "", Generation: math.MaxUint64, Kind: 0xFF, Number: math.MaxUint64},
		{Role: 1, GroupID: "\x00", Generation: 1, Kind: 1},
		{Role: 1, GroupID: "\x00\x00", Generation: 1, Kind: 1},
		{Role: 1, GroupID: "\x00\x01", Generation: 1, Kind: 1},
		{Role: 1, GroupID: "\x00\xff", Generation: 1, Kind: 1},
		{Role: 1, GroupID: "\x01", Generation: 1, Kind: 1},
		{Role: 1, GroupID: "a", Generation: 1, Kind: 1},
		{Role: 1, GroupID: "a", Generation: 2, Kind: 1},
		{Role: 1, GroupID: "a", Generation: 2, Kind: 2},
		{Role: 1, GroupID: "a", Generation: 2, Kind: 2, Number: 1},
		{Role: 1, GroupID: "a\x00", Generation: 0, Kind: 1},
		{Role: 1, GroupID: "a\x00b", Generation: 0, Kind: 1},
		{Role: 1, GroupID: "ab", Generation: 0, Kind: 1},
		{Role: 1, GroupID: "\xff", Generation: 0, Kind: 1},
		{Role: 1, GroupID: "\xff\xff", Generation: 0, Kind: 1},
		{Role: 2, GroupID: "", Generation: 0, Kind: 1},
		{Role: 0xFF, GroupID: "", Generation: 0, Kind: 1},
	}
	var prev []byte
	for i, k := range keys {
		b := EncodeKey(k)
		got, err := DecodeKey(b)
		if err != nil || got != k {
			t.Fatalf("DecodeKey(EncodeKey(%+v)) = %+v, %v", k, got, err)
		}
		if i > 0 && bytes.Compare(prev, b) >= 0 {
			t.Fatalf("encoding of %+v does not sort after its predecessor", k)
		}
		prev = b
	}
}

func TestGroupPrefixIsExact(t *testing.T) {
	lo, hi, err := PrefixBounds(store.GroupPrefix(1, "a"), store.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	in := func(k group.Key) bool {
		b := EncodeKey(k)
		return bytes.Compare(b, lo) >= 0 && bytes.Compare(b, hi) < 0
	}
	for _, gid := range []string{"a\x00", "a\x00\x01", "ab", "", "\x00a"} {
		if in(group.Key{Role: 1, GroupID: gid, Generation: 1, Kind: 1}) {
			t.Errorf("GroupPrefix(a) covers groupId %q", gid)
		}
	}
	if !in(group.Key{Role: 1, GroupID: "a", Generation: math.MaxUint64, Kind: 0xFF, Number: math.MaxUint64}) {
		t.Errorf("GroupPrefix(a) misses its own largest key")
	}
}

func TestDecodeKeyRejects(t *testing.T) {
	good := EncodeKey(group.Key{Role: 1, GroupID: "g\x00", Generation: 1, Kind: 1})
	bad := [][]byte{
		nil, {}, {'r'}, {'x', 1, 0, 1},
		good[:len(good)-1],            // short
		append(bytes.Clone(good), 0),  // long
		{'r', 1, 'g', 0, 0x02},        // bad escape
		{'r', 1, 'g', 0},              // escape at end
		{'r', 1, 'g', 'h'},            // unterminated
		DeadlineRevKey(1, group.ID{}), // another key space
	}
	for _, b := range bad {
		if _, err := DecodeKey(b); !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("DecodeKey(%x) = %v; want ErrCorrupt", b, err)
		}
	}
	if _, err := DecodeDeadlineKey(good); !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("DecodeDeadlineKey(record key) = %v; want ErrCorrupt", err)
	}
}

func TestInstantOrderAndRange(t *testing.T) {
	ts := []time.Time{
		time.Unix(0, math.MinInt64), time.Unix(-1, 0), time.Unix(0, -1), time.Unix(0, 0), time.Unix(0, 1),
		time.Date(2026, 1, 1, 0, 0, 0, 999, time.FixedZone("Z+1", 3600)), store.MaxInstant(),
	}
	var prev uint64
	for i, tm := range ts {
		u, err := EncodeInstant(tm)
		if err != nil {
			t.Fatalf("EncodeInstant(%v): %v", tm, err)
		}
		back := DecodeInstant(u)
		if !back.Equal(tm) || back.Location() != time.UTC {
			t.Fatalf("DecodeInstant(EncodeInstant(%v)) = %v", tm, back)
		}
		if i > 0 && u <= prev {
			t.Fatalf("EncodeInstant(%v) does not sort after its predecessor", tm)
		}
		prev = u
	}
	for _, tm := range []time.Time{{}, store.MaxInstant().Add(time.Nanosecond), time.Unix(0, math.MinInt64).Add(-1)} {
		if _, err := EncodeInstant(tm); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("EncodeInstant(%v) = %v; want ErrInvalid", tm, err)
		}
	}
}

func TestDeadlineKeyRoundTrip(t *testing.T) {
	at := time.Date(2030, 5, 6, 7, 8, 9, 123456789, time.UTC)
	u, _ := EncodeInstant(at)
	id := group.ID{GroupID: "x\x00y", Generation: 9}
	d, err := DecodeDeadlineKey(DeadlineKey(u, group.RoleSender, id))
	if err != nil || !d.At.Equal(at) || d.Role != group.RoleSender || d.ID != id {
		t.Fatalf("DecodeDeadlineKey round trip = %+v, %v", d, err)
	}
}

func TestPrefixEnd(t *testing.T) {
	cases := []struct{ in, want []byte }{
		{[]byte{1, 2}, []byte{1, 3}},
		{[]byte{1, 0xFF}, []byte{2}},
		{[]byte{0xFF, 0xFF}, nil},
		{nil, nil},
	}
	for _, c := range cases {
		if got := PrefixEnd(c.in); !bytes.Equal(got, c.want) {
			t.Errorf("PrefixEnd(%x) = %x; want %x", c.in, got, c.want)
		}
	}
}

// FuzzDecodeKey: arbitrary bytes never panic; whatever decodes re-encodes to
// the same bytes (the encoding is canonical).
func FuzzDecodeKey(f *testing.F) {
	f.Add(EncodeKey(group.Key{Role: 1, GroupID: "g", Generation: 1, Kind: 1}))
	f.Add(EncodeKey(group.Key{Role: 3, GroupID: "\x00\xff\x00", Generation: math.MaxUint64, Kind: 8, Number: 7}))
	f.Add([]byte{'r', 1, 0, 0xFF, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := DecodeKey(b)
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("DecodeKey error %v does not wrap ErrCorrupt", err)
			}
		} else if re := EncodeKey(k); !bytes.Equal(re, b) {
			t.Fatalf("DecodeKey(%x) = %+v re-encodes to %x", b, k, re)
		}
		if d, err := DecodeDeadlineKey(b); err == nil {
			u, _ := EncodeInstant(d.At)
			if re := DeadlineKey(u, d.Role, d.ID); !bytes.Equal(re, b) {
				t.Fatalf("DecodeDeadlineKey(%x) re-encodes to %x", b, re)
			}
		}
	})
}

// A record key is encoded in one allocation of its exact size (every
// mutation of every commit encodes one; the last AppendUint64 reallocated
// it, #22).
func TestEncodeKeyAllocatesOnce(t *testing.T) {
	k := group.Key{Role: 1, GroupID: "urn:uuid:6a1f3c2e-9b7d-4e21-8f3a-2c4d5e6f7a8b", Generation: 3, Kind: 2, Number: 41}
	var b []byte
	if n := testing.AllocsPerRun(20, func() { b = EncodeKey(k) }); n != 1 {
		t.Fatalf("EncodeKey: %v allocations, want 1", n)
	}
	if len(b) != cap(b) {
		t.Fatalf("EncodeKey: %d bytes in a buffer of %d", len(b), cap(b))
	}
}

// ScanPrefix hands scan the bounds of a valid prefix, and for an invalid one
// yields PrefixBounds' error alone, without calling scan.
func TestScanPrefix(t *testing.T) {
	p := store.GroupPrefix(1, "g")
	wantLo, wantHi, err := PrefixBounds(p, store.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	seq := ScanPrefix(p, store.Limits{}, func(lo, hi []byte, yield func(int, error) bool) {
		if !bytes.Equal(lo, wantLo) || !bytes.Equal(hi, wantHi) {
			t.Errorf("scan got [%x, %x), want [%x, %x)", lo, hi, wantLo, wantHi)
		}
		_ = yield(1, nil) && yield(2, nil)
	})
	var got []int
	for v, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("yielded %v, want [1 2]", got)
	}
	bad := ScanPrefix(store.Prefix{}, store.Limits{}, func([]byte, []byte, func(int, error) bool) {
		t.Error("scan called for a prefix with a zero role")
	})
	n := 0
	for v, err := range bad {
		if n++; v != 0 || !errors.Is(err, store.ErrInvalid) {
			t.Errorf("yielded %d, %v; want 0, ErrInvalid", v, err)
		}
	}
	if n != 1 {
		t.Errorf("yielded %d times, want once", n)
	}
}
