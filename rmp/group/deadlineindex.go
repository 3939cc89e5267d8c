package group

import (
	"math"
	"time"
)

// Stores index deadlines (OpSetDeadline) as int64 nanoseconds since the
// Unix epoch, years 1678–2262, and refuse other instants. A groupExpiryTime
// or ExpiryTime beyond that range is valid xsd:dateTime, so the instant a
// state machine indexes is clamped into it rather than failing the batch;
// its own timers keep the exact instant (an engine woken at the clamp finds
// nothing due).
var (
	minIndexed = time.Unix(0, math.MinInt64).UTC()
	maxIndexed = time.Unix(0, math.MaxInt64).UTC()
)

// MinIndexedDeadline and MaxIndexedDeadline bound the instants an
// OpSetDeadline carries.
func MinIndexedDeadline() time.Time { return minIndexed }

// MaxIndexedDeadline: see MinIndexedDeadline.
func MaxIndexedDeadline() time.Time { return maxIndexed }

// DeadlineGrain is the resolution of the deadline index. Every message
// moves its group's deadline (its ExpiryTime extends the group's), by as
// little as the time between two messages; indexing the instant rounded
// down to the grain rewrites a busy group's index entry about once per
// grain instead of once per message (SPEC-NOTES "deadline index"), and an
// entry is never later than the deadline it stands for.
const DeadlineGrain = time.Second

// IndexedDeadline is the instant the deadline index holds for deadline t:
// t rounded down to DeadlineGrain, clamped into [MinIndexedDeadline,
// MaxIndexedDeadline]. An instant at or past MaxIndexedDeadline is indexed
// at the bound itself, so a state machine ticked there finds its entry
// unchanged.
func IndexedDeadline(t time.Time) time.Time {
	if !t.Before(maxIndexed) {
		return maxIndexed
	}
	// Truncate rounds relative to the zero Time, whose seconds are whole
	// Unix seconds too.
	if u := t.Truncate(DeadlineGrain); u.After(minIndexed) {
		return u
	}
	return minIndexed
}
