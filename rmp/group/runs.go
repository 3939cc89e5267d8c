package group

import (
	"cmp"
	"errors"
	"slices"
)

// Run is a range of sequence numbers with a label: one ReplyRange of an
// acknowledgement (digest §2.3), whose label is the optional fault code (the
// zero label meaning a plain ack). The label is generic: any comparable
// status, a faults.Code among them.
type Run[L comparable] struct {
	Range
	Label L
}

// ErrRunOrder is returned by RunBuilder.Add for a range that does not start
// after the last one added, and by MergeRuns for overlapping runs.
var ErrRunOrder = errors.New("group: reply runs overlap or are out of order")

// RunBuilder collects runs in increasing order and merges a run into the
// previous one when they touch and carry the same label. The zero value is
// ready to use.
type RunBuilder[L comparable] struct {
	// runs is sorted, disjoint, and no two adjacent runs carry the same
	// label.
	runs []Run[L]
}

// Add appends r with label; r must start after every range added before.
func (b *RunBuilder[L]) Add(r Range, label L) error {
	if r.From > r.To {
		return errInvertedRange
	}
	if k := len(b.runs); k > 0 {
		last := &b.runs[k-1]
		if r.From <= last.To {
			return ErrRunOrder
		}
		if last.Label == label && last.To+1 == r.From {
			last.To = r.To
			return nil
		}
	}
	b.runs = append(b.runs, Run[L]{Range: r, Label: label})
	return nil
}

// AddNumber adds the single number n with label.
func (b *RunBuilder[L]) AddNumber(n uint64, label L) error {
	return b.Add(Range{From: n, To: n}, label)
}

// AddSet adds every range of s with label.
func (b *RunBuilder[L]) AddSet(s *SeqSet, label L) error {
	for r := range s.Ranges() {
		if err := b.Add(r, label); err != nil {
			return err
		}
	}
	return nil
}

// Runs returns the runs built so far; the slice is the builder's own.
func (b *RunBuilder[L]) Runs() []Run[L] { return b.runs }

// Len returns the number of runs.
func (b *RunBuilder[L]) Len() int { return len(b.runs) }

// Reset empties the builder, keeping its memory.
func (b *RunBuilder[L]) Reset() { b.runs = b.runs[:0] }

// MergeRuns sorts runs by From (in place) and merges touching runs with the
// same label, for replies gathered in any order. Overlapping runs are an
// error: a number has one outcome in one reply.
func MergeRuns[L comparable](runs []Run[L]) ([]Run[L], error) {
	slices.SortFunc(runs, func(a, b Run[L]) int { return cmp.Compare(a.From, b.From) })
	var b RunBuilder[L]
	b.runs = runs[:0] // in place: writes never pass the read index
	for _, r := range runs {
		if err := b.Add(r.Range, r.Label); err != nil {
			return nil, err
		}
	}
	return b.runs, nil
}
