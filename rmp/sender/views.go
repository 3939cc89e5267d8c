package sender

import (
	"slices"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// GroupInfo describes one group in state (gateway GET /v1/groups). Its
// Generation is always 1: sender group ids are never reused (R05).
type GroupInfo struct {
	GroupID   string
	Key       string
	Singleton bool
	To        string
	// Pending counts the unacknowledged messages (gateway "held").
	Pending int
	// Acked are the acknowledged numbers not failed since: sorted,
	// disjoint, non-adjacent (gateway "ranges").
	Acked []group.Range
	// LastNumber is the number sent with last="true"; valid when HasLast.
	LastNumber uint64
	HasLast    bool
	Closed     bool
	Aborted    bool
	// Terminated: the group takes no new message (D16, D20–D23); Rule
	// says why.
	Terminated bool
	Rule       group.Rule
	// Deadline is the group's next lifecycle instant (termination or
	// removal); the zero Time when none.
	Deadline time.Time
	// LastActivity is the group's last transmission, resends included (R35).
	LastActivity time.Time
}

func (s *Sender) info(g *groupState) GroupInfo {
	gi := s.view(g)
	gi.Acked = slices.Clone(gi.Acked)
	return gi
}

// view is g's GroupInfo with Acked aliasing g's state.
func (s *Sender) view(g *groupState) GroupInfo {
	gi := GroupInfo{
		GroupID: s.idOf(g), Key: g.key, Singleton: g.singleton, To: g.to, Pending: len(g.pending),
		Acked: g.acked.rs, Closed: g.has(gClosed), Aborted: g.has(gAborted),
		Terminated: g.life.Terminated, Rule: g.life.Rule, LastActivity: g.life.LastActivity,
	}
	if !g.singleton {
		gi.LastNumber, gi.HasLast = g.life.Last, g.life.HasLast
	}
	if g.tm.scheduled() {
		gi.Deadline = s.timers.at(&g.tm)
	}
	return gi
}

// Group returns the state of one group.
func (s *Sender) Group(groupID string) (GroupInfo, bool) {
	g := s.group(groupID)
	if g == nil {
		return GroupInfo{}, false
	}
	return s.info(g), true
}

// Groups returns every group in state, sorted by GroupID.
func (s *Sender) Groups() []GroupInfo {
	gs := make([]*groupState, 0, len(s.groups))
	for _, g := range s.groups {
		gs = append(gs, g)
	}
	slices.SortFunc(gs, func(a, b *groupState) int { return compareIDs(s.cfg.InstanceID, a, b) })
	out := make([]GroupInfo, len(gs))
	for i, g := range gs {
		out[i] = s.info(g)
	}
	return out
}

// MessageState is where a message stands (gateway GET /v1/messages/{id}).
type MessageState uint8

const (
	// MessagePending: not yet acknowledged; resends go on (R21).
	MessagePending MessageState = iota + 1
	// MessageAcknowledged: a fault-less reply covered it (R29).
	MessageAcknowledged
	// MessageFailed: see MessageInfo.Reason.
	MessageFailed
)

var stateNames = [...]string{MessagePending: "pending", MessageAcknowledged: "acknowledged", MessageFailed: "failed"}

// String returns the gateway's JSON value.
func (m MessageState) String() string {
	if int(m) < len(stateNames) && stateNames[m] != "" {
		return stateNames[m]
	}
	return "MessageState(?)"
}

// MessageInfo is the status of one message.
type MessageInfo struct {
	State  MessageState
	Reason Reason
	// Fault is the received code when Reason is ReasonFaultReceived and
	// the outcome is still in the outbox.
	Fault faults.Code
	// Attempts counts transmissions, the first included; 0 when no longer
	// known (acknowledged and its outcome handled).
	Attempts int
	// SOAPFault is the outcome's Outcome.SOAPFault while it is in the outbox.
	SOAPFault string
	// Response is the outcome's business response while it is in the outbox.
	Response []byte
	// LastError is the detail of the last transmission that brought no
	// ack, for a pending message (TransportResult.Detail).
	LastError string
}

// Message returns the status of a message the Sender still knows: pending,
// with an outcome not yet handled by the producer (the newest one, D27), or
// acknowledged (or failed after its ack, D13) in a group kept for late
// faults. Outcomes handled and groups removed are forgotten: the producer
// keeps its own record of those.
func (s *Sender) Message(ref MessageRef) (MessageInfo, bool) {
	g := s.group(ref.GroupID)
	if g != nil && g.singleton == ref.Singleton {
		if m := g.pending[ref.Number]; m != nil {
			return MessageInfo{State: MessagePending, Attempts: m.attempts, LastError: m.lastResult.Detail}, true
		}
	}
	if id, ok := s.latest[ref]; ok {
		o := s.outbox[id].o
		st := MessageAcknowledged
		if o.Kind == Failed {
			st = MessageFailed
		}
		return MessageInfo{State: st, Reason: o.Reason, Fault: o.Fault, Attempts: o.Attempts, SOAPFault: o.SOAPFault, Response: o.Response}, true
	}
	if g == nil || g.singleton != ref.Singleton {
		return MessageInfo{}, false
	}
	if _, ok := g.lateFailedSet()[ref.Number]; ok {
		return MessageInfo{State: MessageFailed, Reason: ReasonFaultReceived}, true
	}
	if g.acked.contains(ref.Number) {
		return MessageInfo{State: MessageAcknowledged}, true
	}
	return MessageInfo{}, false
}

// LastResult returns the transport result last reported by Sent for a
// pending message.
func (s *Sender) LastResult(ref MessageRef) (TransportResult, bool) {
	g := s.group(ref.GroupID)
	if g == nil {
		return TransportResult{}, false
	}
	m := g.pending[ref.Number]
	if m == nil {
		return TransportResult{}, false
	}
	return m.lastResult, m.lastResult.Kind != 0
}
