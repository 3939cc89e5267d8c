package rmp

import (
	"fmt"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
)

// Submission is a message from the producer.
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
	// now+sender.Config.DefaultLifetime when Lifetime is zero too.
	Expiry   time.Time
	Lifetime time.Duration
	// Timing is the group's groupExpiryTime or groupMaxIdleDuration, never
	// both (R13); only for keyed groups, the same on every message (R14).
	Timing  group.Timing
	Pattern group.ReplyPattern
	// ReplyTo is the callback address with ReplyCallback (R18); "" takes
	// Config.ReplyTo.
	ReplyTo string
	// Action is the SOAPAction / action sent with the message.
	Action string
	// Payload is the SOAP Body content.
	Payload []byte
	// Version is the SOAP version of the envelope; zero means SOAP 1.1.
	Version soap.Version
}

// sending is s as the sending RMP takes it, Payload as given.
func (s *Submission) sending() sender.Submission {
	return sender.Submission{
		To: s.To, GroupKey: s.GroupKey, Last: s.Last, Flags: s.Flags, Expiry: s.Expiry, Lifetime: s.Lifetime,
		Timing: s.Timing, Pattern: s.Pattern, ReplyTo: s.ReplyTo, Action: s.Action, Payload: s.Payload,
	}
}

// Validate applies the sending RMP's rules for a submission at now
// (sender.Validate: R07, R13, D10, R16, last) without submitting it, so a
// gateway can refuse a request before it forwards or keys it.
func (s Submission) Validate(now time.Time, defaultLifetime time.Duration) error {
	return sender.Validate(now, s.sending(), defaultLifetime)
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
	sub := s.sending()
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
