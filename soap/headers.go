package soap

import (
	"errors"

	"github.com/beevik/etree"
	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// wsrmChildren calls f for every element child of el in the wsrm namespace,
// in document order; foreign children are ignored (R88, A9).
func wsrmChildren(el *etree.Element, f func(c *etree.Element) error) error {
	pns := NamespaceWSRM // el itself is a wsrm element
	for _, t := range el.Child {
		c, ok := t.(*etree.Element)
		if !ok || nsOf(c, el.Space, pns) != NamespaceWSRM {
			continue
		}
		if err := f(c); err != nil {
			return err
		}
	}
	return nil
}

// MustUnderstand reports whether header block el of a version v envelope
// has the SOAP mustUnderstand attribute set ("1" or "true").
func MustUnderstand(el *etree.Element, v Version) bool { return mustUnderstand(el, v) }

// mustUnderstand reads the SOAP mustUnderstand attribute of a header block;
// an unreadable value is treated as absent (the SOAP layer owns it).
func mustUnderstand(el *etree.Element, v Version) bool {
	s, ok := soapAttr(el, v, "mustUnderstand")
	if !ok {
		return false
	}
	b, err := ParseBoolean(s)
	return err == nil && b
}

// requestFault is a fault about a Request that could not be identified: it
// becomes a SOAP Fault (D7, R38).
func requestFault(code faults.Code, rule, reason string) *faults.Fault {
	return faults.New(code, rule, reason)
}

// messageFault is a fault about an identified message (D7): the engine
// answers it with a fault indication on NonSequenceReply or ReplyRange.
func messageFault(id *MessageID, code faults.Code, rule, reason string) *faults.Fault {
	f := &faults.Fault{Code: code, Scope: faults.ScopeMessage, GroupID: id.GroupID, Rule: rule, Reason: reason}
	if id.Sequence != nil {
		f.HasNumber, f.From, f.To = true, id.Sequence.Number, id.Sequence.Number
	}
	return f
}

// parseRequest decodes wsrm:Request (digest §2.2). Children are accepted in
// any order (digest §15: tolerant when reading); each may appear once.
// Identity (MessageId) is read first; every later problem is a message fault.
func parseRequest(el *etree.Element, v Version, o ParseOptions) (*Request, error) {
	r := &Request{MustUnderstand: mustUnderstand(el, v)}
	var msgID, expiry, pattern *etree.Element
	var dupName string
	seen := func(p **etree.Element, c *etree.Element) {
		if *p != nil && dupName == "" {
			dupName = c.Tag
		}
		if *p == nil {
			*p = c
		}
	}
	var ack, dup, order *etree.Element
	_ = wsrmChildren(el, func(c *etree.Element) error {
		switch c.Tag {
		case "MessageId":
			seen(&msgID, c)
		case "ExpiryTime":
			seen(&expiry, c)
		case "ReplyPattern":
			seen(&pattern, c)
		case "AckRequested":
			seen(&ack, c)
		case "DuplicateElimination":
			seen(&dup, c)
		case "MessageOrder":
			seen(&order, c)
		}
		return nil
	})
	if msgID == nil {
		return nil, requestFault(faults.InvalidRequest, "soap.request.missing-message-id", "wsrm:Request has no wsrm:MessageId")
	}
	if dupName == "MessageId" {
		return nil, requestFault(faults.InvalidRequest, "soap.request.duplicate-element", "wsrm:Request has two wsrm:MessageId")
	}
	if err := parseMessageID(msgID, &r.MessageID, o); err != nil {
		return nil, err
	}
	id := &r.MessageID
	if dupName != "" {
		return r, messageFault(id, faults.InvalidRequest, "soap.request.duplicate-element", "wsrm:Request has two wsrm:"+dupName)
	}
	if err := parseSequenceTiming(msgID, id); err != nil {
		return r, err
	}
	if pattern == nil {
		return r, messageFault(id, faults.InvalidReplyPattern, "soap.reply-pattern.missing", "wsrm:Request has no wsrm:ReplyPattern")
	}
	if err := parseReplyPattern(pattern, &r.ReplyPattern, id, o); err != nil {
		return r, err
	}
	if expiry == nil {
		return r, messageFault(id, faults.InvalidExpiryTime, "soap.expiry.missing", "wsrm:Request has no wsrm:ExpiryTime")
	}
	text, ok := textOf(expiry)
	if !ok {
		return r, messageFault(id, faults.InvalidExpiryTime, "soap.expiry.bad-lexical", "wsrm:ExpiryTime has child elements")
	}
	t, err := ParseDateTime(text)
	if err != nil {
		if errors.Is(err, ErrNoOffset) {
			return r, messageFault(id, faults.InvalidExpiryTime, "soap.expiry.no-offset",
				"wsrm:ExpiryTime has no time-zone offset (D3)")
		}
		return r, messageFault(id, faults.InvalidExpiryTime, "soap.expiry.bad-lexical", "wsrm:ExpiryTime: "+err.Error())
	}
	r.ExpiryTime = t
	r.Flags = group.Flags{AckRequested: ack != nil, DuplicateElimination: dup != nil, MessageOrder: order != nil}
	if r.Flags.MessageOrder && id.Sequence == nil {
		return r, messageFault(id, faults.InvalidMessageParameters, "soap.request.order-without-sequence",
			"wsrm:MessageOrder needs wsrm:SequenceNum (R07, R61)")
	}
	return r, nil
}

// parseMessageID reads the identity: @groupId and SequenceNum/@number. A
// failure here leaves the message unidentified (request fault, D7).
func parseMessageID(el *etree.Element, id *MessageID, o ParseOptions) error {
	g, _ := attr(el, "groupId")
	g = trimXMLSpace(g)
	if g == "" {
		return requestFault(faults.InvalidRequest, "soap.request.missing-group-id", "wsrm:MessageId has no groupId")
	}
	if len(g) > o.MaxIDLength {
		return requestFault(faults.InvalidRequest, "soap.limit.id-length",
			"groupId is longer than "+itoa(uint64(o.MaxIDLength))+" bytes")
	}
	id.GroupID = g
	var seq *etree.Element
	err := wsrmChildren(el, func(c *etree.Element) error {
		if c.Tag != "SequenceNum" {
			return nil
		}
		if seq != nil {
			return requestFault(faults.InvalidRequest, "soap.sequence.duplicate", "wsrm:MessageId has two wsrm:SequenceNum")
		}
		seq = c
		return nil
	})
	if err != nil || seq == nil {
		return err
	}
	s, ok := attr(seq, "number")
	if !ok {
		return requestFault(faults.InvalidRequest, "soap.sequence.missing-number", "wsrm:SequenceNum has no number")
	}
	n, err := ParseUnsignedLong(s)
	if err != nil {
		return requestFault(faults.InvalidRequest, "soap.sequence.bad-number", "SequenceNum/@number: "+err.Error())
	}
	id.Sequence = &SequenceNum{Number: n}
	return nil
}

// parseSequenceTiming reads @last, @groupExpiryTime and @groupMaxIdleDuration
// of an identified message's SequenceNum.
func parseSequenceTiming(msgID *etree.Element, id *MessageID) error {
	if id.Sequence == nil {
		return nil
	}
	var seq *etree.Element
	_ = wsrmChildren(msgID, func(c *etree.Element) error {
		if c.Tag == "SequenceNum" && seq == nil {
			seq = c
		}
		return nil
	})
	sn := id.Sequence
	if s, ok := attr(seq, "last"); ok {
		b, err := ParseBoolean(s)
		if err != nil {
			return messageFault(id, faults.InvalidRequest, "soap.sequence.bad-last", "SequenceNum/@last: "+err.Error())
		}
		sn.Last = b
	}
	if s, ok := attr(seq, "groupExpiryTime"); ok {
		t, err := ParseDateTime(s)
		if errors.Is(err, ErrNoOffset) {
			return messageFault(id, faults.InvalidExpiryTime, "soap.group-expiry.no-offset",
				"SequenceNum/@groupExpiryTime has no time-zone offset (D3)")
		}
		if err != nil {
			return messageFault(id, faults.InvalidExpiryTime, "soap.group-expiry.bad-lexical",
				"SequenceNum/@groupExpiryTime: "+err.Error())
		}
		sn.Timing.Expiry = t
	}
	if s, ok := attr(seq, "groupMaxIdleDuration"); ok {
		d, err := ParseDuration(s)
		if err != nil {
			return messageFault(id, faults.InvalidRequest, "soap.sequence.bad-max-idle",
				"SequenceNum/@groupMaxIdleDuration: "+err.Error())
		}
		if d.Negative && !d.IsZero() {
			return messageFault(id, faults.InvalidMessageParameters, "soap.sequence.negative-max-idle",
				"SequenceNum/@groupMaxIdleDuration is negative")
		}
		d.Negative = false
		sn.Timing.MaxIdle, sn.Timing.HasMaxIdle = d, true
	}
	return nil
}

// parseReplyPattern reads wsrm:ReplyPattern (R17, R18, R63).
func parseReplyPattern(el *etree.Element, rp *ReplyPattern, id *MessageID, o ParseOptions) error {
	var value, replyTo *etree.Element
	err := wsrmChildren(el, func(c *etree.Element) error {
		var p **etree.Element
		switch c.Tag {
		case "Value":
			p = &value
		case "ReplyTo":
			p = &replyTo
		default:
			return nil
		}
		if *p != nil {
			return messageFault(id, faults.InvalidReplyPattern, "soap.reply-pattern.duplicate-element",
				"wsrm:ReplyPattern has two wsrm:"+c.Tag)
		}
		*p = c
		return nil
	})
	if err != nil {
		return err
	}
	if value == nil {
		return messageFault(id, faults.InvalidReplyPattern, "soap.reply-pattern.missing-value", "wsrm:ReplyPattern has no wsrm:Value")
	}
	s, _ := textOf(value)
	p, ok := group.ParseReplyPattern(s) // case-sensitive, no trimming (xsd:string, R17)
	if !ok {
		return messageFault(id, faults.InvalidReplyPattern, "soap.reply-pattern.bad-value",
			"wsrm:Value "+quote(s)+" is not Response, Callback or Poll (R17)")
	}
	rp.Value = p
	if replyTo != nil {
		rt, rule, reason := parseReplyTo(replyTo, o)
		if rule != "" {
			return messageFault(id, faults.InvalidReplyPattern, rule, reason)
		}
		rp.ReplyTo = rt
	}
	if p == group.ReplyCallback && rp.ReplyTo == nil {
		return messageFault(id, faults.InvalidReplyPattern, "soap.reply-pattern.callback-without-reply-to",
			"Callback needs wsrm:ReplyTo (R18, R63)")
	}
	return nil
}

// parseReplyTo reads a ref:ServiceRefType holding one wsrm:BareURI with an
// absolute URI (R19). On failure it returns the rule and reason.
func parseReplyTo(el *etree.Element, o ParseOptions) (*ReplyTo, string, string) {
	rt := &ReplyTo{}
	if s, ok := attr(el, "reference-scheme"); ok {
		rt.ReferenceScheme = trimXMLSpace(s)
		if len(rt.ReferenceScheme) > o.MaxIDLength {
			return nil, "soap.limit.id-length", "ReplyTo/@reference-scheme is longer than " + itoa(uint64(o.MaxIDLength)) + " bytes"
		}
	}
	var child *etree.Element
	for _, t := range el.Child {
		c, ok := t.(*etree.Element)
		if !ok {
			continue
		}
		if child != nil {
			return nil, "soap.reply-to.many-children", "wsrm:ReplyTo holds more than one element"
		}
		child = c
	}
	if child == nil {
		return nil, "soap.reply-to.missing-bare-uri", "wsrm:ReplyTo holds no wsrm:BareURI"
	}
	if child.Tag != "BareURI" || nsOf(child, el.Space, NamespaceWSRM) != NamespaceWSRM {
		return nil, "soap.reply-to.unsupported-reference", "wsrm:ReplyTo holds " + quote(child.FullTag()) + ", not wsrm:BareURI"
	}
	s, ok := textOf(child)
	s = trimXMLSpace(s)
	if !ok || s == "" {
		return nil, "soap.reply-to.empty-bare-uri", "wsrm:BareURI is empty"
	}
	if len(s) > o.MaxIDLength {
		return nil, "soap.limit.id-length", "wsrm:BareURI is longer than " + itoa(uint64(o.MaxIDLength)) + " bytes"
	}
	if !hasScheme(s) {
		return nil, "soap.reply-to.not-absolute", "wsrm:BareURI " + quote(s) + " is not an absolute URI (R19)"
	}
	rt.BareURI = s
	return rt, "", ""
}

// hasScheme reports whether s starts with an RFC 3986 scheme and a colon.
func hasScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}

// parseRange reads @from and @to (xsd:unsignedLong, from <= to: R33, R71).
func parseRange(el *etree.Element) (group.Range, string, string) {
	fs, ok1 := attr(el, "from")
	ts, ok2 := attr(el, "to")
	if !ok1 || !ok2 {
		return group.Range{}, "missing-bound", el.Tag + " needs from and to"
	}
	from, err := ParseUnsignedLong(fs)
	if err != nil {
		return group.Range{}, "bad-bound", el.Tag + "/@from: " + err.Error()
	}
	to, err := ParseUnsignedLong(ts)
	if err != nil {
		return group.Range{}, "bad-bound", el.Tag + "/@to: " + err.Error()
	}
	if from > to {
		return group.Range{}, "reversed-range", el.Tag + " has from > to"
	}
	return group.Range{From: from, To: to}, "", ""
}

// parseFaultAttr resolves a @fault QName to one of the twelve codes (D4, D6:
// all twelve accepted on input, R87).
func parseFaultAttr(el *etree.Element) (faults.Code, string, string) {
	s, ok := attr(el, "fault")
	if !ok {
		return 0, "", ""
	}
	ns, local, ok := resolveQName(el, s)
	if !ok {
		return 0, "bad-fault", "@fault " + quote(s) + " is not a QName with a declared prefix"
	}
	if ns != NamespaceWSRM {
		return 0, "bad-fault", "@fault " + quote(s) + " is not in the wsrm namespace (R87)"
	}
	c, ok := faults.Parse(local)
	if !ok {
		return 0, "bad-fault", "@fault " + quote(s) + " is not a known fault code"
	}
	return c, "", ""
}

// parseResponse decodes wsrm:Response (digest §2.3). An empty Response is
// accepted (A14). Problems are InvalidRequest request faults: the RM-Reply
// cannot be used.
func parseResponse(el *etree.Element, v Version, o ParseOptions) (*Response, error) {
	r := &Response{MustUnderstand: mustUnderstand(el, v)}
	entries := entryLimit{max: o.MaxEntries, code: faults.InvalidRequest, block: "Response", what: "replies and ranges"}
	bad := func(rule, reason string) error {
		return requestFault(faults.InvalidRequest, "soap.response."+rule, reason)
	}
	err := wsrmChildren(el, func(c *etree.Element) error {
		var rep group.Reply
		switch c.Tag {
		case "NonSequenceReply":
		case "SequenceReplies":
			rep.Sequenced = true
		default:
			return nil
		}
		id, err := entryGroupID(c, o, &entries, bad)
		if err != nil {
			return err
		}
		rep.GroupID = id
		if !rep.Sequenced {
			code, rule, reason := parseFaultAttr(c)
			if rule != "" {
				return bad(rule, reason)
			}
			rep.Fault = code
			r.Replies = append(r.Replies, rep)
			return nil
		}
		err = eachRange(c, "ReplyRange", &entries, bad, func(rc *etree.Element, rg group.Range) error {
			code, rule, reason := parseFaultAttr(rc)
			if rule != "" {
				return bad(rule, reason)
			}
			rep.Ranges = append(rep.Ranges, group.ReplyRange{From: rg.From, To: rg.To, Fault: code})
			return nil
		})
		if err != nil {
			return err
		}
		if len(rep.Ranges) == 0 {
			return bad("no-ranges", "wsrm:SequenceReplies has no wsrm:ReplyRange")
		}
		r.Replies = append(r.Replies, rep)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// parsePollRequest decodes wsrm:PollRequest (digest §2.4, R33, R79).
func parsePollRequest(el *etree.Element, v Version, o ParseOptions) (*PollRequest, error) {
	p := &PollRequest{MustUnderstand: mustUnderstand(el, v)}
	bad := func(rule, reason string) error {
		return requestFault(faults.InvalidPollRequest, "soap.poll."+rule, reason)
	}
	entries := entryLimit{max: o.MaxEntries, code: faults.InvalidPollRequest, block: "PollRequest", what: "references and ranges"}
	err := wsrmChildren(el, func(c *etree.Element) error {
		switch c.Tag {
		case "ReplyTo":
			if p.ReplyTo != nil {
				return bad("duplicate-reply-to", "wsrm:PollRequest has two wsrm:ReplyTo")
			}
			rt, rule, reason := parseReplyTo(c, o)
			if rule != "" {
				return requestFault(faults.InvalidPollRequest, rule, reason)
			}
			p.ReplyTo = rt
			return nil
		case "RefToMessageIds":
		default:
			return nil
		}
		id, err := entryGroupID(c, o, &entries, bad)
		if err != nil {
			return err
		}
		ref := group.PollRef{GroupID: id}
		err = eachRange(c, "SequenceNumRange", &entries, bad, func(_ *etree.Element, rg group.Range) error {
			ref.Ranges = append(ref.Ranges, rg)
			return nil
		})
		if err != nil {
			return err
		}
		p.Refs = append(p.Refs, ref)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(p.Refs) == 0 {
		return nil, bad("no-refs", "wsrm:PollRequest has no wsrm:RefToMessageIds (R33)")
	}
	return p, nil
}

// entryGroupID reads the groupId of c, a wsrm:NonSequenceReply,
// SequenceReplies or RefToMessageIds: present once XML white space is
// trimmed, at most MaxIDLength bytes. c counts as one of the block's entries.
func entryGroupID(c *etree.Element, o ParseOptions, entries *entryLimit, bad func(rule, reason string) error) (string, error) {
	g, _ := attr(c, "groupId")
	if g = trimXMLSpace(g); g == "" {
		return "", bad("missing-group-id", "wsrm:"+c.Tag+" has no groupId")
	}
	if len(g) > o.MaxIDLength {
		return "", requestFault(entries.code, "soap.limit.id-length", "groupId is too long")
	}
	return g, entries.add()
}

// eachRange calls f with each wsrm:<tag> child of c and its range: every
// one counts as an entry of the block, and one whose from/to do not parse
// is bad.
func eachRange(c *etree.Element, tag string, entries *entryLimit, bad func(rule, reason string) error, f func(rc *etree.Element, rg group.Range) error) error {
	return wsrmChildren(c, func(rc *etree.Element) error {
		if rc.Tag != tag {
			return nil
		}
		if err := entries.add(); err != nil {
			return err
		}
		rg, rule, reason := parseRange(rc)
		if rule != "" {
			return bad(rule, reason)
		}
		return f(rc, rg)
	})
}

// entryLimit counts the entries of one header block (replies, references
// and ranges) against ParseOptions.MaxEntries.
type entryLimit struct {
	n, max      int
	code        faults.Code
	block, what string // "wsrm:<block> has more than <max> <what>"
}

func (l *entryLimit) add() error {
	if l.n++; l.n > l.max {
		return requestFault(l.code, "soap.limit.entries", "wsrm:"+l.block+" has more than "+itoa(uint64(l.max))+" "+l.what)
	}
	return nil
}
