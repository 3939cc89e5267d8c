package receiver

import (
	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// refusal is a failed check: the code to report and its stable label.
type refusal struct {
	code  faults.Code
	label string
}

// checkRequest finds what makes a request unidentifiable or schema-invalid:
// a SOAP Fault InvalidRequest (D7, R38).
func checkRequest(m *Message) *faults.Fault {
	switch {
	case m.GroupID == "":
		return faults.New(faults.InvalidRequest, "receiver.no-group-id", "MessageId/@groupId is missing")
	case m.Expiry.IsZero():
		return faults.New(faults.InvalidRequest, "receiver.no-expiry-time", "ExpiryTime is missing")
	case m.Pattern < group.ReplyResponse || m.Pattern > group.ReplyPoll:
		return faults.New(faults.InvalidRequest, "receiver.bad-reply-pattern", "ReplyPattern/Value is not Response, Callback or Poll")
	}
	return nil
}

// checkMessage runs the checks that need no group state, in a fixed order.
func (r *Receiver) checkMessage(m *Message) *refusal {
	t := m.Timing
	switch {
	case !m.HasNumber && (m.Last || !t.None()):
		// Group attributes live on SequenceNum; a singleton has none (digest §5).
		return &refusal{faults.InvalidMessageParameters, "receiver.singleton-group-attributes"}
	case m.Flags.MessageOrder && !m.HasNumber:
		// R61, R07: MessageOrder needs SequenceNum.
		return &refusal{faults.InvalidMessageParameters, "receiver.order-without-sequence"}
	case m.Pattern == group.ReplyCallback && !usableURL(m.ReplyTo):
		// R63: Callback needs an absolute http(s) ReplyTo.
		return &refusal{faults.InvalidReplyPattern, "receiver.callback-without-reply-to"}
	case m.Pattern == group.ReplyCallback && m.ReplyToRefused:
		// A ReplyTo this RMP will not call (SSRF) is no usable ReplyTo.
		return &refusal{faults.InvalidReplyPattern, "receiver.reply-to-refused"}
	case r.patternDisabled(m.Pattern):
		// R64.
		return &refusal{faults.FeatureNotSupported, "receiver.reply-pattern-not-supported"}
	case m.Flags.MessageOrder && r.cfg.DisableOrdering:
		// R64.
		return &refusal{faults.FeatureNotSupported, "receiver.ordering-not-supported"}
	case t.HasMaxIdle && t.MaxIdle.Negative && !t.MaxIdle.IsZero():
		return &refusal{faults.InvalidMessageParameters, "receiver.negative-max-idle"}
	case t.HasExpiry() && m.Expiry.After(t.Expiry):
		// R62: ExpiryTime later than groupExpiryTime.
		return &refusal{faults.InvalidExpiryTime, "receiver.expiry-after-group-expiry"}
	}
	return nil
}

func (r *Receiver) patternDisabled(p group.ReplyPattern) bool {
	switch p {
	case group.ReplyResponse:
		return r.cfg.DisableResponse
	case group.ReplyCallback:
		return r.cfg.DisableCallback
	case group.ReplyPoll:
		return r.cfg.DisablePoll
	}
	return true
}

// checkGroup runs the checks of a sequenced message against the live
// (non-terminated) generation g of its group (D25, R57, R60, R61, A6).
func checkGroup(g *gstate, m *Message) *refusal {
	t, gt := m.Timing, g.lc.Timing
	switch {
	case m.Flags != g.flags:
		// R20, R61: one flag combination per group.
		return &refusal{faults.InvalidMessageParameters, "receiver.flags-changed"}
	case t.HasExpiry() && gt.HasExpiry() && !t.Expiry.Equal(gt.Expiry):
		// D25, R14, R60.
		return &refusal{faults.InvalidMessageParameters, "receiver.group-expiry-changed"}
	case t.HasMaxIdle && gt.HasMaxIdle && t.MaxIdle != gt.MaxIdle:
		return &refusal{faults.InvalidMessageParameters, "receiver.group-max-idle-changed"}
	case (t.HasExpiry() && !gt.HasExpiry() || t.HasMaxIdle && !gt.HasMaxIdle) && g.has(plainZeroBit):
		// A6: the first message (0) carried no timing, so none may appear later.
		return &refusal{faults.InvalidMessageParameters, "receiver.group-timing-added"}
	case m.Number == 0 && t.None() && !gt.None():
		// A6: the first message must carry the group's timing if any does.
		return &refusal{faults.InvalidMessageParameters, "receiver.group-timing-missing-on-first"}
	case gt.HasExpiry() && m.Expiry.After(gt.Expiry):
		// R62 against the group's groupExpiryTime (A6: carried by another message).
		return &refusal{faults.InvalidExpiryTime, "receiver.expiry-after-group-expiry"}
	case g.lc.HasLast && m.Number > g.lc.Last:
		// D25, R57.
		return &refusal{faults.InvalidMessageId, "receiver.number-after-last"}
	case m.Last && g.lc.HasLast && m.Number != g.lc.Last:
		return &refusal{faults.InvalidMessageId, "receiver.last-changed"}
	case m.Last && maxReceived(g) > m.Number:
		// D25: numbers after last were already received.
		return &refusal{faults.InvalidMessageId, "receiver.last-below-received"}
	}
	return nil
}

func maxReceived(g *gstate) uint64 {
	n, _ := g.received.Max()
	return n
}
