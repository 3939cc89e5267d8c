package group

import "time"

// Duration is an xsd:duration as used by SequenceNum/@groupMaxIdleDuration
// (D1). Years, months and days have no fixed length, so a Duration is added to
// an instant on the calendar (digest §15), never converted to nanoseconds.
type Duration struct {
	// Negative reverses the whole duration; a negative idle duration makes
	// no sense, and receivers refuse it.
	Negative bool
	Years    int64
	Months   int64
	Days     int64
	// Clock is the hours, minutes and seconds part.
	Clock time.Duration
}

// Fixed returns the Duration of d with no calendar part.
func Fixed(d time.Duration) Duration {
	if d < 0 {
		return Duration{Negative: true, Clock: -d}
	}
	return Duration{Clock: d}
}

// IsZero reports whether every part of d is zero.
func (d Duration) IsZero() bool {
	return d.Years == 0 && d.Months == 0 && d.Days == 0 && d.Clock == 0
}

// AddTo returns t plus d, computed in UTC with the calendar for the years,
// months and days parts (D3).
func (d Duration) AddTo(t time.Time) time.Time {
	t = t.UTC()
	if d.Negative {
		return t.AddDate(-int(d.Years), -int(d.Months), -int(d.Days)).Add(-d.Clock)
	}
	return t.AddDate(int(d.Years), int(d.Months), int(d.Days)).Add(d.Clock)
}
