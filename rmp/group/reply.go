package group

import "github.com/wsrkit/wsrkit/faults"

// The RM-Reply vocabulary, one family for the receiver that builds
// replies, the sender that applies them and soap that reads and writes
// them (digest §2.3, §2.4).

// Reply is one child of wsrm:Response: a NonSequenceReply about a
// singleton (Sequenced false) or a SequenceReplies about numbers of a
// group (R69).
type Reply struct {
	// GroupID is @groupId.
	GroupID string
	// Sequenced selects SequenceReplies (true) or NonSequenceReply (false).
	Sequenced bool
	// Fault is NonSequenceReply/@fault; 0 is a positive acknowledgement.
	// Zero when Sequenced.
	Fault faults.Code
	// Ranges are the ReplyRange children of a SequenceReplies: at least
	// one when Sequenced, none otherwise. A receiver's are sorted and
	// disjoint, adjacent ranges carrying different faults (R71); a parsed
	// Response's are in document order.
	Ranges []ReplyRange
}

// ReplyRange is wsrm:ReplyRange: numbers From..To inclusive (From <= To,
// R71) with one status: acknowledged (Fault 0) or faulted (R29).
type ReplyRange struct {
	From, To uint64
	// Fault is @fault; 0 is a positive acknowledgement.
	Fault faults.Code
}

// PollRef is one RefToMessageIds of a wsrm:PollRequest (R33, A13): a
// group and ranges of its numbers, each From <= To; no ranges refers to a
// singleton (or, received for a sequenced group, to all of it).
type PollRef struct {
	GroupID string
	Ranges  []Range
}
