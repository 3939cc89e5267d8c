package rmp

import (
	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
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
	// Token is the caller's token given to Receive or ReceiveInbound.
	Token uint64
	// Status is 200 with an envelope, 202 without, a SOAP Fault status
	// (R86), or a plain-text error: 415 for a Content-Type that names no
	// SOAP version, 500 for an answer that could not be rendered.
	Status      int
	ContentType string
	// Body is the envelope; empty with 202.
	Body []byte
	// Await, when set, names the delivery of the request's own message in
	// the same Ready (Response pattern). A driver may hold the answer until
	// the consumer returned and render it with the business response as
	// Body (R73) using WithBusinessResponse; Body is the answer without one.
	Await *receiver.DeliveryRef
	// AwaitLater says the delivery Await names is not in this Ready: the
	// message is held out of order, or a copy of one not yet taken. A
	// driver that holds such an answer must bound the wait (the Node:
	// NodeConfig.AwaitDelivery) and then send it as it is.
	AwaitLater bool

	version soap.Version
	reply   *soap.Response
}

// WithBusinessResponse returns the answer with body, the consumer's
// business response, as the SOAP Body next to the RM-Reply (R73); a
// business fault gets the fault status (soap.BusinessStatus). Without a
// body, or on a rendering failure, the answer is returned unchanged.
func (a Answer) WithBusinessResponse(body []byte) Answer {
	if len(body) == 0 || !a.version.Valid() {
		return a
	}
	b, err := soap.AppendEnvelope(make([]byte, 0, replyEnvelopeSize(a.reply, body)), a.version, soap.Headers{Response: a.reply}, faults.Extended, body)
	if err != nil {
		return a
	}
	a.Body, a.Status = b, soap.BusinessStatus(a.version, body)
	return a
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
	// to is the URL the engine rendered the POST for (bind.go checks its
	// answer against it).
	to string
}

// Outbound is one POST to make.
type Outbound struct {
	Ref  OutboundRef
	Post outbound.Post
}

// Delivery is a message for the consumer: the envelope as received, with
// its wsrm header blocks removed. Payload is shared with the receiving
// RMP's state (a retry hands out the same bytes): read it, copy it, never
// modify it. It is the receiving RMP's own type, not a copy.
type Delivery = receiver.Delivery

// Event is something that happened on either side; exactly one of Receiver
// and Sender is set.
type Event struct {
	Receiver *receiver.Event
	Sender   *sender.Event
}
