package conformance

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
)

// gid renders a group generation; the first generation prints bare.
func gid(id group.ID) string {
	if id.Generation <= 1 {
		return id.GroupID
	}
	return fmt.Sprintf("%s~%d", id.GroupID, id.Generation)
}

func (h *harness) printEvent(n *node, ev rmp.Event) {
	if e := ev.Receiver; e != nil {
		s := gid(e.Group)
		if e.HasNumber {
			s += fmt.Sprintf("#%d", e.Number)
		}
		line := fmt.Sprintf("%s: %s %s", n.name, e.Kind, s)
		if e.Rule != group.RuleNone {
			line += " rule=" + e.Rule.String()
		}
		if e.Code != 0 {
			line += " " + e.Code.String()
		}
		if e.Label != "" {
			line += " (" + e.Label + ")"
		}
		h.printf("%s", line)
	}
	if e := ev.Sender; e != nil {
		h.printf("%s: %s %s rule=%s", n.name, e.Kind, e.GroupID, e.Rule)
	}
}

var (
	pText = regexp.MustCompile(`<p>([^<]*)</p>`)
	// xmlnsAttr matches the namespace declarations a serializer copies into
	// body content; they say nothing about behaviour.
	xmlnsAttr = regexp.MustCompile(` xmlns(:[A-Za-z0-9_.-]+)?="[^"]*"`)
)

// payloadText returns the text of the <p> element scenarios put in bodies,
// or the body content itself.
func payloadText(envelope []byte) string {
	if m := pText.FindSubmatch(envelope); m != nil {
		return string(m[1])
	}
	env, err := soap.Parse(envelope, soap.ParseOptions{})
	if err != nil {
		return "?unreadable"
	}
	return strings.TrimSpace(string(env.BodyContent()))
}

// deliveryRef is how a delivery is named in the output.
func deliveryRef(d rmp.Delivery) string {
	ref := gid(d.Ref.Group)
	if d.Ref.HasNumber {
		ref += fmt.Sprintf("#%d", d.Ref.Number)
	}
	return ref
}

func (h *harness) printDelivery(n *node, d rmp.Delivery) {
	line := fmt.Sprintf("%s: deliver %s %q", n.name, deliveryRef(d), payloadText(d.Payload))
	if d.Attempt > 1 {
		line += fmt.Sprintf(" attempt=%d", d.Attempt)
	}
	if d.InRun {
		line += " in-run"
	}
	if n.refuse {
		line += " refused-by-consumer"
	}
	h.printf("%s", line)
}

func (h *harness) printOutcome(n *node, o sender.Outcome) {
	line := fmt.Sprintf("%s: outcome %s %s", n.name, refText(o.Ref), o.Kind)
	if o.Kind == sender.Failed {
		line += " " + o.Reason.String()
		if o.Fault != 0 {
			line += " " + o.Fault.String()
		}
	}
	h.printf("%s", line)
}

// printAnswer prints an HTTP response of n: status, then what the
// envelope carries.
func (h *harness) printAnswer(n *node, a rmp.Answer) {
	h.printf("%s: answer %s", n.name, answerText(a.Status, a.Body))
}

func answerText(status int, body []byte) string {
	s := fmt.Sprint(status)
	if len(body) == 0 {
		return s
	}
	env, err := soap.Parse(body, soap.ParseOptions{})
	if err != nil {
		return s + " non-soap " + strings.TrimSpace(firstLine(string(body)))
	}
	return s + envelopeText(env)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// envelopeText renders the RM-Reply, poll refs, SOAP Fault and body of env.
func envelopeText(env *soap.Envelope) string {
	var b strings.Builder
	if env.Version == soap.SOAP12 {
		b.WriteString(" soap1.2")
	}
	if env.Response != nil {
		b.WriteString(" rm-reply")
		for _, r := range env.Response.Replies {
			b.WriteString(" " + replyText(r))
		}
	}
	if p := env.PollRequest; p != nil {
		b.WriteString(" poll-request")
		for _, r := range p.Refs {
			b.WriteString(" " + r.GroupID + rangesText(r.Ranges))
		}
		if p.ReplyTo != nil {
			b.WriteString(" reply-to=" + p.ReplyTo.BareURI)
		}
	}
	if f := env.Fault; f != nil {
		fmt.Fprintf(&b, " soap-fault %s", f.SOAPCode)
		if f.Code != 0 {
			b.WriteString(" " + f.Code.String())
		}
	} else if c := strings.TrimSpace(string(env.BodyContent())); c != "" {
		b.WriteString(" body=" + xmlnsAttr.ReplaceAllString(c, ""))
	}
	return b.String()
}

func rangesText(rs []group.Range) string {
	if len(rs) == 0 {
		return ""
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = rangeText(r.From, r.To)
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func rangeText(from, to uint64) string {
	if from == to {
		return fmt.Sprint(from)
	}
	return fmt.Sprintf("%d-%d", from, to)
}

// replyText renders one RM-Reply entry: G{ack} or G{Code} for a
// singleton, G{0-2 3=Code} for a sequence.
func replyText(r group.Reply) string {
	if !r.Sequenced {
		if r.Fault == 0 {
			return r.GroupID + "{ack}"
		}
		return r.GroupID + "{" + r.Fault.String() + "}"
	}
	parts := make([]string, len(r.Ranges))
	for i, x := range r.Ranges {
		parts[i] = rangeText(x.From, x.To)
		if x.Fault != 0 {
			parts[i] += "=" + x.Fault.String()
		}
	}
	return r.GroupID + "{" + strings.Join(parts, " ") + "}"
}

// outboundText names a POST: a message with its attempt, a poll with its
// references, a callback with its entries.
func (h *harness) outboundText(o rmp.Outbound) string {
	switch o.Ref.Kind {
	case rmp.OutMessage:
		return fmt.Sprintf("message %s attempt=%d", refText(o.Ref.Message), o.Ref.Attempt)
	case rmp.OutPoll, rmp.OutCallback:
		env, err := soap.Parse(o.Post.Body, soap.ParseOptions{})
		if err != nil {
			return o.Ref.Kind.String() + " unreadable"
		}
		return o.Ref.Kind.String() + envelopeText(env)
	}
	return o.Ref.Kind.String()
}

var _ = faults.Extended
var _ receiver.Event
