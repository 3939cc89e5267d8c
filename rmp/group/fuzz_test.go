package group

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// FuzzSeqSetOps reads ops from the input: each is a byte of kind and a
// number, near 0 or near the maximum. It drives a limited SeqSet and a map
// model and compares them after every op.
func FuzzSeqSetOps(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 0, 3, 1, 5, 2, 4})
	f.Add([]byte{0x80, 0xff, 0x80, 0xfe, 0, 0, 0x81, 0xfd, 3, 7})
	f.Fuzz(func(t *testing.T, ops []byte) {
		s, m := NewSeqSet(8), model{}
		for i := 0; i+1 < len(ops); i += 2 {
			kind, v := ops[i], uint64(ops[i+1])
			n := v
			if kind&0x80 != 0 {
				n = maxU - v // near the top, where +1 wraps
			}
			switch kind & 3 {
			case 0, 1: // Add
				before := s.Clone()
				isNew, err := s.Add(n)
				if errors.Is(err, ErrTooManyRanges) {
					if m[n] || !s.Equal(before) || s.RangeCount() < s.MaxRanges() {
						t.Fatalf("Add(%d): refused wrongly", n)
					}
					continue
				}
				if err != nil || isNew == m[n] {
					t.Fatalf("Add(%d) = %v,%v; model had it %v", n, isNew, err, m[n])
				}
				m[n] = true
			case 2: // AddRange of up to 8 numbers
				to := n + uint64(kind>>2&7)
				if to < n {
					to = maxU
				}
				before := s.Clone()
				added, err := s.AddRange(Range{n, to})
				if errors.Is(err, ErrTooManyRanges) {
					if !s.Equal(before) {
						t.Fatal("refused AddRange changed the set")
					}
					continue
				}
				var want uint64
				for x := n; ; x++ {
					if !m[x] {
						want++
						m[x] = true
					}
					if x == to {
						break
					}
				}
				if err != nil || added != want {
					t.Fatalf("AddRange(%d..%d) = %d,%v want %d", n, to, added, err, want)
				}
			case 3: // Contains
				if s.Contains(n) != m[n] {
					t.Fatalf("Contains(%d)", n)
				}
			}
			if err := s.Check(); err != nil {
				t.Fatal(err)
			}
		}
		if s.Count() != uint64(len(m)) {
			t.Fatalf("Count %d, model %d", s.Count(), len(m))
		}
		for r := range s.Ranges() {
			if !m[r.From] || !m[r.To] || (r.From > 0 && m[r.From-1]) || (r.To < maxU && m[r.To+1]) {
				t.Fatalf("range %v does not match the model", r)
			}
		}
		b, _ := s.MarshalBinary()
		d, err := DecodeSeqSet(b, 8)
		if err != nil || !d.Equal(s) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzDecodeSeqSet feeds arbitrary bytes to the decoder: it never panics,
// and what it accepts is a valid set whose encoding is the input itself
// (one encoding per set).
func FuzzDecodeSeqSet(f *testing.F) {
	f.Add([]byte{1, 0})
	f.Add([]byte{1, 2, 3, 0, 0, 0xa7, 0x02})
	f.Add(binary.AppendUvarint([]byte{1, 1, 0}, maxU))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeSeqSet(b, 0)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
		out, _ := s.MarshalBinary()
		if !bytes.Equal(out, b) {
			t.Fatalf("re-encoding % x differs from input % x", out, b)
		}
		if lim := s.RangeCount() - 1; lim > 0 {
			if _, err := DecodeSeqSet(b, lim); !errors.Is(err, ErrTooManyRanges) {
				t.Fatalf("limit %d not enforced: %v", lim, err)
			}
		}
	})
}

// FuzzDecodeRun does the same for one stored run.
func FuzzDecodeRun(f *testing.F) {
	f.Add([]byte{1, 7, 0xa5, 0x02})
	f.Add(AppendRun(nil, Range{0, maxU}))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRun(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if r.From > r.To || !bytes.Equal(AppendRun(nil, r), b) {
			t.Fatalf("accepted % x as %v", b, r)
		}
	})
}
