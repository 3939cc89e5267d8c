package soap

import (
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// Request is the wsrm:Request header block of a Reliable Message (digest
// §2.2). Its fields follow the schema's element order.
type Request struct {
	// MustUnderstand is what the received block said; writers always set
	// mustUnderstand (R03), whatever this field holds.
	MustUnderstand bool
	// MessageID is wsrm:MessageId, required.
	MessageID MessageID
	// ExpiryTime is wsrm:ExpiryTime, required, in UTC (D3, D9).
	ExpiryTime time.Time
	// ReplyPattern is wsrm:ReplyPattern, required.
	ReplyPattern ReplyPattern
	// Flags are the presence of wsrm:AckRequested, wsrm:DuplicateElimination
	// and wsrm:MessageOrder. MessageOrder implies a SequenceNum (R07).
	Flags group.Flags
}

// MessageID is wsrm:MessageId: a group id and, for a sequenced message, its
// SequenceNum. A message without SequenceNum is a singleton (D1, R06).
type MessageID struct {
	// GroupID is @groupId (an xsd:anyURI, surrounding white space trimmed);
	// never empty in a parsed Request.
	GroupID string
	// Sequence is wsrm:SequenceNum; nil for a singleton.
	Sequence *SequenceNum
}

// SequenceNum is wsrm:SequenceNum (digest §2.2, D1).
type SequenceNum struct {
	// Number is @number (D2: uint64 from 0, never wraps).
	Number uint64
	// Last is @last; the schema default false is never written.
	Last bool
	// Timing holds @groupExpiryTime (UTC; zero = absent) and
	// @groupMaxIdleDuration (HasMaxIdle = present; never negative in a
	// parsed Request).
	Timing group.Timing
}

// ReplyPattern is wsrm:ReplyPattern: Value and an optional ReplyTo.
type ReplyPattern struct {
	// Value is wsrm:Value (R17); always valid in a parsed Request.
	Value group.ReplyPattern
	// ReplyTo is wsrm:ReplyTo; nil when absent. A parsed Callback always
	// has one (R18, R63).
	ReplyTo *ReplyTo
}

// ReplyTo is a ref:ServiceRefType holding a wsrm:BareURI (digest §2.2).
// A ServiceRefType with another child element is refused on input as an
// unusable ReplyTo (R63), since this engine can only call a bare URL back.
type ReplyTo struct {
	// ReferenceScheme is @reference-scheme; empty when absent.
	ReferenceScheme string
	// BareURI is the callback address (white space trimmed, never empty).
	BareURI string
}

// Response is the wsrm:Response header block, the RM-Reply (digest §2.3).
type Response struct {
	// MustUnderstand is what the received block said; writers always set it.
	MustUnderstand bool
	// Replies in document order. A parsed Response may have none (A14:
	// accepted on input); writers refuse to write an empty one.
	Replies []group.Reply
}

// PollRequest is the wsrm:PollRequest header block (digest §2.4).
type PollRequest struct {
	// MustUnderstand is what the received block said; writers always set it.
	MustUnderstand bool
	// Refs are the RefToMessageIds children, at least one (R33).
	Refs []group.PollRef
	// ReplyTo is where the answer goes (R80); nil when absent.
	ReplyTo *ReplyTo
}
