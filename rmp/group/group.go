package group

import "time"

// ID identifies one generation of a group: its MessageId/@groupId and the
// generation number under which its state is stored (D24). Generations start
// at 1; a reused groupId after termination opens the next one.
type ID struct {
	GroupID    string
	Generation uint64
}

// Flags are the reliability contracts a group's messages ask for (digest
// §4.1). All messages of a group carry the same flags (R20).
type Flags struct {
	AckRequested         bool
	DuplicateElimination bool
	MessageOrder         bool
}

// Timing holds a group's timing parameters (D1, D20, D21). A group has at
// most one in practice (R13); a received group may carry both, and then the
// first to fire wins (D25).
type Timing struct {
	// Expiry is groupExpiryTime; the zero Time means none.
	Expiry time.Time
	// MaxIdle is groupMaxIdleDuration; valid only when HasMaxIdle.
	MaxIdle    Duration
	HasMaxIdle bool
}

// HasExpiry reports whether groupExpiryTime is set.
func (t Timing) HasExpiry() bool { return !t.Expiry.IsZero() }

// None reports whether the group has neither timing parameter (D23).
func (t Timing) None() bool { return !t.HasExpiry() && !t.HasMaxIdle }

// Passed reports whether the instant t has passed at now. An ExpiryTime is
// the latest instant at which a message may still be made available (D9), so
// an instant passes strictly after itself: Passed(t, t) is false.
func Passed(t, now time.Time) bool { return now.After(t) }

// PassDeadline returns the first instant at which Passed(t, ·) is true: the
// deadline a driver's timer is set to for "t has passed".
func PassDeadline(t time.Time) time.Time { return t.Add(time.Nanosecond) }
