package group

import (
	"errors"
	"fmt"
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
	// ranges is sorted by From; each has From <= To; ranges are disjoint and
	// non-adjacent: ranges[i].To+1 < ranges[i+1].From for every i. Checked
	// after every mutation under the invariants build tag.
	ranges []Range
	// maxRanges caps len(ranges) when > 0; 0 means no cap. Only growth is
	// refused: a set may hold more ranges after SetMaxRanges lowered it.
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
		if n == last.To+1 && n != 0 { // n != 0: last.To is not MaxUint64
			last.To = n
			if invariants {
				s.mustCheck()
			}
			return true, nil
		}
	}
	isNew, err := s.add(n)
	if invariants {
		s.mustCheck()
	}
	return isNew, err
}

// add is Add off the fast path.
func (s *SeqSet) add(n uint64) (bool, error) {
	k := len(s.ranges)
	if k > 0 {
		last := s.ranges[k-1]
		if n > last.To {
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

// FirstGap returns the smallest number not in the set: the next number an
// ordered group waits for. For the full set 0..MaxUint64, which has no gap,
// it returns 0; FirstMissing tells that case apart.
func (s *SeqSet) FirstGap() uint64 {
	if len(s.ranges) == 0 || s.ranges[0].From > 0 {
		return 0
	}
	return s.ranges[0].To + 1 // wraps to 0 only for the full set
}

// FirstMissing returns the smallest number not in the set, and false when
// the set holds every uint64.
func (s *SeqSet) FirstMissing() (uint64, bool) {
	if len(s.ranges) == 1 && s.ranges[0] == (Range{0, math.MaxUint64}) {
		return 0, false
	}
	return s.FirstGap(), true
}

// Missing yields the numbers of 0..upTo that are not in the set, in
// increasing order. There may be very many: stop early (break) or use Gaps.
func (s *SeqSet) Missing(upTo uint64) iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		for g := range s.Gaps(upTo) {
			for n := g.From; ; n++ {
				if !yield(n) {
					return
				}
				if n == g.To {
					break
				}
			}
		}
	}
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

// Equal reports whether s and o hold the same numbers (limits are not
// compared).
func (s *SeqSet) Equal(o *SeqSet) bool {
	if len(s.ranges) != len(o.ranges) {
		return false
	}
	for i, r := range s.ranges {
		if o.ranges[i] != r {
			return false
		}
	}
	return true
}

// AddRange inserts every number of r, merging with the ranges it overlaps or
// touches. It returns how many numbers were new (saturating at MaxUint64).
// When r would need a new range and the set is at its limit it returns
// ErrTooManyRanges and the set is unchanged; merging never needs one. A
// range with From > To is an error.
func (s *SeqSet) AddRange(r Range) (uint64, error) {
	if r.From > r.To {
		return 0, errInvertedRange
	}
	// [i, j) are the ranges that overlap or touch r.
	i := s.search(r.From)
	if i > 0 && s.ranges[i-1].To+1 == r.From {
		i--
	}
	j := i
	for j < len(s.ranges) && (s.ranges[j].From <= r.To || s.ranges[j].From-1 == r.To) {
		j++
	}
	if j == i+1 && s.ranges[i].From <= r.From && r.To <= s.ranges[i].To {
		return 0, nil // already present
	}
	if i == j && s.maxRanges > 0 && len(s.ranges) >= s.maxRanges {
		return 0, ErrTooManyRanges
	}
	merged := r
	covered := uint64(0)
	for _, o := range s.ranges[i:j] {
		merged.From = min(merged.From, o.From)
		merged.To = max(merged.To, o.To)
		// The part of o inside r is already present.
		lo, hi := max(o.From, r.From), min(o.To, r.To)
		if lo <= hi {
			covered += Range{lo, hi}.Len()
		}
	}
	// covered < |r| here, so it did not saturate; |r| itself saturates only
	// for 0..MaxUint64, one short of 2^64.
	added := r.Len() - covered
	if r.Len() == math.MaxUint64 && r.From == 0 && covered > 0 {
		added++
	}
	switch {
	case i == j:
		s.ranges = append(s.ranges, Range{})
		copy(s.ranges[i+1:], s.ranges[i:])
		s.ranges[i] = merged
	default:
		s.ranges[i] = merged
		s.ranges = append(s.ranges[:i+1], s.ranges[j:]...)
	}
	if invariants {
		s.mustCheck()
	}
	return added, nil
}

var errInvertedRange = errors.New("group: range with From > To")

// Check reports whether the set's invariant holds: every range has From <=
// To, ranges are sorted, disjoint and non-adjacent. It is nil for every set
// built through this package's API; decoders and the invariants build tag
// use it.
func (s *SeqSet) Check() error { return checkRanges(s.ranges) }

func checkRanges(rs []Range) error {
	for i, r := range rs {
		if r.From > r.To {
			return fmt.Errorf("group: range %d is inverted (%d > %d)", i, r.From, r.To)
		}
		if i > 0 && (rs[i-1].To == math.MaxUint64 || rs[i-1].To+1 >= r.From) {
			return fmt.Errorf("group: ranges %d and %d overlap or touch", i-1, i)
		}
	}
	return nil
}

func (s *SeqSet) mustCheck() {
	if err := s.Check(); err != nil {
		panic(err)
	}
}
