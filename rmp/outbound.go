package rmp

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
)

// addReceiver takes a receiver Ready into the accumulated one. The
// receiver's slices are valid only until its next call, so their elements
// are copied out; the bytes they point to are kept as they are (Persist
// values are never written again, delivery payloads outlive the call);
// replies are rendered to bytes at once.
func (e *Engine) addReceiver(rd receiver.Ready) {
	e.rd.Persist = append(e.rd.Persist, rd.Persist...)
	// The payloads are immutable and outlive the call (receiver.Delivery).
	e.rd.Deliver = append(e.rd.Deliver, rd.Deliver...)
	for _, cb := range rd.Callbacks {
		resp := &soap.Response{Replies: appendReplies(nil, &cb.Reply)}
		v := e.cfg.ReplyVersion
		b, err := soap.AppendEnvelope(make([]byte, 0, replyEnvelopeSize(resp, nil)), v, soap.Headers{Response: resp}, faults.Extended, nil)
		if err != nil {
			// Only an empty reply fails to render, and the receiver never
			// emits one (A14); report it as a failed POST so it is retried.
			e.recvLater(cb.ID)
			continue
		}
		e.rd.Sends = append(e.rd.Sends, Outbound{
			Ref:  OutboundRef{Kind: OutCallback, Callback: cb.ID},
			Post: outbound.Post{URL: cb.URL, ContentType: soap.ContentType(v, ""), SOAP11: v == soap.SOAP11, Body: b},
		})
	}
	for i := range rd.Events {
		ev := rd.Events[i]
		e.metrics.countReceiverEvent(&ev)
		e.rd.Events = append(e.rd.Events, Event{Receiver: &ev})
	}
}

// recvLater records a callback that could not be rendered as failed.
func (e *Engine) recvLater(id receiver.CallbackRef) {
	e.failedCallbacks = append(e.failedCallbacks, id)
}

// addSender takes a sender Ready into the accumulated one, rendering each
// transmission and PollRequest as a POST. It copies rd's elements out
// (the bytes they hold are never written again) and hands rd's slices
// back to the sender for its next Ready.
func (e *Engine) addSender(rd sender.Ready) {
	defer e.send.Recycle(rd)
	e.rd.Persist = append(e.rd.Persist, rd.Persist...)
	for _, t := range rd.Send {
		if t.Attempt > 0 {
			e.metrics.Retries++
		}
		post, err := e.renderMessage(&t)
		if err != nil {
			// A stored payload that cannot be rendered can never be sent:
			// tell the sender the exchange failed; it retries, then fails
			// the message, and nothing is lost silently.
			e.undeliverable = append(e.undeliverable, t.Ref)
			continue
		}
		e.rd.Sends = append(e.rd.Sends, Outbound{
			Ref:  OutboundRef{Kind: OutMessage, Message: t.Ref, Attempt: t.Attempt, to: post.URL},
			Post: post,
		})
	}
	for _, p := range rd.Polls {
		v := e.cfg.ReplyVersion
		pr := &soap.PollRequest{Refs: p.Refs}
		b, err := soap.AppendPollRequestEnvelope(nil, v, pr)
		if err != nil {
			e.failedPolls = append(e.failedPolls, p.ID)
			continue
		}
		e.rd.Sends = append(e.rd.Sends, Outbound{
			Ref:  OutboundRef{Kind: OutPoll, Poll: p.ID, to: p.To},
			Post: outbound.Post{URL: p.To, ContentType: soap.ContentType(v, ""), SOAP11: v == soap.SOAP11, Body: b},
		})
	}
	for _, o := range rd.Notify {
		e.metrics.countOutcome(&o)
		e.rd.Notify = append(e.rd.Notify, o)
	}
	for i := range rd.Events {
		ev := rd.Events[i]
		e.rd.Events = append(e.rd.Events, Event{Sender: &ev})
	}
}

// The stored payload of a submission is one byte of SOAP version followed
// by the Body content, so that every resend renders byte-identically (R10).
func encodePayload(v soap.Version, body []byte) []byte {
	out := make([]byte, 0, 1+len(body))
	return append(append(out, byte(v)), body...)
}

var errBadPayload = errors.New("rmp: stored payload has no valid SOAP version byte")

func decodePayload(p []byte) (soap.Version, []byte, error) {
	if len(p) == 0 || !soap.Version(p[0]).Valid() {
		return 0, nil, errBadPayload
	}
	return soap.Version(p[0]), p[1:], nil
}

func (e *Engine) renderMessage(t *sender.Transmission) (outbound.Post, error) {
	v, body, err := decodePayload(t.Payload)
	if err != nil {
		return outbound.Post{}, err
	}
	h := t.Header
	// Values, not pointers stored through a pointer: the compiler then
	// keeps them on the stack (AppendRequestEnvelope keeps none, #22).
	req := soap.Request{
		MessageID:    soap.MessageID{GroupID: h.GroupID},
		ExpiryTime:   h.Expiry,
		ReplyPattern: soap.ReplyPattern{Value: h.Pattern},
		Flags:        h.Flags,
	}
	seq := soap.SequenceNum{Number: h.Number, Last: h.Last, Timing: h.Timing}
	if h.Sequenced {
		req.MessageID.Sequence = &seq
	}
	replyTo := soap.ReplyTo{BareURI: h.ReplyTo}
	if h.ReplyTo != "" {
		req.ReplyPattern.ReplyTo = &replyTo
	}
	b, err := soap.AppendRequestEnvelope(make([]byte, 0, requestEnvelopeSize(&h, body)), v, &req, body)
	if err != nil {
		return outbound.Post{}, fmt.Errorf("rmp: render %s: %w", h.GroupID, err)
	}
	return outbound.Post{URL: t.To, ContentType: soap.ContentType(v, t.Action), SOAP11: v == soap.SOAP11, SOAPAction: t.Action, Body: b}, nil
}

// flushFailures reports renderings that failed as failed exchanges, after
// the Ready that held them was taken; called by inputs before they work.
func (e *Engine) flushFailures(now time.Time) {
	for len(e.undeliverable) > 0 || len(e.failedPolls) > 0 || len(e.failedCallbacks) > 0 {
		u, p, c := e.undeliverable, e.failedPolls, e.failedCallbacks
		e.undeliverable, e.failedPolls, e.failedCallbacks = nil, nil, nil
		for _, ref := range u {
			e.addSender(e.send.Sent(now, ref, sender.TransportResult{Kind: sender.TransportConnectionFailed}))
		}
		for _, id := range p {
			e.addSender(e.send.PollResult(now, id, false))
		}
		for _, id := range c {
			e.addReceiver(e.recv.CallbackResult(now, id, false))
		}
	}
}

// SendResult reports what became of an Outbound: the response, or err when
// no HTTP response arrived.
func (e *Engine) SendResult(now time.Time, ref OutboundRef, res outbound.PostResult, err error) {
	var src replySource
	if err == nil && ref.Kind != OutCallback {
		src = e.answerSource(ref, res)
	}
	switch ref.Kind {
	case OutMessage:
		e.messageResult(now, ref, res, err, src)
	case OutPoll:
		ok := err == nil && res.Status/100 == 2
		if ok {
			if env, _ := e.parseReply(res); env != nil && env.Response != nil {
				rs, _ := e.bindReplies(env.Response.Replies, src)
				e.addSender(e.send.Replies(now, rs))
			}
		}
		e.addSender(e.send.PollResult(now, ref.Poll, ok))
	case OutCallback:
		e.addReceiver(e.recv.CallbackResult(now, ref.Callback, err == nil && res.Status/100 == 2))
	}
	e.flushFailures(now)
}

// parseReply is res's envelope and business response, parsed now unless
// the driver did it already (outbound.PostResult.WithParsedReply).
func (e *Engine) parseReply(res outbound.PostResult) (*soap.Envelope, []byte) {
	env, business, ok := res.ParsedReply()
	if !ok {
		env, business, _ = res.WithParsedReply(e.cfg.Parse).ParsedReply()
	}
	return env, business
}

// messageResult applies the HTTP response to a reliable message: an ack or
// fault read from its wsrm:Response (Response pattern), or a SOAP Fault that
// refuses the message — with a wsrm code, or a SOAP code that says the peer
// cannot take such a request (soap.FinalFault: it is not an RMP, D7);
// anything else is no ack (R36), with a detail saying what came back. src
// is where the answer came from (bindReplies).
func (e *Engine) messageResult(now time.Time, ref OutboundRef, res outbound.PostResult, err error, src replySource) {
	var env *soap.Envelope
	var body []byte
	if err == nil {
		env, body = e.parseReply(res)
	}
	if tr, ok := noAck(res, env, err); ok {
		e.addSender(e.send.Sent(now, ref.Message, tr))
		return
	}
	if env.Response != nil && len(env.Response.Replies) > 0 {
		rs, _ := e.bindReplies(env.Response.Replies, src)
		if body != nil {
			// R73: the answer to this message's own POST.
			e.addSender(e.send.RepliesWithResponse(now, ref.Message, body, rs))
			return
		}
		e.addSender(e.send.Replies(now, rs))
		return
	}
	// A SOAP Fault answers this very message (D7): its code applies to it.
	e.addSender(e.send.Replies(now, []group.Reply{faultEntry(ref.Message, env.Fault.Code)}))
}

// noAck classifies an answer to a reliable message (env parsed from res)
// that carries neither an RM-Reply nor a wsrm fault: what the sending RMP
// records for it (R36: no ack; a SOAP-level refusal is final, D7), with a
// detail for operators. It reports false for an answer that carries one.
// The engine applies it; the Node logs its detail (warnNoAck).
func noAck(res outbound.PostResult, env *soap.Envelope, err error) (sender.TransportResult, bool) {
	switch {
	case err != nil:
		return sender.TransportResult{Kind: sender.TransportConnectionFailed, Detail: err.Error()}, true
	case env != nil && env.Response != nil && len(env.Response.Replies) > 0,
		env != nil && env.Fault != nil && env.Fault.Code.Valid():
		return sender.TransportResult{}, false
	case env != nil && env.Fault != nil && soap.FinalFault(env.Fault.SOAPCode):
		return sender.TransportResult{Kind: sender.TransportRefused, Status: res.Status,
			SOAPCode: env.Fault.SOAPCode, Detail: answerDetail(res.Status, env)}, true
	case res.Status/100 == 2:
		return sender.TransportResult{Kind: sender.TransportSent, Status: res.Status, Detail: answerDetail(res.Status, env)}, true
	}
	return sender.TransportResult{Kind: sender.TransportHTTPError, Status: res.Status, Detail: answerDetail(res.Status, env)}, true
}

// answerDetail says what an answer without an ack was, for operators.
func answerDetail(status int, env *soap.Envelope) string {
	switch {
	case env == nil:
		return fmt.Sprintf("HTTP %d without a SOAP envelope", status)
	case env.Fault != nil:
		return fmt.Sprintf("HTTP %d, SOAP Fault %s: %s", status, env.Fault.SOAPCode, truncate(env.Fault.Reason, 200))
	case env.Response != nil:
		return fmt.Sprintf("HTTP %d with an empty wsrm:Response", status)
	}
	return fmt.Sprintf("HTTP %d without wsrm:Response", status)
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func faultEntry(m sender.MessageRef, c faults.Code) group.Reply {
	if m.Singleton {
		return group.Reply{GroupID: m.GroupID, Fault: c}
	}
	return group.Reply{GroupID: m.GroupID, Sequenced: true,
		Ranges: []group.ReplyRange{{From: m.Number, To: m.Number, Fault: c}}}
}
