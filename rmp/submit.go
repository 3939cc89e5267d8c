package rmp

import (
	"fmt"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
)

// Submission is a message from the producer: the sending RMP's Submission
// with Payload holding the SOAP Body content, and the SOAP version to send
// it in.
type Submission struct {
	sender.Submission
	// Version is the SOAP version of the envelope; zero means SOAP 1.1.
	Version soap.Version
}

// Submit hands a message to the sending RMP. It is stored by the Persist of
// the next Ready and transmitted by its Sends; the error is for the producer
// (bad input, aborted group, bounds full) and then nothing changed.
func (e *Engine) Submit(now time.Time, s Submission) (sender.MessageRef, error) {
	v := s.Version
	if v == 0 {
		v = soap.SOAP11
	}
	if !v.Valid() {
		return sender.MessageRef{}, fmt.Errorf("%w: SOAP version %d", sender.ErrInvalidSubmission, v)
	}
	sub := s.Submission
	if sub.Pattern == group.ReplyCallback && sub.ReplyTo == "" {
		sub.ReplyTo = e.cfg.ReplyTo
	}
	sub.Payload = encodePayload(v, sub.Payload)
	ref, rd, err := e.send.Submit(now, sub)
	if err != nil {
		return sender.MessageRef{}, err
	}
	e.metrics.Submitted++
	e.addSender(rd)
	e.flushFailures(now)
	return ref, nil
}

// Taken reports that the consumer took a delivery (R92).
func (e *Engine) Taken(now time.Time, ref receiver.DeliveryRef) {
	e.metrics.Delivered++
	e.addReceiver(e.recv.Taken(now, ref))
	e.flushFailures(now)
}

// DeliveryFailed reports that the consumer could not take a delivery now;
// it is offered again later, until its ExpiryTime.
func (e *Engine) DeliveryFailed(now time.Time, ref receiver.DeliveryRef) {
	e.addReceiver(e.recv.DeliveryFailed(now, ref))
	e.flushFailures(now)
}

// Respond caches the consumer's business response to a request-response
// message, returned again with its duplicates under the Response pattern
// (D18, R45).
func (e *Engine) Respond(now time.Time, ref receiver.DeliveryRef, body []byte) {
	e.addReceiver(e.recv.Respond(now, ref, append([]byte(nil), body...)))
	e.flushFailures(now)
}

// OutcomeHandled reports that the producer took an outcome; its outbox
// record is deleted (D27).
func (e *Engine) OutcomeHandled(now time.Time, id sender.OutcomeID) {
	e.addSender(e.send.OutcomeHandled(now, id))
	e.flushFailures(now)
}
