package group

import (
	"slices"
	"testing"
)

// set builds a SeqSet from ranges, failing the test on error.
func set(t testing.TB, rs ...Range) *SeqSet {
	t.Helper()
	s := &SeqSet{}
	for _, r := range rs {
		if _, err := s.AddRange(r); err != nil {
			t.Fatalf("AddRange(%v): %v", r, err)
		}
	}
	return s
}

func rangesOf(s *SeqSet) []Range { return slices.Collect(s.Ranges()) }

func wantRanges(t testing.TB, s *SeqSet, want ...Range) {
	t.Helper()
	got := rangesOf(s)
	if len(want) == 0 {
		want = nil
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ranges = %v, want %v", got, want)
	}
	if err := s.Check(); err != nil {
		t.Fatalf("invariant: %v", err)
	}
}

func mustAdd(t testing.TB, s *SeqSet, n uint64, wantNew bool) {
	t.Helper()
	isNew, err := s.Add(n)
	if err != nil {
		t.Fatalf("Add(%d): %v", n, err)
	}
	if isNew != wantNew {
		t.Fatalf("Add(%d) new = %v, want %v", n, isNew, wantNew)
	}
}
