package group

import (
	"errors"
	"math"
	"slices"
	"testing"
)

const maxU = uint64(math.MaxUint64)

// A group received in order is one range; a resend is not new (D17, D18).
func TestSeqSetInOrderIsOneRange(t *testing.T) {
	s := &SeqSet{}
	if !s.Empty() {
		t.Fatal("zero set not empty")
	}
	for n := uint64(0); n < 1_000_000; n++ {
		mustAdd(t, s, n, true)
	}
	if s.RangeCount() != 1 {
		t.Fatalf("1,000,000 in-order numbers use %d ranges, want 1", s.RangeCount())
	}
	wantRanges(t, s, Range{0, 999_999})
	mustAdd(t, s, 500_000, false)
	mustAdd(t, s, 0, false)
	mustAdd(t, s, 999_999, false)
	if c := s.Count(); c != 1_000_000 {
		t.Fatalf("Count = %d", c)
	}
}

// A gap opens a second range; filling it merges the neighbours.
func TestSeqSetGapFillsAndMerges(t *testing.T) {
	s := &SeqSet{}
	for _, n := range []uint64{0, 1, 2, 5, 6, 9} {
		mustAdd(t, s, n, true)
	}
	wantRanges(t, s, Range{0, 2}, Range{5, 6}, Range{9, 9})
	if s.Contains(3) || s.Contains(4) || !s.Contains(5) || s.Contains(10) || !s.Contains(9) {
		t.Fatal("Contains wrong around gaps")
	}
	mustAdd(t, s, 4, true) // joins right
	wantRanges(t, s, Range{0, 2}, Range{4, 6}, Range{9, 9})
	mustAdd(t, s, 8, true) // joins right of the last
	wantRanges(t, s, Range{0, 2}, Range{4, 6}, Range{8, 9})
	mustAdd(t, s, 3, true) // joins both
	wantRanges(t, s, Range{0, 6}, Range{8, 9})
	mustAdd(t, s, 7, true)
	wantRanges(t, s, Range{0, 9})
	mustAdd(t, s, 20, true)
	mustAdd(t, s, 15, true) // new range in the middle
	wantRanges(t, s, Range{0, 9}, Range{15, 15}, Range{20, 20})
	mustAdd(t, s, 16, true) // joins left, not last
	wantRanges(t, s, Range{0, 9}, Range{15, 16}, Range{20, 20})
	mustAdd(t, s, 15, false)
	mustAdd(t, s, 12, true)
	wantRanges(t, s, Range{0, 9}, Range{12, 12}, Range{15, 16}, Range{20, 20})
	if c := s.Count(); c != 14 {
		t.Fatalf("Count = %d, want 14", c)
	}
	if m, ok := s.Max(); !ok || m != 20 {
		t.Fatalf("Max = %d,%v", m, ok)
	}
}

// Numbers at the top of uint64 never wrap (D2).
func TestSeqSetAtMaximum(t *testing.T) {
	s := &SeqSet{}
	mustAdd(t, s, maxU, true)
	mustAdd(t, s, maxU, false)
	mustAdd(t, s, 0, true) // must not be taken as MaxUint64+1
	wantRanges(t, s, Range{0, 0}, Range{maxU, maxU})
	mustAdd(t, s, maxU-1, true)
	wantRanges(t, s, Range{0, 0}, Range{maxU - 1, maxU})
	if s.ContainsAll(maxU) {
		t.Fatal("ContainsAll(max) with a gap")
	}
	if _, err := s.AddRange(Range{1, maxU - 2}); err != nil {
		t.Fatal(err)
	}
	wantRanges(t, s, Range{0, maxU})
	if !s.ContainsAll(maxU) || s.Count() != maxU {
		t.Fatalf("full set: ContainsAll=%v Count=%d", s.ContainsAll(maxU), s.Count())
	}
	if g := s.FirstGap(); g != 0 {
		t.Fatalf("FirstGap of full set = %d, documented as 0", g)
	}
	if _, ok := s.FirstMissing(); ok {
		t.Fatal("full set reports a missing number")
	}
	if n := slices.Collect(s.Gaps(maxU)); len(n) != 0 {
		t.Fatalf("Gaps of full set = %v", n)
	}
}

// The range cap refuses a number that needs a new range and never forgets
// one already recorded; numbers that extend or merge are still accepted.
func TestSeqSetRangeLimit(t *testing.T) {
	s := NewSeqSet(2)
	if s.MaxRanges() != 2 {
		t.Fatalf("MaxRanges = %d", s.MaxRanges())
	}
	mustAdd(t, s, 0, true)
	mustAdd(t, s, 5, true)
	if _, err := s.Add(10); !errors.Is(err, ErrTooManyRanges) {
		t.Fatalf("third range: err = %v", err)
	}
	if _, err := s.Add(3); !errors.Is(err, ErrTooManyRanges) {
		t.Fatalf("middle range: err = %v", err)
	}
	if _, err := s.AddRange(Range{20, 30}); !errors.Is(err, ErrTooManyRanges) {
		t.Fatalf("AddRange third: err = %v", err)
	}
	wantRanges(t, s, Range{0, 0}, Range{5, 5})
	mustAdd(t, s, 6, true) // extends the last
	mustAdd(t, s, 1, true) // joins left
	mustAdd(t, s, 4, true) // joins right
	mustAdd(t, s, 5, false)
	if n, err := s.AddRange(Range{2, 3}); err != nil || n != 2 {
		t.Fatalf("merging AddRange = %d, %v", n, err)
	}
	wantRanges(t, s, Range{0, 6})
	s.SetMaxRanges(1)
	if _, err := s.Add(9); !errors.Is(err, ErrTooManyRanges) {
		t.Fatalf("after lowering: err = %v", err)
	}
	s.SetMaxRanges(0)
	mustAdd(t, s, 9, true)
	mustAdd(t, s, 11, true)
	mustAdd(t, s, 13, true)
	if s.RangeCount() != 4 {
		t.Fatalf("unlimited: %d ranges", s.RangeCount())
	}
}

func TestSeqSetAddRange(t *testing.T) {
	cases := []struct {
		name  string
		start []Range
		add   Range
		added uint64
		want  []Range
	}{
		{"into empty", nil, Range{3, 7}, 5, []Range{{3, 7}}},
		{"disjoint before", []Range{{10, 12}}, Range{3, 7}, 5, []Range{{3, 7}, {10, 12}}},
		{"touches left", []Range{{0, 2}}, Range{3, 7}, 5, []Range{{0, 7}}},
		{"touches right", []Range{{8, 9}}, Range{3, 7}, 5, []Range{{3, 9}}},
		{"spans several", []Range{{0, 1}, {4, 4}, {6, 7}, {20, 20}}, Range{2, 10}, 6, []Range{{0, 10}, {20, 20}}},
		{"already present", []Range{{0, 10}}, Range{3, 7}, 0, []Range{{0, 10}}},
		{"overlaps end", []Range{{0, 5}}, Range{3, 8}, 3, []Range{{0, 8}}},
		{"whole space", []Range{{5, 5}}, Range{0, maxU}, maxU, []Range{{0, maxU}}},
		{"whole space empty", nil, Range{0, maxU}, maxU, []Range{{0, maxU}}},
		{"whole into whole", []Range{{0, maxU}}, Range{0, maxU}, 0, []Range{{0, maxU}}},
		{"top", []Range{{0, 0}}, Range{maxU - 1, maxU}, 2, []Range{{0, 0}, {maxU - 1, maxU}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := set(t, c.start...)
			n, err := s.AddRange(c.add)
			if err != nil {
				t.Fatal(err)
			}
			if n != c.added {
				t.Fatalf("added %d, want %d", n, c.added)
			}
			wantRanges(t, s, c.want...)
		})
	}
	if _, err := (&SeqSet{}).AddRange(Range{5, 4}); err == nil {
		t.Fatal("inverted range accepted")
	}
}

func TestSeqSetGapsAndMissing(t *testing.T) {
	s := set(t, Range{2, 3}, Range{6, 6}, Range{9, 12})
	cases := []struct {
		upTo uint64
		want []Range
	}{
		{0, []Range{{0, 0}}},
		{1, []Range{{0, 1}}},
		{3, []Range{{0, 1}}},
		{5, []Range{{0, 1}, {4, 5}}},
		{10, []Range{{0, 1}, {4, 5}, {7, 8}}},
		{15, []Range{{0, 1}, {4, 5}, {7, 8}, {13, 15}}},
	}
	for _, c := range cases {
		if got := slices.Collect(s.Gaps(c.upTo)); !slices.Equal(got, c.want) {
			t.Errorf("Gaps(%d) = %v, want %v", c.upTo, got, c.want)
		}
	}
	if got := slices.Collect(s.Missing(14)); !slices.Equal(got, []uint64{0, 1, 4, 5, 7, 8, 13, 14}) {
		t.Errorf("Missing(14) = %v", got)
	}
	// Stopping early stops both iterators.
	var first []uint64
	for n := range s.Missing(maxU) {
		first = append(first, n)
		if len(first) == 3 {
			break
		}
	}
	if !slices.Equal(first, []uint64{0, 1, 4}) {
		t.Errorf("Missing with break = %v", first)
	}
	var gaps []Range
	for g := range s.Gaps(100) {
		gaps = append(gaps, g)
		break
	}
	if !slices.Equal(gaps, []Range{{0, 1}}) {
		t.Errorf("Gaps with break = %v", gaps)
	}
	var rs []Range
	for r := range s.Ranges() {
		rs = append(rs, r)
		break
	}
	if !slices.Equal(rs, []Range{{2, 3}}) {
		t.Errorf("Ranges with break = %v", rs)
	}
	if got := slices.Collect((&SeqSet{}).Gaps(3)); !slices.Equal(got, []Range{{0, 3}}) {
		t.Errorf("Gaps of empty set = %v", got)
	}
	top := set(t, Range{maxU - 1, maxU})
	var n []uint64
	for m := range top.Missing(maxU) {
		n = append(n, m)
		if len(n) == 2 {
			break
		}
	}
	if !slices.Equal(n, []uint64{0, 1}) {
		t.Errorf("Missing near the top = %v", n)
	}
	if got := slices.Collect(set(t, Range{0, maxU - 1}).Missing(maxU)); !slices.Equal(got, []uint64{maxU}) {
		t.Errorf("Missing(max) = %v", got)
	}
}

func TestSeqSetFirstGapAndContainsAll(t *testing.T) {
	s := &SeqSet{}
	if s.FirstGap() != 0 || s.ContainsAll(0) {
		t.Fatal("empty set")
	}
	if _, ok := s.Max(); ok {
		t.Fatal("Max of empty set")
	}
	mustAdd(t, s, 1, true)
	if s.FirstGap() != 0 {
		t.Fatalf("FirstGap = %d, want 0", s.FirstGap())
	}
	mustAdd(t, s, 0, true)
	mustAdd(t, s, 3, true)
	if g, ok := s.FirstMissing(); !ok || g != 2 {
		t.Fatalf("FirstMissing = %d,%v", g, ok)
	}
	if !s.ContainsAll(1) || s.ContainsAll(3) {
		t.Fatal("ContainsAll wrong")
	}
}

func TestSeqSetCloneEqualAppend(t *testing.T) {
	s := set(t, Range{0, 4}, Range{8, 9})
	s.SetMaxRanges(7)
	c := s.Clone()
	if !c.Equal(s) || c.MaxRanges() != 7 {
		t.Fatal("clone differs")
	}
	mustAdd(t, c, 20, true)
	if c.Equal(s) || s.Contains(20) {
		t.Fatal("clone shares storage")
	}
	if s.Equal(set(t, Range{0, 4}, Range{8, 10})) {
		t.Fatal("Equal ignores a different range")
	}
	got := s.AppendRanges([]Range{{100, 100}})
	if !slices.Equal(got, []Range{{100, 100}, {0, 4}, {8, 9}}) {
		t.Fatalf("AppendRanges = %v", got)
	}
}

func TestRange(t *testing.T) {
	r := Range{3, 5}
	if !r.Contains(3) || !r.Contains(5) || r.Contains(2) || r.Contains(6) {
		t.Fatal("Contains")
	}
	if r.Len() != 3 || (Range{7, 7}).Len() != 1 || (Range{0, maxU}).Len() != maxU || (Range{1, maxU}).Len() != maxU {
		t.Fatal("Len")
	}
}

func TestSeqSetCheckRejectsBrokenSets(t *testing.T) {
	for _, rs := range [][]Range{
		{{5, 4}},
		{{0, 3}, {4, 6}},          // adjacent
		{{0, 5}, {3, 8}},          // overlapping
		{{5, 6}, {0, 1}},          // unsorted
		{{0, maxU}, {maxU, maxU}}, // after the maximum
	} {
		if err := (&SeqSet{ranges: rs}).Check(); err == nil {
			t.Errorf("Check(%v) = nil", rs)
		}
	}
}

// The in-order path allocates nothing (a goal of the issue, checked here by
// count, not by time).
func TestSeqSetInOrderAddDoesNotAllocate(t *testing.T) {
	s := set(t, Range{0, 10})
	n := uint64(11)
	allocs := testing.AllocsPerRun(1000, func() {
		s.Add(n) //nolint:errcheck // no limit
		n++
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per in-order Add", allocs)
	}
	if s.RangeCount() != 1 {
		t.Fatalf("%d ranges", s.RangeCount())
	}
}
