package sender

import (
	"slices"
	"strings"
	"time"
)

// PendingInfo is one unacknowledged message of a group, for an operator
// (gateway console: pending resends).
type PendingInfo struct {
	Number uint64
	// Attempts counts transmissions made, the first included (D26).
	Attempts int
	// NextAt is the next resend, or after the last one the instant the
	// message fails with RetriesExhausted.
	NextAt time.Time
	// Expiry is the message's ExpiryTime (R10).
	Expiry time.Time
	// LastError is the detail of the last transmission that brought no ack.
	LastError string
}

// PendingMessages returns up to limit of a group's unacknowledged
// messages, lowest numbers first, and how many there are in all.
func (s *Sender) PendingMessages(groupID string, limit int) ([]PendingInfo, int) {
	g := s.group(groupID)
	if g == nil || len(g.pending) == 0 {
		return nil, 0
	}
	ns := make([]uint64, 0, len(g.pending))
	for n := range g.pending {
		ns = append(ns, n)
	}
	slices.Sort(ns) // no map order reaches the answer
	out := make([]PendingInfo, 0, min(limit, len(ns)))
	for _, n := range ns[:min(limit, len(ns))] {
		m := g.pending[n]
		out = append(out, PendingInfo{Number: n, Attempts: m.attempts, NextAt: m.nextAt, Expiry: m.expiry, LastError: m.lastResult.Detail})
	}
	return out, len(ns)
}

// DestinationInfo sums the unacknowledged messages bound for one
// destination (gateway GET /v1/peers).
type DestinationInfo struct {
	To string
	// Groups counts the groups in state sending there; Pending their
	// unacknowledged messages, Resending those of them sent more than
	// once (the retry backlog, D26).
	Groups, Pending, Resending int
	// LastError is the detail of the last failed transmission of a
	// pending message, as far as one is known (in memory only).
	LastError string
}

// Destinations returns every destination of a group in state, sorted by
// To.
func (s *Sender) Destinations() []DestinationInfo {
	by := map[string]*DestinationInfo{}
	add := func(g *groupState) {
		d := by[g.to]
		if d == nil {
			d = &DestinationInfo{To: g.to}
			by[g.to] = d
		}
		d.Groups++
		d.Pending += len(g.pending)
		for _, m := range g.pending {
			if m.attempts > 1 {
				d.Resending++
			}
			if m.lastResult.Detail != "" && m.lastResult.Detail > d.LastError {
				d.LastError = m.lastResult.Detail // the greatest: no map order reaches it
			}
		}
	}
	for _, g := range s.groups { // foreign groups are in groups too
		add(g)
	}
	out := make([]DestinationInfo, 0, len(by))
	for _, d := range by {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b DestinationInfo) int { return strings.Compare(a.To, b.To) })
	return out
}
