package conformance

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/soap"
)

// inject POSTs body to n as a client the scenario plays, and prints n's
// answer.
func (h *harness) inject(n *node, contentType string, body []byte) {
	n.token++
	tok := n.token
	n.e.Receive(h.now, tok, contentType, body)
	h.drain(n)
	if a, ok := n.answers[tok]; ok {
		delete(n.answers, tok)
		h.printAnswer(n, a)
	} else if h.fatal == nil {
		h.fatal = fmt.Errorf("%s gave no answer", n.name)
	}
}

// cmdSend builds a reliable message from the arguments and POSTs it
// through the real parser (digest §2.2).
func (h *harness) cmdSend(a *args) error {
	n, v, err := h.addressee(a, "r")
	if err != nil {
		return err
	}
	gid := a.str("group", "")
	if gid == "" {
		return fmt.Errorf("send needs group=")
	}
	req := &soap.Request{MessageID: soap.MessageID{GroupID: gid}}
	payload := "single"
	if num, ok := a.uint("n"); ok {
		seq := &soap.SequenceNum{Number: num, Last: a.has("last")}
		if err := a.timing(&seq.Timing); err != nil {
			return err
		}
		req.MessageID.Sequence = seq
		payload = fmt.Sprintf("m%d", num)
	}
	req.ExpiryTime = h.now.Add(defaultLifetime)
	if t, ok := a.instant("expires"); ok {
		req.ExpiryTime = t
	}
	flags := []string{"ack", "dup"}
	if f, ok := a.vals("flags"); ok {
		flags = f
	}
	if req.Flags, err = parseFlags(flags); err != nil {
		return err
	}
	if req.ReplyPattern.Value, err = parsePattern(a.str("reply", "response")); err != nil {
		return err
	}
	if to := a.str("reply-to", ""); to != "" {
		req.ReplyPattern.ReplyTo = &soap.ReplyTo{BareURI: endpoint(to)}
	}
	payload = a.str("payload", payload)
	if err := a.done(); err != nil {
		return err
	}
	body, err := soap.AppendRequestEnvelope(nil, v, req, []byte("<p>"+payload+"</p>"))
	if err != nil {
		return fmt.Errorf("building the envelope: %v", err)
	}
	h.inject(n, soap.ContentType(v, ""), body)
	return nil
}

// addressee reads the RMP an input goes to (argument to, default def) and
// the SOAP version it is written in (argument soap, default 1.1).
func (h *harness) addressee(a *args, def string) (*node, soap.Version, error) {
	n, err := h.node(a.str("to", def))
	if err != nil {
		return nil, 0, err
	}
	v, err := parseVersion(a.str("soap", "1.1"))
	return n, v, err
}

var placeholder = regexp.MustCompile(`\{\{([^}]*)\}\}`)

// cmdPost POSTs the input as raw XML; {{T+5s}} and {{+5s}} become
// xsd:dateTime values.
func (h *harness) cmdPost(a *args, input string) error {
	n, v, err := h.addressee(a, "r")
	if err != nil {
		return err
	}
	ct := a.str("content-type", soap.ContentType(v, ""))
	if err := a.done(); err != nil {
		return err
	}
	var perr error
	body := placeholder.ReplaceAllStringFunc(input, func(m string) string {
		t, err := h.parseInstant(strings.TrimSpace(m[2 : len(m)-2]))
		if err != nil {
			perr = err
			return m
		}
		b, err := soap.AppendDateTime(nil, t)
		if err != nil {
			perr = err
		}
		return string(b)
	})
	if perr != nil {
		return perr
	}
	h.inject(n, ct, []byte(body))
	return nil
}

// cmdPoll POSTs a PollRequest; each input line is a group id followed by
// its ranges (none for a singleton).
func (h *harness) cmdPoll(a *args, input string) error {
	n, v, err := h.addressee(a, "r")
	if err != nil {
		return err
	}
	p := &soap.PollRequest{}
	if to := a.str("reply-to", ""); to != "" {
		p.ReplyTo = &soap.ReplyTo{BareURI: endpoint(to)}
	}
	if err := a.done(); err != nil {
		return err
	}
	for _, line := range strings.Split(input, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		ref := group.PollRef{GroupID: f[0]}
		for _, s := range f[1:] {
			r, err := parseRange(s)
			if err != nil {
				return err
			}
			ref.Ranges = append(ref.Ranges, r)
		}
		p.Refs = append(p.Refs, ref)
	}
	body, err := soap.AppendPollRequestEnvelope(nil, v, p)
	if err != nil {
		return fmt.Errorf("building the poll: %v", err)
	}
	h.inject(n, soap.ContentType(v, ""), body)
	return nil
}

// parseReplies reads RM-Reply entries, one per line: "G ack" or "G Code"
// for a singleton, "G 0-2 3=Code" for a sequence.
func parseReplies(input string) ([]group.Reply, error) {
	var out []group.Reply
	for _, line := range strings.Split(input, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("reply line %q: want GROUP ack|CODE|RANGE[=CODE]…", line)
		}
		r := group.Reply{GroupID: f[0]}
		if c := f[1][0]; c < '0' || c > '9' {
			if f[1] != "ack" {
				code, err := parseCode(f[1])
				if err != nil {
					return nil, err
				}
				r.Fault = code
			}
			out = append(out, r)
			continue
		}
		r.Sequenced = true
		for _, s := range f[1:] {
			rs, cs, _ := strings.Cut(s, "=")
			rg, err := parseRange(rs)
			if err != nil {
				return nil, err
			}
			var code faults.Code
			if cs != "" {
				if code, err = parseCode(cs); err != nil {
					return nil, err
				}
			}
			r.Ranges = append(r.Ranges, group.ReplyRange{From: rg.From, To: rg.To, Fault: code})
		}
		out = append(out, r)
	}
	return out, nil
}

// replyEnvelope renders entries as an RM-Reply envelope.
func replyEnvelope(v soap.Version, entries []group.Reply) ([]byte, error) {
	return soap.AppendResponseEnvelope(nil, v, &soap.Response{Replies: entries}, faults.Extended, nil)
}

// cmdReply POSTs an RM-Reply to an RMP, as a callback does (R31).
func (h *harness) cmdReply(a *args, input string) error {
	n, v, err := h.addressee(a, "s")
	if err != nil {
		return err
	}
	if err := a.done(); err != nil {
		return err
	}
	entries, err := parseReplies(input)
	if err != nil {
		return err
	}
	body, err := replyEnvelope(v, entries)
	if err != nil {
		return err
	}
	h.inject(n, soap.ContentType(v, ""), body)
	return nil
}

var _ = group.Range{}
