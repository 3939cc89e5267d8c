package group

import (
	"errors"
	"iter"
	"math"
)

// Range is the inclusive run of sequence numbers From..To (From <= To).
type Range struct {
	From, To uint64
}

// Contains reports whether n is in r.
func (r Range) Contains(n uint64) bool { return r.From <= n && n <= r.To }

// Len returns the number of numbers in r, saturating at math.MaxUint64 for the
// one range 0..MaxUint64 whose size does not fit.
func (r Range) Len() uint64 {
	if r.From == 0 && r.To == math.MaxUint64 {
		return math.MaxUint64
	}
	return r.To - r.From + 1
}

// ErrTooManyRanges is returned by SeqSet.Add when a new number would need a
// new range and the set already holds its maximum number of ranges. The
// number is not added: nothing is ever silently forgotten (D15 spirit); the
// caller refuses the message with a fault.
var ErrTooManyRanges = errors.New("group: sequence-number set has reached its range limit")

// SeqSet is a set of sequence numbers (xsd:unsignedLong, D2) kept as ranges,
// the form in which duplicate detection works over a group (D17). The zero
// value is an empty set with no range limit.
type SeqSet struct {
	// ranges is sorted by From; ranges are disjoint and non-adjacent:
	// ranges[i].To+1 < ranges[i+1].From for every i.
	ranges []Range
	// maxRanges caps len(ranges); 0 means no cap.
	maxRanges int
}

// NewSeqSet returns an empty set that refuses to grow beyond maxRanges ranges
// (0: no limit).
func NewSeqSet(maxRanges int) *SeqSet { return &SeqSet{maxRanges: maxRanges} }

// MaxRanges returns the range limit (0: none).
func (s *SeqSet) MaxRanges() int { return s.maxRanges }

// SetMaxRanges changes the range limit. A set that already holds more ranges
// keeps them; it only refuses to grow further.
func (s *SeqSet) SetMaxRanges(n int) { s.maxRanges = n }

// Add inserts n. It reports whether n is new; a number already present leaves
// the set unchanged. When n needs a new range and the set is at its limit, Add
// returns ErrTooManyRanges and the set is unchanged. Extending the last range,
// the usual case, is constant time and does not allocate.
func (s *SeqSet) Add(n uint64) (bool, error) {
	k := len(s.ranges)
	if k > 0 {
		last := &s.ranges[k-1]
		if n > last.To {
			if n == last.To+1 {
				last.To = n
				return true, nil
			}
			return s.insertAt(k, n)
		}
		if n >= last.From {
			return false, nil
		}
	}
	// Find the first range whose To >= n.
	i := s.search(n)
	if i < k && s.ranges[i].From <= n {
		return false, nil
	}
	joinLeft := i > 0 && s.ranges[i-1].To+1 == n
	joinRight := i < k && n+1 == s.ranges[i].From
	switch {
	case joinLeft && joinRight:
		s.ranges[i-1].To = s.ranges[i].To
		s.ranges = append(s.ranges[:i], s.ranges[i+1:]...)
	case joinLeft:
		s.ranges[i-1].To = n
	case joinRight:
		s.ranges[i].From = n
	default:
		return s.insertAt(i, n)
	}
	return true, nil
}

func (s *SeqSet) insertAt(i int, n uint64) (bool, error) {
	if s.maxRanges > 0 && len(s.ranges) >= s.maxRanges {
		return false, ErrTooManyRanges
	}
	s.ranges = append(s.ranges, Range{})
	copy(s.ranges[i+1:], s.ranges[i:])
	s.ranges[i] = Range{From: n, To: n}
	return true, nil
}

// search returns the index of the first range with To >= n (len if none).
func (s *SeqSet) search(n uint64) int {
	lo, hi := 0, len(s.ranges)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.ranges[m].To < n {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Contains reports whether n is in the set.
func (s *SeqSet) Contains(n uint64) bool {
	i := s.search(n)
	return i < len(s.ranges) && s.ranges[i].From <= n
}

// Ranges yields the ranges in increasing order.
func (s *SeqSet) Ranges() iter.Seq[Range] {
	return func(yield func(Range) bool) {
		for _, r := range s.ranges {
			if !yield(r) {
				return
			}
		}
	}
}

// AppendRanges appends the ranges in increasing order to dst.
func (s *SeqSet) AppendRanges(dst []Range) []Range { return append(dst, s.ranges...) }

// RangeCount returns the number of ranges.
func (s *SeqSet) RangeCount() int { return len(s.ranges) }

// Count returns how many numbers the set holds, saturating at math.MaxUint64.
func (s *SeqSet) Count() uint64 {
	var c uint64
	for _, r := range s.ranges {
		l := r.Len()
		if c > math.MaxUint64-l {
			return math.MaxUint64
		}
		c += l
	}
	return c
}

// Empty reports whether the set holds no number.
func (s *SeqSet) Empty() bool { return len(s.ranges) == 0 }

// Max returns the largest number in the set.
func (s *SeqSet) Max() (uint64, bool) {
	if len(s.ranges) == 0 {
		return 0, false
	}
	return s.ranges[len(s.ranges)-1].To, true
}

// ContainsAll reports whether every number of 0..upTo is in the set: a group
// whose last number is upTo is complete (D22, D23).
func (s *SeqSet) ContainsAll(upTo uint64) bool {
	return len(s.ranges) > 0 && s.ranges[0].From == 0 && s.ranges[0].To >= upTo
}

// FirstGap returns the smallest number not in the set.
func (s *SeqSet) FirstGap() uint64 {
	if len(s.ranges) == 0 || s.ranges[0].From > 0 {
		return 0
	}
	return s.ranges[0].To + 1 // wraps to 0 only for the full set
}

// Gaps yields the missing runs of numbers in 0..upTo, in increasing order.
func (s *SeqSet) Gaps(upTo uint64) iter.Seq[Range] {
	return func(yield func(Range) bool) {
		next := uint64(0)
		for _, r := range s.ranges {
			if r.From > upTo {
				break
			}
			if r.From > next {
				if !yield(Range{From: next, To: r.From - 1}) {
					return
				}
			}
			if r.To >= upTo {
				return
			}
			next = r.To + 1
		}
		if next <= upTo {
			yield(Range{From: next, To: upTo})
		}
	}
}

// Clone returns an independent copy with the same limit.
func (s *SeqSet) Clone() *SeqSet {
	return &SeqSet{ranges: append([]Range(nil), s.ranges...), maxRanges: s.maxRanges}
}
