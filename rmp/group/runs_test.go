package group

import (
	"errors"
	"slices"
	"testing"
)

// label stands for an optional fault code: 0 is a plain ack.
type label uint8

func TestRunBuilderMergesSameLabel(t *testing.T) {
	var b RunBuilder[label]
	steps := []struct {
		r Range
		l label
	}{{Range{0, 3}, 0}, {Range{4, 4}, 0}, {Range{5, 6}, 7}, {Range{7, 7}, 7}, {Range{9, 9}, 7}, {Range{10, 12}, 0}}
	for _, s := range steps {
		if err := b.Add(s.r, s.l); err != nil {
			t.Fatal(err)
		}
	}
	want := []Run[label]{{Range{0, 4}, 0}, {Range{5, 7}, 7}, {Range{9, 9}, 7}, {Range{10, 12}, 0}}
	if !slices.Equal(b.Runs(), want) || b.Len() != 4 {
		t.Fatalf("runs = %v", b.Runs())
	}
	if err := b.Add(Range{12, 14}, 0); !errors.Is(err, ErrRunOrder) {
		t.Fatalf("overlap: %v", err)
	}
	if err := b.AddNumber(2, 0); !errors.Is(err, ErrRunOrder) {
		t.Fatalf("out of order: %v", err)
	}
	if err := b.Add(Range{20, 19}, 0); err == nil {
		t.Fatal("inverted range accepted")
	}
	if err := b.AddNumber(13, 0); err != nil || b.Runs()[3] != (Run[label]{Range{10, 13}, 0}) {
		t.Fatalf("AddNumber: %v %v", err, b.Runs())
	}
	b.Reset()
	if b.Len() != 0 {
		t.Fatal("Reset")
	}
	if err := b.AddSet(set(t, Range{0, 2}, Range{5, 5}), 3); err != nil {
		t.Fatal(err)
	}
	if err := b.AddSet(set(t, Range{6, 8}), 3); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.Runs(), []Run[label]{{Range{0, 2}, 3}, {Range{5, 8}, 3}}) {
		t.Fatalf("AddSet: %v", b.Runs())
	}
	if err := b.AddSet(set(t, Range{1, 1}), 3); !errors.Is(err, ErrRunOrder) {
		t.Fatalf("AddSet out of order: %v", err)
	}
}

func TestMergeRuns(t *testing.T) {
	in := []Run[label]{{Range{8, 9}, 0}, {Range{0, 2}, 0}, {Range{3, 3}, 5}, {Range{4, 7}, 0}, {Range{10, 10}, 0}}
	got, err := MergeRuns(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []Run[label]{{Range{0, 2}, 0}, {Range{3, 3}, 5}, {Range{4, 10}, 0}}
	if !slices.Equal(got, want) {
		t.Fatalf("MergeRuns = %v", got)
	}
	if _, err := MergeRuns([]Run[label]{{Range{0, 5}, 0}, {Range{5, 6}, 1}}); !errors.Is(err, ErrRunOrder) {
		t.Fatalf("overlap: %v", err)
	}
	if got, err := MergeRuns[label](nil); err != nil || len(got) != 0 {
		t.Fatal("empty")
	}
}
