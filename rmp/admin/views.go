package admin

import (
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// GroupView is a read-only view of one group (gateway GET /v1/groups).
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

func sendingView(gi sender.GroupInfo) GroupView {
	v := sendingViewOf(gi)
	v.Ranges = append([]group.Range(nil), gi.Acked...)
	return v
}

// sendingViewOf is sendingView with Ranges aliasing gi.Acked.
func sendingViewOf(gi sender.GroupInfo) GroupView {
	v := GroupView{
		GroupID:      gi.GroupID,
		Generation:   1,
		Role:         group.RoleSender,
		Terminated:   gi.Terminated || gi.Aborted,
		Ranges:       gi.Acked,
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

// Groups returns the views of the groups of roles: the receiving
// generations sorted by GroupID then Generation, then the sending groups
// sorted by GroupID.
func Groups(e Engine, roles Roles) []GroupView {
	var out []GroupView
	if roles&Receiving != 0 {
		for _, gi := range e.ReceivingGroups() {
			out = append(out, receivingView(gi))
		}
	}
	if roles&Sending != 0 {
		for _, gi := range e.SendingGroups() {
			out = append(out, sendingView(gi))
		}
	}
	return out
}

// ReceivingListedView and SendingListedView return the view of a group of
// Engine.ReceivingListing, Engine.SendingListing; its Ranges are the
// caller's.
func ReceivingListedView(l receiver.Listed) GroupView { return receivingView(l.Info()) }

// SendingListedView: see ReceivingListedView.
func SendingListedView(l sender.Listed) GroupView { return sendingViewOf(l.Info()) }

// Group returns the view of one group: the receiving side's newest
// generation when roles has Receiving, else (or when there is none) the
// sending group when roles has Sending.
func Group(e Engine, groupID string, roles Roles) (GroupView, bool) {
	if roles&Receiving != 0 {
		if gi, ok := e.ReceivingGroup(groupID); ok {
			return receivingView(gi), true
		}
	}
	if roles&Sending != 0 {
		if gi, ok := e.SendingGroup(groupID); ok {
			return sendingView(gi), true
		}
	}
	return GroupView{}, false
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

// Message returns what the sending RMP still knows of ref; false once its
// outcome was handled and its group forgotten (the producer keeps its own
// record of those, D27).
func Message(e Engine, ref sender.MessageRef) (MessageView, bool) {
	mi, ok := e.SendingMessage(ref)
	if !ok {
		return MessageView{}, false
	}
	return MessageView{State: mi.State.String(), Reason: mi.Reason, Fault: mi.Fault, Attempts: mi.Attempts,
		SOAPFault: mi.SOAPFault, Response: mi.Response, LastError: mi.LastError}, true
}
