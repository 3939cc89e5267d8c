package gateway

import "time"

// The bounds of an RFC 3339 instant: a four-digit year (#18).
var (
	minAPITime = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	maxAPITime = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
)

// apiTime formats t for the API in UTC, RFC 3339 with nanoseconds, clamped
// into the years RFC 3339 can write (a deadline derived from a far
// groupMaxIdle or expiry would otherwise print a five-digit year).
func apiTime(t time.Time) string {
	t = t.UTC()
	switch {
	case t.Before(minAPITime):
		t = minAPITime
	case t.After(maxAPITime):
		t = maxAPITime
	}
	return t.Format(time.RFC3339Nano)
}
