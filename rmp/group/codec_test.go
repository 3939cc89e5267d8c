package group

import (
	"bytes"
	"errors"
	"testing"
)

func TestSeqSetEncoding(t *testing.T) {
	cases := []struct {
		name string
		set  *SeqSet
		want []byte
	}{
		{"empty", &SeqSet{}, []byte{1, 0}},
		{"one", set(t, Range{0, 9}), []byte{1, 1, 0, 9}},
		{"two", set(t, Range{3, 3}, Range{5, 300}), []byte{1, 2, 3, 0, 0, 0xa7, 0x02}},
		{"top", set(t, Range{0, maxU}), append([]byte{1, 1, 0}, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := c.set.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, c.want) {
				t.Fatalf("encoding = % x, want % x", b, c.want)
			}
			got, err := DecodeSeqSet(b, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(c.set) {
				t.Fatalf("decoded %v, want %v", rangesOf(got), rangesOf(c.set))
			}
			// AppendBinary appends after existing bytes.
			b2, _ := c.set.AppendBinary([]byte("k"))
			if !bytes.Equal(b2[1:], c.want) || b2[0] != 'k' {
				t.Fatalf("AppendBinary = % x", b2)
			}
		})
	}
}

func TestSeqSetDecodeErrors(t *testing.T) {
	bad := []struct {
		name string
		b    []byte
	}{
		{"nil", nil},
		{"version", []byte{2, 0}},
		{"no count", []byte{1}},
		{"huge count", []byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0}},
		{"truncated range", []byte{1, 1, 0}},
		{"trailing", []byte{1, 1, 0, 9, 0}},
		{"non-minimal", []byte{1, 1, 0x80, 0x00, 9}},
		{"overlong varint", []byte{1, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0}},
		{"span past max", append([]byte{1, 1, 5}, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)},
		{"gap past max", append([]byte{1, 2, 0, 0}, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0)},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			s := set(t, Range{1, 2})
			err := s.UnmarshalBinary(c.b)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
			wantRanges(t, s, Range{1, 2}) // unchanged on error
			if _, err := DecodeSeqSet(c.b, 0); err == nil {
				t.Fatal("DecodeSeqSet accepted it")
			}
		})
	}
}

// A stored set with more ranges than the configured limit is refused, not
// truncated.
func TestSeqSetDecodeRespectsLimit(t *testing.T) {
	b, _ := set(t, Range{0, 0}, Range{2, 2}, Range{4, 4}).MarshalBinary()
	if _, err := DecodeSeqSet(b, 2); !errors.Is(err, ErrTooManyRanges) {
		t.Fatalf("err = %v", err)
	}
	s, err := DecodeSeqSet(b, 3)
	if err != nil || s.RangeCount() != 3 || s.MaxRanges() != 3 {
		t.Fatalf("limit 3: %v", err)
	}
}

func TestRunEncoding(t *testing.T) {
	for _, r := range []Range{{0, 0}, {7, 300}, {maxU, maxU}, {0, maxU}} {
		b := AppendRun(nil, r)
		got, err := DecodeRun(b)
		if err != nil || got != r {
			t.Fatalf("DecodeRun(AppendRun(%v)) = %v, %v", r, got, err)
		}
	}
	if b := AppendRun([]byte{9}, Range{7, 300}); !bytes.Equal(b, []byte{9, 1, 7, 0xa5, 0x02}) {
		t.Fatalf("AppendRun = % x", b)
	}
	for _, b := range [][]byte{nil, {2, 0, 0}, {1}, {1, 0}, {1, 0, 0, 0}, {1, 0x80, 0, 0},
		append([]byte{1, 1}, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)} {
		if _, err := DecodeRun(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeRun(% x) err = %v", b, err)
		}
	}
}
