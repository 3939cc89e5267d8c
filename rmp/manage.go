package rmp

import (
	"context"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// GroupView is a read-only view of one group for the management API
// (gateway GET /v1/groups).
type GroupView struct {
	GroupID    string
	Generation uint64 // 1 for sending groups, which have one generation
	Role       group.Role
	// Terminated: the group expects no new message (D20–D23, D16).
	Terminated bool
	// Ranges are the received numbers (receiver) or the acknowledged ones
	// (sender), sorted and disjoint.
	Ranges []group.Range
	// Held counts, at the receiver, messages in the ordering buffer plus
	// accepted messages waiting to be taken by the consumer; at the
	// sender, messages not yet acknowledged.
	Held int
	// LastNumber is the number of the message that closed the group; valid
	// when HasLast.
	LastNumber uint64
	HasLast    bool
	// NextDeadline is the group's next timer; zero when none.
	NextDeadline time.Time
	// LastActivity is the last message received (receiver) or sent
	// (sender); zero when unknown.
	LastActivity time.Time
}

// SendingGroupView returns the management view of one sending group.
func (e *Engine) SendingGroupView(groupID string) (GroupView, bool) {
	gi, ok := e.send.Group(groupID)
	if !ok {
		return GroupView{}, false
	}
	return sendingView(gi), true
}

func sendingView(gi sender.GroupInfo) GroupView {
	v := GroupView{
		GroupID:      gi.GroupID,
		Generation:   1,
		Role:         group.RoleSender,
		Terminated:   gi.Terminated || gi.Aborted,
		Ranges:       append([]group.Range(nil), gi.Acked...),
		Held:         gi.Pending,
		LastNumber:   gi.LastNumber,
		HasLast:      gi.HasLast,
		NextDeadline: gi.Deadline,
		LastActivity: gi.LastActivity,
	}
	return v
}

func receivingView(gi receiver.GroupInfo) GroupView {
	v := GroupView{
		GroupID:      gi.GroupID,
		Generation:   gi.Generation,
		Role:         group.RoleReceiver,
		Terminated:   gi.Terminated,
		Ranges:       gi.Ranges,
		Held:         gi.Held,
		LastNumber:   gi.LastNumber,
		HasLast:      gi.HasLast,
		LastActivity: gi.LastActivity,
	}
	if gi.HasDeadline {
		v.NextDeadline = gi.NextDeadline
	}
	return v
}

// ReceivingGroups returns every listed receiving group generation, sorted
// by GroupID then Generation.
func (e *Engine) ReceivingGroups() []GroupView {
	gs := e.recv.Groups()
	out := make([]GroupView, 0, len(gs))
	for _, gi := range gs {
		out = append(out, receivingView(gi))
	}
	return out
}

// ReceivingGroupView returns the newest listed generation of a receiving
// group.
func (e *Engine) ReceivingGroupView(groupID string) (GroupView, bool) {
	gi, ok := e.recv.Group(groupID)
	if !ok {
		return GroupView{}, false
	}
	return receivingView(gi), true
}

// AbortReceiving deletes every generation of a receiving group on an
// operator's request: its held messages and unconfirmed hand-offs are
// discarded with GroupAborted faults to the sender (D13). It reports
// whether the group was listed.
func (e *Engine) AbortReceiving(now time.Time, groupID string) bool {
	if _, ok := e.recv.Group(groupID); !ok {
		return false
	}
	e.addReceiver(e.recv.Abort(now, groupID))
	e.flushFailures(now)
	return true
}

// ReceiverStats returns the receiving RMP's counts (held messages, groups).
func (e *Engine) ReceiverStats() receiver.Stats { return e.recv.Stats() }

// AbortGroup deletes a group on an operator's request (gateway DELETE
// /v1/groups/{groupId}): the receiving side's generations when recv, the
// sending group when send. It reports whether any was found, once the
// abort is durable.
func (n *Node) AbortGroup(ctx context.Context, groupID string, recv, send bool) (bool, error) {
	r, err := n.call(ctx, func(e *Engine, now time.Time) any {
		found := recv && e.AbortReceiving(now, groupID)
		if send {
			if v, ok := e.SendingGroupView(groupID); ok && !v.Terminated {
				e.AbortSending(now, groupID)
				found = true
			}
		}
		return found
	})
	if err != nil {
		return false, err
	}
	return r.(bool), nil
}

// MessageView is the sending side's view of one submitted message
// (gateway GET /v1/messages/{id}).
type MessageView struct {
	// State is "pending", "acknowledged" or "failed".
	State  string
	Reason sender.Reason
	// Fault is the received code when Reason is ReasonFaultReceived.
	Fault faults.Code
	// Attempts counts transmissions, the first included; 0 when no longer
	// known.
	Attempts int
	// SOAPFault is the SOAP-level code of a refusal without a wsrm code
	// (sender.Outcome.SOAPFault); Response the business response of an
	// acknowledged message (R73), both while the outcome is unhandled.
	SOAPFault string
	Response  []byte
	// LastError says why the last transmission of a pending message
	// brought no ack ("HTTP 200 without wsrm:Response", a dial error…).
	LastError string
}

// SendingMessage returns what the sending RMP still knows of ref; false
// once its outcome was handled and its group forgotten (the producer keeps
// its own record of those, D27).
func (e *Engine) SendingMessage(ref sender.MessageRef) (MessageView, bool) {
	mi, ok := e.send.Message(ref)
	if !ok {
		return MessageView{}, false
	}
	return MessageView{State: mi.State.String(), Reason: mi.Reason, Fault: mi.Fault, Attempts: mi.Attempts,
		SOAPFault: mi.SOAPFault, Response: mi.Response, LastError: mi.LastError}, true
}

// SendingGroups returns every sending group in state, sorted by GroupID.
func (e *Engine) SendingGroups() []GroupView {
	gs := e.send.Groups()
	out := make([]GroupView, 0, len(gs))
	for _, gi := range gs {
		out = append(out, sendingView(gi))
	}
	return out
}

// SendingPending returns up to limit of a sending group's unacknowledged
// messages, lowest numbers first, and their number in all.
func (e *Engine) SendingPending(groupID string, limit int) ([]sender.PendingInfo, int) {
	return e.send.PendingMessages(groupID, limit)
}

// Destinations sums the sending side's unacknowledged messages per
// destination, sorted by destination.
func (e *Engine) Destinations() []sender.DestinationInfo { return e.send.Destinations() }
