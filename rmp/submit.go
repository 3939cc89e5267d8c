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
	sub, err := e.prepare(s)
	if err != nil {
		return sender.MessageRef{}, err
	}
	ref, rd, err := e.send.Submit(now, sub)
	if err != nil {
		return sender.MessageRef{}, err
	}
	e.metrics.Submitted++
	e.addSender(rd)
	e.flushFailures(now)
	return ref, nil
}

// SubmitBatch submits subs in order as one input, so that the Persist of
// one Ready stores them all before any is sent (R21). It is all or nothing: a
// refusal is a *sender.BatchError naming the first refused submission, and
// then nothing changed.
func (e *Engine) SubmitBatch(now time.Time, subs []Submission) ([]sender.MessageRef, error) {
	prepared := make([]sender.Submission, len(subs))
	for i, s := range subs {
		sub, err := e.prepare(s)
		if err != nil {
			return nil, &sender.BatchError{Index: i, Err: err}
		}
		prepared[i] = sub
	}
	if err := e.send.CheckBatch(now, prepared); err != nil {
		return nil, err
	}
	refs := make([]sender.MessageRef, len(prepared))
	for i, sub := range prepared {
		ref, rd, err := e.send.Submit(now, sub)
		if err != nil {
			// CheckBatch and Submit disagree: a defect, reported as such;
			// the submissions before i stay submitted.
			e.flushFailures(now)
			return refs[:i], fmt.Errorf("rmp: submission %d of a checked batch refused (%d applied): %w", i, i, err)
		}
		e.metrics.Submitted++
		e.addSender(rd)
		refs[i] = ref
	}
	e.flushFailures(now)
	return refs, nil
}

// prepare is the sending RMP's Submission of s: its SOAP version checked,
// the node's callback address filled in, the payload encoded.
func (e *Engine) prepare(s Submission) (sender.Submission, error) {
	v := s.Version
	if v == 0 {
		v = soap.SOAP11
	}
	if !v.Valid() {
		return sender.Submission{}, fmt.Errorf("%w: SOAP version %d", sender.ErrInvalidSubmission, v)
	}
	sub := s.sending()
	if sub.Pattern == group.ReplyCallback && sub.ReplyTo == "" {
		sub.ReplyTo = e.cfg.ReplyTo
	}
	sub.Payload = encodePayload(v, sub.Payload)
	return sub, nil
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

// Returned reports that a delivery of a run never reached the consumer
// because one before it in the run was not taken (Delivery.InRun): it
// waits for its turn again, and no attempt is counted.
func (e *Engine) Returned(now time.Time, ref receiver.DeliveryRef) {
	e.addReceiver(e.recv.Returned(now, ref))
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
