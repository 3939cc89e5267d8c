package group

import (
	"testing"
	"time"
)

// IndexedDeadline never returns an instant later than its argument inside
// the store's range, rounds down to whole seconds, and clamps at the
// bounds (the maximum exactly, so a group ticked there is not re-indexed).
func TestIndexedDeadline(t *testing.T) {
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	paris := time.FixedZone("CET", 3600)
	cases := []struct{ in, want time.Time }{
		{base, base},
		{base.Add(time.Nanosecond), base},
		{base.Add(999_999_999), base},
		{base.Add(time.Second), base.Add(time.Second)},
		{base.Add(-time.Nanosecond), base.Add(-time.Second)},
		{base.Add(1500 * time.Millisecond).In(paris), base.Add(time.Second)},
		{time.Date(1969, 12, 31, 23, 59, 59, 500, time.UTC), time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC)},
		{MaxIndexedDeadline(), MaxIndexedDeadline()},
		{MaxIndexedDeadline().Add(-time.Nanosecond), MaxIndexedDeadline().Truncate(time.Second)},
		{time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), MaxIndexedDeadline()},
		{MinIndexedDeadline(), MinIndexedDeadline()},
		{MinIndexedDeadline().Add(time.Nanosecond), MinIndexedDeadline()},
		{MinIndexedDeadline().Add(2 * time.Second), MinIndexedDeadline().Add(2 * time.Second).Truncate(time.Second)},
		{time.Time{}, MinIndexedDeadline()},
	}
	for _, c := range cases {
		got := IndexedDeadline(c.in)
		if !got.Equal(c.want) {
			t.Errorf("IndexedDeadline(%v) = %v, want %v", c.in, got, c.want)
		}
		if got.Before(MinIndexedDeadline()) || got.After(MaxIndexedDeadline()) {
			t.Errorf("IndexedDeadline(%v) = %v, outside the store's range", c.in, got)
		}
		if c.in.After(MinIndexedDeadline()) && got.After(c.in) {
			t.Errorf("IndexedDeadline(%v) = %v, later than the deadline", c.in, got)
		}
	}
}
