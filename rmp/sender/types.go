package sender

import (
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// Submission is one message handed over by the producer (digest §3 Submit).
type Submission struct {
	// To is the destination (the receiving RMP's endpoint); required.
	To string
	// GroupKey names the producer's open group: the same key goes to the
	// same WS-R group until that group is closed with Last, terminated or
	// aborted; then the key opens a new group. "" sends a singleton (R06).
	GroupKey string
	// Last closes the group with this message (last="true", R12).
	Last  bool
	Flags group.Flags
	// Expiry is the absolute ExpiryTime; when zero, now+Lifetime, or
	// now+Config.DefaultLifetime when Lifetime is zero too.
	Expiry   time.Time
	Lifetime time.Duration
	// Timing is the group's groupExpiryTime or groupMaxIdleDuration, never
	// both (R13); only for keyed groups, the same on every message (R14).
	Timing  group.Timing
	Pattern group.ReplyPattern
	// ReplyTo is the callback address; required with ReplyCallback (R18).
	ReplyTo string
	// Action is the SOAPAction / action the engine sends with the message.
	Action string
	// Payload is the message as the engine will send it, stored byte-exact.
	Payload []byte
}

// MessageRef names one submitted message: a singleton by its group id alone
// (R06), a sequenced one by group id and number.
type MessageRef struct {
	GroupID   string
	Number    uint64
	Singleton bool
}

// Header holds the wsrm:Request fields of a transmission; the engine renders
// them (digest §2.2). They never change between resends (R10, D9).
type Header struct {
	GroupID string
	// Sequenced is false for a singleton: no SequenceNum element (R06).
	Sequenced bool
	Number    uint64
	Last      bool
	Expiry    time.Time // UTC (D3)
	Timing    group.Timing
	Flags     group.Flags
	Pattern   group.ReplyPattern
	ReplyTo   string
}

// Transmission is one (re)transmission of a stored message.
type Transmission struct {
	Ref MessageRef
	// Attempt is 0 for the first transmission, k for the k-th resend.
	Attempt int
	To      string
	Action  string
	Header  Header
	// Payload is the stored payload; the same bytes on every attempt. The
	// driver must not modify it.
	Payload []byte
}

// TransportKind classifies what the transport made of a transmission.
type TransportKind uint8

const (
	// TransportSent: the request was delivered and answered without an ack
	// the engine could read (R36: no ack).
	TransportSent TransportKind = iota + 1
	// TransportConnectionFailed: no HTTP exchange took place.
	TransportConnectionFailed
	// TransportHTTPError: an HTTP status without a usable envelope.
	TransportHTTPError
	// TransportRefused: the peer answered with a SOAP Fault that carries no
	// wsrm code and refuses the request itself (SOAPCode: MustUnderstand,
	// VersionMismatch, Client/Sender): the peer is not an RMP, or not one
	// that can take this message. It is a final answer (D7): the message
	// fails with ReasonFaultReceived, Outcome.SOAPFault = SOAPCode.
	TransportRefused
)

// TransportResult is the outcome of one transmission reported by Sent.
type TransportResult struct {
	Kind   TransportKind
	Status int // HTTP status, when there was one
	// SOAPCode is the SOAP Fault code of TransportRefused.
	SOAPCode string
	// Detail says in a few words what went wrong, for operators (e.g.
	// "HTTP 200 without wsrm:Response", "connection refused"); it is kept
	// in memory only, for LastResult.
	Detail string
}

// PollID names one Poll effect so its outcome can be reported.
type PollID uint64

// Poll is a PollRequest to send to a destination (R32).
type Poll struct {
	ID PollID
	To string
	// Refs is sorted by GroupID; at least one (R33).
	Refs []group.PollRef
}

// OutcomeID names one outbox record; unique across restarts.
type OutcomeID uint64

// OutcomeKind is Acknowledged or Failed (D27).
type OutcomeKind uint8

const (
	// Acknowledged: a fault-less reply covered the message (R29).
	Acknowledged OutcomeKind = iota + 1
	// Failed: the message cannot be confirmed; see Outcome.Reason (R25).
	Failed
)

// String returns "acknowledged" or "failed".
func (k OutcomeKind) String() string {
	switch k {
	case Acknowledged:
		return "acknowledged"
	case Failed:
		return "failed"
	}
	return "OutcomeKind(?)"
}

// Reason says why a message failed (D27).
type Reason uint8

const (
	// ReasonNone goes with Acknowledged.
	ReasonNone Reason = iota
	// ReasonExpired: its ExpiryTime passed before an ack (D10).
	ReasonExpired
	// ReasonRetriesExhausted: no ack by the last resend plus its interval (D26).
	ReasonRetriesExhausted
	// ReasonFaultReceived: a non-retryable fault came back; see Outcome.Fault (R27).
	ReasonFaultReceived
	// ReasonGroupAborted: its group was aborted (D16, R28, operator delete)
	// or terminated with the message still unacknowledged (D21).
	ReasonGroupAborted
)

var reasonNames = [...]string{
	ReasonNone:             "none",
	ReasonExpired:          "expired",
	ReasonRetriesExhausted: "retries-exhausted",
	ReasonFaultReceived:    "fault-received",
	ReasonGroupAborted:     "group-aborted",
}

// String returns the stable label of the reason (gateway JSON values).
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "Reason(?)"
}

// Outcome is a durable outcome for the producer (D27). A message may be
// Acknowledged and later Failed (D12, D13): its final outcome is the last.
type Outcome struct {
	ID       OutcomeID
	Ref      MessageRef
	GroupKey string
	Kind     OutcomeKind
	Reason   Reason
	// Fault is the received code when Reason is ReasonFaultReceived.
	Fault faults.Code
	// SOAPFault is the SOAP-level code (MustUnderstand, VersionMismatch,
	// Client, Sender…) of a refusal without a wsrm code (TransportRefused);
	// Fault is then zero.
	SOAPFault string
	At        time.Time
	// Attempts counts the transmissions of the message, the first included;
	// 0 when unknown (a late fault about an acknowledged message, D13).
	Attempts int
	// Response is the business response that came back with the message's
	// acknowledgement (R73): the SOAP Body content of the answer to its own
	// POST under the Response pattern, as given to RepliesWithResponse (a
	// Node gives soap.Envelope.BodyContent: each element standalone, with
	// the namespace declarations it had in scope); nil when there was none. The outbox keeps it with the outcome, so an
	// outcome handed out again after a restart still carries it.
	Response []byte
}

// EventKind says what happened to a group.
type EventKind uint8

const (
	// EventTerminated: the group expects no new message (D20–D23, D16).
	EventTerminated EventKind = iota + 1
	// EventRemoved: the group's state was removed (R94).
	EventRemoved
)

// String returns "terminated" or "removed".
func (k EventKind) String() string {
	switch k {
	case EventTerminated:
		return "terminated"
	case EventRemoved:
		return "removed"
	}
	return "EventKind(?)"
}

// Event reports a termination or removal with the rule that caused it.
type Event struct {
	Kind    EventKind
	GroupID string
	Rule    group.Rule
	At      time.Time
}

// Ready is the batch of effects of one input; see the package doc for the
// order in which a driver applies it.
type Ready struct {
	Persist []group.Mutation
	Send    []Transmission
	Polls   []Poll
	Notify  []Outcome
	Events  []Event
}

// Empty reports whether rd holds no effect.
func (rd Ready) Empty() bool {
	return len(rd.Persist) == 0 && len(rd.Send) == 0 && len(rd.Polls) == 0 &&
		len(rd.Notify) == 0 && len(rd.Events) == 0
}
