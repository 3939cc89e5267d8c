package rmp

import (
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// Ready is the batch of effects the Engine accumulated. A driver applies it
// in the order of its fields; see the package doc.
type Ready struct {
	// Persist is applied atomically and durably first (one store batch).
	Persist []group.Mutation
	// Answers are the HTTP responses to inbound requests, by token.
	Answers []Answer
	// Sends are the HTTP POSTs to make: (re)transmissions, PollRequests and
	// callback RM-Replies. Report each with SendResult.
	Sends []Outbound
	// Deliver is handed to the consumer in slice order; report each with
	// Taken or DeliveryFailed.
	Deliver []Delivery
	// Notify is handed to the producer; report each with OutcomeHandled.
	Notify []sender.Outcome
	// Events say what happened, for logs, metrics and scenario output.
	Events []Event
}

func (r *Ready) empty() bool {
	return len(r.Persist) == 0 && len(r.Answers) == 0 && len(r.Sends) == 0 &&
		len(r.Deliver) == 0 && len(r.Notify) == 0 && len(r.Events) == 0
}

// Answer is the HTTP response to one inbound request, released only after
// the Persist of its Ready is durable (D8: an ack means durably stored).
type Answer struct {
	// Token is the caller's token given to Receive.
	Token uint64
	// Status is 200 with an envelope, 202 without, or a SOAP Fault status.
	Status      int
	ContentType string
	// Body is the envelope; empty with 202.
	Body []byte
}

// OutboundKind says what an Outbound carries.
type OutboundKind uint8

const (
	// OutMessage is a (re)transmission of a reliable message.
	OutMessage OutboundKind = iota + 1
	// OutPoll is a PollRequest (R32).
	OutPoll
	// OutCallback is an RM-Reply POSTed to a ReplyTo (R74).
	OutCallback
)

func (k OutboundKind) String() string {
	switch k {
	case OutMessage:
		return "message"
	case OutPoll:
		return "poll"
	case OutCallback:
		return "callback"
	}
	return "?"
}

// OutboundRef names one POST so that its result finds its way back.
type OutboundRef struct {
	Kind     OutboundKind
	Message  sender.MessageRef
	Attempt  int
	Poll     sender.PollID
	Callback receiver.CallbackRef
}

// Outbound is one POST to make.
type Outbound struct {
	Ref  OutboundRef
	Post Post
}

// Delivery is a message for the consumer: the envelope as received, with
// its wsrm header blocks removed.
type Delivery struct {
	receiver.Delivery
}

// Event is something that happened on either side; exactly one of Receiver
// and Sender is set.
type Event struct {
	Receiver *receiver.Event
	Sender   *sender.Event
}
