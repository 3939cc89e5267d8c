package receiver

import (
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// Message is a reliable message as the parser read it (digest §2.2).
type Message struct {
	// GroupID is MessageId/@groupId; empty makes the request unidentifiable.
	GroupID string
	// HasNumber says SequenceNum is present; without it the message is a
	// singleton (D1).
	HasNumber bool
	Number    uint64
	Last      bool
	// Expiry is ExpiryTime (D9); the zero Time means it was missing.
	Expiry time.Time
	// Timing holds SequenceNum's groupExpiryTime / groupMaxIdleDuration.
	Timing  group.Timing
	Flags   group.Flags
	Pattern group.ReplyPattern
	// ReplyTo is ReplyPattern/ReplyTo/BareURI, empty when absent.
	ReplyTo string
	// ReplyToRefused: the driver's outbound policy does not let this RMP
	// call ReplyTo; a Callback message is refused and nothing is sent there.
	ReplyToRefused bool
	// Payload is what the consumer gets. The Receiver keeps it: the caller
	// must not modify it afterwards.
	Payload []byte
	// Action is the action the message was sent with (the SOAPAction
	// header, or the SOAP 1.2 action parameter); it is stored and handed to
	// the consumer with the payload.
	Action string
	// Peer names who sent the message, as the transport authenticated it
	// (the HTTP client's IP address; a TLS client identity where there is
	// one), for Config.MaxGroupsPerPeer; "" is no one in particular.
	Peer string
}

func (m *Message) content() content { return content{payload: m.Payload, action: m.Action} }

// PollRequest is a wsrm:PollRequest (digest §2.4).
type PollRequest struct {
	Refs []group.PollRef
	// ReplyTo, when set, sends the answer as a callback there (R80).
	ReplyTo string
	// Peer names the poller as Message.Peer does (BindGroupsToPeer).
	Peer string
	// ReplyToRefused: the driver's outbound policy refuses ReplyTo.
	ReplyToRefused bool
}

// DeliveryRef names one hand-off to the consumer.
type DeliveryRef struct {
	Group group.ID
	// HasNumber is false for a singleton.
	HasNumber bool
	Number    uint64
}

// Delivery is a message handed to the consumer (R47).
type Delivery struct {
	Ref    DeliveryRef
	Expiry time.Time
	// Payload is the message's payload as the Receiver keeps it (the
	// Message.Payload it was given, or a copy read at load): unlike the
	// other slices of a Ready it stays valid after the next call, and no
	// one may modify it.
	Payload []byte
	// Action is the Message.Action the message arrived with.
	Action string
	// Attempt counts hand-offs of this copy, 1 for the first.
	Attempt int
	// InRun: the Delivery before it in the Ready is the previous number
	// of the same ordered group, handed out in one run with it
	// (Config.MaxDeliveryRun). It may reach the consumer only once that one
	// was taken: when that one failed, was deferred or was handed back,
	// hand this one back with Returned instead (D14, R49).
	InRun bool
}

// Reply is the content of one wsrm:Response header; it is never empty
// (A14, R70). Entries are sorted by GroupID, singletons before sequences.
type Reply struct {
	Entries []group.Reply
}

// CallbackRef names one callback POST for CallbackResult.
type CallbackRef uint64

// Callback is an RM-Reply to POST to URL (R74, R76, R80).
type Callback struct {
	ID    CallbackRef
	URL   string
	Reply Reply
}

// EventKind says what an Event reports.
type EventKind uint8

const (
	// EventRefused: a message was not accepted; Code and Label say why.
	EventRefused EventKind = iota + 1
	// EventDuplicate: a copy of a recorded message (D18, D24).
	EventDuplicate
	// EventHeld: an out-of-order message entered the ordering buffer (R48).
	EventHeld
	// EventDiscarded: an accepted message will never be delivered; Code
	// and Label say why (D12, D14).
	EventDiscarded
	// EventGeneration: a new generation of a GroupId opened (D24).
	EventGeneration
	// EventTerminated: a group terminated under Rule (D14, D20–D23).
	EventTerminated
	// EventRemoved: a group generation's state was removed under Rule.
	EventRemoved
	// EventCallbackDropped: callback entries stopped being retried (R75).
	EventCallbackDropped
	// EventIgnored: an input named something unknown; Label says what.
	EventIgnored
)

var eventNames = [...]string{
	EventRefused: "refused", EventDuplicate: "duplicate", EventHeld: "held",
	EventDiscarded: "discarded", EventGeneration: "generation", EventTerminated: "terminated",
	EventRemoved: "removed", EventCallbackDropped: "callback-dropped", EventIgnored: "ignored",
}

func (k EventKind) String() string {
	if int(k) < len(eventNames) && eventNames[k] != "" {
		return eventNames[k]
	}
	return "EventKind(?)"
}

// Event is something the conformance runner prints.
type Event struct {
	Kind      EventKind
	Group     group.ID
	HasNumber bool
	Number    uint64
	Rule      group.Rule
	Code      faults.Code
	Label     string
}

// Ready is the batch of effects of one input; see the package doc for the
// order in which to apply it.
type Ready struct {
	// Persist is applied atomically and durably first.
	Persist []group.Mutation
	// Deliver is handed to the consumer in slice order.
	Deliver []Delivery
	// Reply is the RM-Reply for the HTTP response of this request, or nil.
	Reply *Reply
	// Response is the cached business response for a duplicate (D18, R45).
	Response []byte
	// Callbacks are RM-Replies to POST, one per URL, sorted by URL.
	Callbacks []Callback
	// PollAnswer answers a PollRequest in its HTTP response; nil when there
	// is nothing to report (A14) or when the answer went to a callback.
	PollAnswer *Reply
	// SOAPFault is set when the request as a whole is refused (D7).
	SOAPFault *faults.Fault
	// Events report what happened, in order.
	Events []Event
}
