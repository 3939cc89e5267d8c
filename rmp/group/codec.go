package group

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Binary formats for the store (see the package doc, "Stored formats").
//
// A SeqSet is
//
//	version (1 byte, = 1) | uvarint count | count × (uvarint gap, uvarint span)
//
// where span = To-From and gap = From for the first range, From-prevTo-2 for
// the others (ranges are non-adjacent, so From >= prevTo+2). A Range run is
//
//	version (1 byte, = 1) | uvarint From | uvarint To-From
//
// Varints must be minimal, so every set and run has exactly one encoding.

const codecVersion = 1

// ErrCorrupt is wrapped by every decoding error: the bytes are not an
// encoding this package wrote.
var ErrCorrupt = errors.New("group: corrupt encoding")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// AppendBinary appends the encoding of s to dst (encoding.BinaryAppender).
// The range limit is configuration, not state, and is not encoded.
func (s *SeqSet) AppendBinary(dst []byte) ([]byte, error) {
	dst = append(dst, codecVersion)
	dst = binary.AppendUvarint(dst, uint64(len(s.ranges)))
	var prev uint64
	for i, r := range s.ranges {
		gap := r.From
		if i > 0 {
			gap = r.From - prev - 2
		}
		dst = binary.AppendUvarint(dst, gap)
		dst = binary.AppendUvarint(dst, r.To-r.From)
		prev = r.To
	}
	return dst, nil
}

// MarshalBinary returns the encoding of s (encoding.BinaryMarshaler).
func (s *SeqSet) MarshalBinary() ([]byte, error) {
	return s.AppendBinary(make([]byte, 0, 2+4*len(s.ranges)))
}

// UnmarshalBinary replaces the numbers of s by those encoded in b, keeping
// s's range limit (encoding.BinaryUnmarshaler). An encoding with more ranges
// than the limit is refused with ErrTooManyRanges; bad bytes give an error
// wrapping ErrCorrupt. On error s is unchanged.
func (s *SeqSet) UnmarshalBinary(b []byte) error {
	rs, err := decodeRanges(b, s.maxRanges)
	if err != nil {
		return err
	}
	s.ranges = rs
	return nil
}

// DecodeSeqSet decodes a set written by AppendBinary into a new set limited
// to maxRanges ranges (0: no limit).
func DecodeSeqSet(b []byte, maxRanges int) (*SeqSet, error) {
	s := NewSeqSet(maxRanges)
	if err := s.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return s, nil
}

func decodeRanges(b []byte, maxRanges int) ([]Range, error) {
	if len(b) == 0 {
		return nil, corrupt("empty")
	}
	if b[0] != codecVersion {
		return nil, corrupt("unknown version %d", b[0])
	}
	d := decoder{b: b[1:]}
	count, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	// Each range takes at least two bytes: check before allocating.
	if count > uint64(len(d.b)/2) {
		return nil, corrupt("%d ranges in %d bytes", count, len(d.b))
	}
	if maxRanges > 0 && count > uint64(maxRanges) {
		return nil, fmt.Errorf("%w: %d ranges encoded, limit %d", ErrTooManyRanges, count, maxRanges)
	}
	var rs []Range
	if count > 0 {
		rs = make([]Range, 0, count)
	}
	var prev uint64
	for i := uint64(0); i < count; i++ {
		gap, err := d.uvarint()
		if err != nil {
			return nil, err
		}
		span, err := d.uvarint()
		if err != nil {
			return nil, err
		}
		from := gap
		if i > 0 {
			// from = prev + 2 + gap, without overflow.
			if prev > ^uint64(0)-2 || gap > ^uint64(0)-2-prev {
				return nil, corrupt("range %d starts past the maximum", i)
			}
			from = prev + 2 + gap
		}
		if span > ^uint64(0)-from {
			return nil, corrupt("range %d ends past the maximum", i)
		}
		rs = append(rs, Range{From: from, To: from + span})
		prev = from + span
	}
	if len(d.b) != 0 {
		return nil, corrupt("%d trailing bytes", len(d.b))
	}
	return rs, nil
}

// AppendRun appends the encoding of one run r (a KindReceived record whose
// key carries r.From; the value repeats it so a record decodes on its own).
func AppendRun(dst []byte, r Range) []byte {
	dst = append(dst, codecVersion)
	dst = binary.AppendUvarint(dst, r.From)
	return binary.AppendUvarint(dst, r.To-r.From)
}

// DecodeRun decodes a run written by AppendRun.
func DecodeRun(b []byte) (Range, error) {
	if len(b) == 0 {
		return Range{}, corrupt("empty run")
	}
	if b[0] != codecVersion {
		return Range{}, corrupt("unknown run version %d", b[0])
	}
	d := decoder{b: b[1:]}
	from, err := d.uvarint()
	if err != nil {
		return Range{}, err
	}
	span, err := d.uvarint()
	if err != nil {
		return Range{}, err
	}
	if span > ^uint64(0)-from {
		return Range{}, corrupt("run ends past the maximum")
	}
	if len(d.b) != 0 {
		return Range{}, corrupt("%d trailing bytes after run", len(d.b))
	}
	return Range{From: from, To: from + span}, nil
}

// decoder reads minimal uvarints from b.
type decoder struct{ b []byte }

func (d *decoder) uvarint() (uint64, error) {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		return 0, corrupt("truncated or overlong varint")
	}
	// A minimal varint does not end in a zero byte, except the value 0 itself.
	if n > 1 && d.b[n-1] == 0 {
		return 0, corrupt("non-minimal varint")
	}
	d.b = d.b[n:]
	return v, nil
}
