package receiver

import (
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// Group state is bounded over time and by peer (#18): no accepted message
// may keep state beyond Config.MaxLifetime, and one peer cannot open more
// than Config.MaxGroupsPerPeer generations, so that neither far-future
// expiries nor one busy peer can fill MaxGroups for everyone for good.

// peerCount is one peer's count of generations with state.
type peerCount struct {
	name   string
	groups int
}

// peerOf returns the count of peer name, nil for "" (not counted).
func (r *Receiver) peerOf(name string) *peerCount {
	if name == "" {
		return nil
	}
	p := r.peers[name]
	if p == nil {
		p = &peerCount{name: name}
		r.peers[name] = p
	}
	return p
}

// checkLifetime refuses m when its ExpiryTime or groupExpiryTime lies more
// than MaxLifetime after now (InvalidExpiryTime, as D3 for an unusable
// ExpiryTime), or its groupMaxIdleDuration is longer (InvalidMessageParameters,
// as D25 for group timing).
func (r *Receiver) checkLifetime(now time.Time, m *Message) *refusal {
	limit := r.cfg.MaxLifetime
	if limit <= 0 {
		return nil
	}
	horizon := now.Add(limit)
	t := m.Timing
	switch {
	case m.Expiry.After(horizon):
		return &refusal{faults.InvalidExpiryTime, "receiver.expiry-beyond-max-lifetime"}
	case t.HasExpiry() && t.Expiry.After(horizon):
		return &refusal{faults.InvalidExpiryTime, "receiver.group-expiry-beyond-max-lifetime"}
	case t.HasMaxIdle && Exceeds(t.MaxIdle, limit):
		return &refusal{faults.InvalidMessageParameters, "receiver.max-idle-beyond-max-lifetime"}
	}
	return nil
}

// Exceeds reports whether d is longer than limit from any instant: with
// calendar parts, from the longest case (31-day months, 366-day years).
// Parts beyond any time.Duration exceed it without arithmetic, which
// would overflow.
func Exceeds(d group.Duration, limit time.Duration) bool {
	if d.Negative {
		return false
	}
	const maxYears = 292 // time.Duration's range
	if d.Years > maxYears || d.Months > 12*maxYears || d.Days > 366*maxYears {
		return true
	}
	const day = 24 * time.Hour
	days := d.Years*366 + d.Months*31 + d.Days
	if days < 0 || days > int64(limit/day) {
		return true
	}
	return d.Clock < 0 || d.Clock > limit-time.Duration(days)*day
}
