// Package admin is the management side of an rmp engine, kept off the
// embedding API's front page: read-only views of its groups and messages,
// an operator's abort of a group, and the engine's counters — what the
// gateway's /v1/groups, /v1/messages/{id}, /metrics and console show.
//
// Package rmp implements Engine: Node.Admin runs a function with it on the
// Node's goroutine, and Engine.Admin returns it to a driver that owns the
// engine itself (the conformance runner, the simulation).
package admin

import (
	"time"

	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// Engine is one engine's state as management reads and changes it. Call
// its methods only on the goroutine that owns the engine, and keep nothing
// it returns past that call but copies.
type Engine interface {
	// ReceivingGroups returns every listed receiving group generation,
	// sorted by GroupID then Generation.
	ReceivingGroups() []receiver.GroupInfo
	// ReceivingGroup returns the newest listed generation of a receiving
	// group.
	ReceivingGroup(groupID string) (receiver.GroupInfo, bool)
	// SendingGroups returns every sending group in state, sorted by GroupID.
	SendingGroups() []sender.GroupInfo
	// SendingGroup returns the state of one sending group.
	SendingGroup(groupID string) (sender.GroupInfo, bool)
	// SendingMessage returns what the sending RMP still knows of ref; false
	// once its outcome was handled and its group forgotten (the producer
	// keeps its own record of those, D27).
	SendingMessage(ref sender.MessageRef) (sender.MessageInfo, bool)
	// SendingPending returns up to limit of a sending group's
	// unacknowledged messages, lowest numbers first, and their number in
	// all.
	SendingPending(groupID string, limit int) ([]sender.PendingInfo, int)
	// Destinations sums the sending side's unacknowledged messages per
	// destination, sorted by destination.
	Destinations() []sender.DestinationInfo
	// ReceivingListing and SendingListing index the listed receiving
	// group generations, the sending groups in state, in the order of
	// their ids (then generations), each with the group.Summary a page of
	// groups filters and sorts by, so that a page of 100,000 groups reads
	// only the groups it shows (gateway GET /v1/groups, #21). They are
	// valid only during the call and must not be modified; ListedView
	// reads one of their groups.
	ReceivingListing() *receiver.Listing
	SendingListing() *sender.Listing
	// ReceiverStats returns the receiving RMP's counts (held messages,
	// groups).
	ReceiverStats() receiver.Stats
	// Metrics returns the counters so far.
	Metrics() Metrics
	// AbortReceiving deletes every generation of a receiving group on an
	// operator's request: its held messages and unconfirmed hand-offs are
	// discarded with GroupAborted faults to the sender (D13). It reports
	// whether the group was listed.
	AbortReceiving(now time.Time, groupID string) bool
	// AbortSending deletes a sending group on an operator's request: its
	// unacknowledged messages fail with GroupAborted.
	AbortSending(now time.Time, groupID string)
}

// Roles says which sides of an engine a request is about.
type Roles uint8

const (
	// Receiving selects the receiving RMP's groups.
	Receiving Roles = 1 << iota
	// Sending selects the sending RMP's groups.
	Sending
)

// Abort deletes a group on an operator's request (gateway DELETE
// /v1/groups/{groupId}): the receiving side's generations when roles has
// Receiving, the sending group, unless already terminated, when it has
// Sending. It reports whether any was found; under Node.Admin the abort is
// durable once Admin returns.
func Abort(e Engine, now time.Time, groupID string, roles Roles) bool {
	found := roles&Receiving != 0 && e.AbortReceiving(now, groupID)
	if roles&Sending != 0 {
		if gi, ok := e.SendingGroup(groupID); ok && !sendingView(gi).Terminated {
			e.AbortSending(now, groupID)
			found = true
		}
	}
	return found
}
