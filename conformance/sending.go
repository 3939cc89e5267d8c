package conformance

import (
	"fmt"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
)

// defaultLifetime is the ExpiryTime offset of messages that name none.
const defaultLifetime = time.Minute

// cmdSubmit hands count messages to the sending RMP on=NAME.
func (h *harness) cmdSubmit(a *args) error {
	n, err := h.node(a.str("on", "s"))
	if err != nil {
		return err
	}
	var s rmp.Submission
	if s.Version, err = parseVersion(a.str("soap", "1.1")); err != nil {
		return err
	}
	s.To = endpoint(a.str("to", "r"))
	s.GroupKey = a.str("key", "")
	s.Last = a.has("last")
	flags := []string{"ack", "dup"}
	if s.GroupKey != "" {
		flags = append(flags, "order")
	}
	if f, ok := a.vals("flags"); ok {
		flags = f
	}
	if s.Flags, err = parseFlags(flags); err != nil {
		return err
	}
	if t, ok := a.instant("expires"); ok {
		s.Expiry = t
	}
	s.Lifetime = a.dur("lifetime", 0)
	if err = a.timing(&s.Timing); err != nil {
		return err
	}
	if s.Pattern, err = parsePattern(a.str("reply", "response")); err != nil {
		return err
	}
	if to := a.str("reply-to", ""); to != "" {
		s.ReplyTo = endpoint(to)
	}
	payload := a.str("payload", "")
	count := a.int("count", 1)
	if err := a.done(); err != nil {
		return err
	}
	for i := range count {
		sub := s
		p := payload
		if p == "" {
			p = fmt.Sprintf("%s-%d", n.name, n.submitted)
		}
		if count > 1 && payload != "" {
			p = fmt.Sprintf("%s-%d", payload, i)
		}
		if sub.Last && i < count-1 {
			sub.Last = false
		}
		n.submitted++
		sub.Payload = []byte("<p>" + p + "</p>")
		ref, err := n.e.Submit(h.now, sub)
		if err != nil {
			h.printf("%s: submit refused: %v", n.name, err)
			continue
		}
		h.printf("%s: submitted %s %q", n.name, refText(ref), p)
		h.drain(n)
	}
	return nil
}

// cmdAbort deletes a group on the operator's request: a sending group
// (role=sender, the default: D16, R28), or every generation of a receiving
// group (role=receiver: gateway DELETE /v1/groups/{id}?role=receiver, D13).
func (h *harness) cmdAbort(a *args) error {
	role := a.str("role", "sender")
	def := "s"
	if role == "receiver" {
		def = "r"
	}
	n, err := h.node(a.str("on", def))
	if err != nil {
		return err
	}
	g := a.str("group", "")
	if err := a.done(); err != nil {
		return err
	}
	switch role {
	case "sender":
		n.e.Admin().AbortSending(h.now, g)
	case "receiver":
		if !n.e.Admin().AbortReceiving(h.now, g) {
			h.printf("%s: no receiving group %s", n.name, g)
		}
	default:
		return fmt.Errorf("role=%q: want sender or receiver", role)
	}
	h.drain(n)
	return nil
}

// cmdRespond answers the oldest POST waiting at a destination with no RMP:
// an RM-Reply made of the input entries, an HTTP status without envelope
// (status=503), or a lost connection (lost).
func (h *harness) cmdRespond(a *args, input string) error {
	status := a.int("status", 200)
	lost := a.has("lost")
	v, err := parseVersion(a.str("soap", "1.1"))
	if err != nil {
		return err
	}
	count := a.int("count", 1)
	if err := a.done(); err != nil {
		return err
	}
	entries, err := parseReplies(input)
	if err != nil {
		return err
	}
	for range count {
		if len(h.net.remote) == 0 {
			h.printf("net: nothing awaits a response")
			return nil
		}
		f := h.net.remote[0]
		h.net.remote = h.net.remote[1:]
		h.printf("net: responding to %s from %s", h.outboundText(f.out), f.from)
		if lost {
			h.result(f, outbound.PostResult{}, errLost)
			continue
		}
		res := outbound.PostResult{Status: status}
		if len(entries) > 0 {
			body, err := replyEnvelope(v, entries)
			if err != nil {
				return err
			}
			res.Body, res.ContentType = body, soap.ContentType(v, "")
		}
		h.result(f, res, nil)
	}
	return nil
}

// cmdNet adds a scripted fault for the next matching POSTs: drop (lost
// request), drop-reply (lost response), dup, hold (until release) or
// delay for=D.
func (h *harness) cmdNet(a *args) error {
	r := &rule{count: a.int("count", 1), from: a.str("from", ""), number: -1, delay: a.dur("for", 0)}
	for _, act := range []string{"drop", "drop-reply", "dup", "hold", "delay"} {
		if _, ok := a.vals(act); ok {
			if r.action != "" {
				return fmt.Errorf("net takes one action")
			}
			r.action = act
		}
	}
	if r.action == "" {
		return fmt.Errorf("net needs an action: drop, drop-reply, dup, hold or delay")
	}
	if r.action == "delay" && r.delay <= 0 {
		return fmt.Errorf("net delay needs for=DURATION")
	}
	switch k := a.str("kind", ""); k {
	case "":
	case "message":
		r.kind = rmp.OutMessage
	case "poll":
		r.kind = rmp.OutPoll
	case "callback":
		r.kind = rmp.OutCallback
	default:
		return fmt.Errorf("kind=%q: want message, poll or callback", k)
	}
	if v, ok := a.uint("n"); ok {
		r.number = int64(v)
	}
	if err := a.done(); err != nil {
		return err
	}
	h.net.rules = append(h.net.rules, r)
	return nil
}

var _ sender.MessageRef
