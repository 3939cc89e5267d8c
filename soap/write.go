package soap

import (
	"errors"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// ErrNothingToWrite is returned instead of writing a wsrm:Response without a
// reply, which the schema does not allow (A14, R70): send no Response header.
var ErrNothingToWrite = errors.New("soap: nothing to write: a wsrm:Response needs at least one reply (A14, R70)")

// Headers are the wsrm header blocks of an outgoing envelope; nil ones are
// left out. One envelope may carry several (a reliable message with
// piggy-backed acks, digest §3). They are written in the order Request,
// Response, PollRequest.
type Headers struct {
	Request     *Request
	Response    *Response
	PollRequest *PollRequest
}

// AppendEnvelope appends a whole SOAP envelope of version v holding the
// given wsrm header blocks and body, the content of the SOAP Body, which is
// copied verbatim: it must be well-formed XML content that declares the
// namespaces it uses (the envelope declares only its own prefix and wsrm).
// Fault codes go through dialect d (D6). On error dst is returned unchanged.
func AppendEnvelope(dst []byte, v Version, h Headers, d faults.Dialect, body []byte) ([]byte, error) {
	if !v.Valid() {
		return dst, errors.New("soap: unknown SOAP version")
	}
	if h.Response != nil && len(h.Response.Replies) == 0 {
		return dst, ErrNothingToWrite
	}
	w := writer{buf: dst}
	p := v.prefix()
	w.raw("<")
	w.raw(p)
	w.raw(":Envelope xmlns:")
	w.raw(p)
	w.raw(`="`)
	w.raw(v.Namespace())
	w.raw(`" xmlns:wsrm="` + NamespaceWSRM + `">`)
	if h.Request != nil || h.Response != nil || h.PollRequest != nil {
		w.raw("<")
		w.raw(p)
		w.raw(":Header>")
		if h.Request != nil {
			w.request(v, h.Request, false)
		}
		if h.Response != nil {
			w.response(v, h.Response, d, false)
		}
		if h.PollRequest != nil {
			w.pollRequest(v, h.PollRequest, false)
		}
		w.raw("</")
		w.raw(p)
		w.raw(":Header>")
	}
	w.body(p, body)
	w.raw("</")
	w.raw(p)
	w.raw(":Envelope>")
	if w.err != nil {
		return dst, w.err
	}
	return w.buf, nil
}

func (w *writer) body(p string, body []byte) {
	w.raw("<")
	w.raw(p)
	if len(body) == 0 {
		w.raw(":Body/>")
		return
	}
	w.raw(":Body>")
	w.buf = append(w.buf, body...)
	w.raw("</")
	w.raw(p)
	w.raw(":Body>")
}

// AppendRequestEnvelope appends an envelope carrying r and body (see
// AppendEnvelope). The same r and body always give the same bytes, so a
// resend is byte-identical (R10).
func AppendRequestEnvelope(dst []byte, v Version, r *Request, body []byte) ([]byte, error) {
	if r == nil {
		return dst, errors.New("soap: nil Request")
	}
	return AppendEnvelope(dst, v, Headers{Request: r}, faults.Extended, body)
}

// AppendResponseEnvelope appends an envelope carrying r (an RM-Reply) and
// body, which is empty for a one-way operation. With no reply in r it
// returns ErrNothingToWrite (A14).
func AppendResponseEnvelope(dst []byte, v Version, r *Response, d faults.Dialect, body []byte) ([]byte, error) {
	if r == nil {
		return dst, ErrNothingToWrite
	}
	return AppendEnvelope(dst, v, Headers{Response: r}, d, body)
}

// AppendPollRequestEnvelope appends an envelope with an empty Body carrying p.
func AppendPollRequestEnvelope(dst []byte, v Version, p *PollRequest) ([]byte, error) {
	if p == nil {
		return dst, errors.New("soap: nil PollRequest")
	}
	return AppendEnvelope(dst, v, Headers{PollRequest: p}, faults.Extended, nil)
}

// AppendRequestHeader appends the wsrm:Request block alone, declaring the
// wsrm and envelope prefixes on it so that it stands on its own.
func AppendRequestHeader(dst []byte, v Version, r *Request) ([]byte, error) {
	return appendAlone(dst, v, func(w *writer) { w.request(v, r, true) })
}

// AppendResponseHeader appends the wsrm:Response block alone, declaring its
// prefixes (see AppendRequestHeader); ErrNothingToWrite when r has no reply.
func AppendResponseHeader(dst []byte, v Version, r *Response, d faults.Dialect) ([]byte, error) {
	return appendAlone(dst, v, func(w *writer) {
		if r == nil || len(r.Replies) == 0 {
			w.fail(ErrNothingToWrite)
			return
		}
		w.response(v, r, d, true)
	})
}

// AppendPollRequestHeader appends the wsrm:PollRequest block alone,
// declaring its prefixes (see AppendRequestHeader).
func AppendPollRequestHeader(dst []byte, v Version, p *PollRequest) ([]byte, error) {
	return appendAlone(dst, v, func(w *writer) { w.pollRequest(v, p, true) })
}

// appendAlone appends what block writes to dst; on error dst is returned
// unchanged.
func appendAlone(dst []byte, v Version, block func(*writer)) ([]byte, error) {
	if !v.Valid() {
		return dst, errors.New("soap: unknown SOAP version")
	}
	w := writer{buf: dst}
	block(&w)
	if w.err != nil {
		return dst, w.err
	}
	return w.buf, nil
}

// blockStart writes `<wsrm:name [decls] P:mustUnderstand="…">` (R03).
func (w *writer) blockStart(v Version, name string, decl bool) {
	p := v.prefix()
	w.raw("<wsrm:")
	w.raw(name)
	if decl {
		w.raw(` xmlns:wsrm="` + NamespaceWSRM + `" xmlns:`)
		w.raw(p)
		w.raw(`="`)
		w.raw(v.Namespace())
		w.raw(`"`)
	}
	w.raw(" ")
	w.raw(p)
	w.raw(`:mustUnderstand="`)
	w.raw(v.mustUnderstand())
	w.raw(`">`)
}

// groupID writes ` groupId="g"` after checking g is not empty.
func (w *writer) groupID(g string) {
	if trimXMLSpace(g) == "" {
		w.fail(errors.New("soap: empty groupId"))
		return
	}
	w.attr("groupId", g)
}

// faultAttr writes ` fault="wsrm:Code"` with the dialect applied (D6).
func (w *writer) faultAttr(c faults.Code, d faults.Dialect) {
	if c == 0 {
		return
	}
	if !c.Valid() {
		w.fail(errors.New("soap: invalid fault code " + c.String()))
		return
	}
	w.raw(` fault="wsrm:`)
	w.raw(d.Wire(c).String())
	w.raw(`"`)
}

// request writes wsrm:Request in the schema's element order (R02).
func (w *writer) request(v Version, r *Request, decl bool) {
	if r == nil {
		w.fail(errors.New("soap: nil Request"))
		return
	}
	if r.Flags.MessageOrder && r.MessageID.Sequence == nil {
		w.fail(errors.New("soap: MessageOrder needs a SequenceNum (R07)"))
		return
	}
	w.blockStart(v, "Request", decl)
	w.raw("<wsrm:MessageId")
	w.groupID(r.MessageID.GroupID)
	if s := r.MessageID.Sequence; s != nil {
		w.raw("><wsrm:SequenceNum")
		w.uintAttr("number", s.Number)
		if s.Last {
			w.raw(` last="true"`)
		}
		if s.Timing.HasExpiry() {
			w.raw(` groupExpiryTime="`)
			w.dateTime(s.Timing.Expiry)
			w.raw(`"`)
		}
		if s.Timing.HasMaxIdle {
			if s.Timing.MaxIdle.Negative && !s.Timing.MaxIdle.IsZero() {
				w.fail(errors.New("soap: negative groupMaxIdleDuration"))
			}
			var err error
			w.raw(` groupMaxIdleDuration="`)
			if w.buf, err = AppendDuration(w.buf, s.Timing.MaxIdle); err != nil {
				w.fail(err)
			}
			w.raw(`"`)
		}
		w.raw("/></wsrm:MessageId>")
	} else {
		w.raw("/>")
	}
	w.raw("<wsrm:ExpiryTime>")
	w.dateTime(r.ExpiryTime)
	w.raw("</wsrm:ExpiryTime><wsrm:ReplyPattern><wsrm:Value>")
	rp := r.ReplyPattern
	if rp.Value.String() == "" {
		w.fail(errors.New("soap: invalid ReplyPattern value"))
	}
	w.raw(rp.Value.String())
	w.raw("</wsrm:Value>")
	if rp.ReplyTo != nil {
		w.replyTo(rp.ReplyTo)
	} else if rp.Value == group.ReplyCallback {
		w.fail(errors.New("soap: Callback needs ReplyTo (R18)"))
	}
	w.raw("</wsrm:ReplyPattern>")
	if r.Flags.AckRequested {
		w.raw("<wsrm:AckRequested/>")
	}
	if r.Flags.DuplicateElimination {
		w.raw("<wsrm:DuplicateElimination/>")
	}
	if r.Flags.MessageOrder {
		w.raw("<wsrm:MessageOrder/>")
	}
	w.raw("</wsrm:Request>")
}

func (w *writer) dateTime(t time.Time) {
	var err error
	if w.buf, err = AppendDateTime(w.buf, t); err != nil {
		w.fail(err)
	}
}

func (w *writer) replyTo(rt *ReplyTo) {
	w.raw("<wsrm:ReplyTo")
	if rt.ReferenceScheme != "" {
		w.attr("reference-scheme", rt.ReferenceScheme)
	}
	w.raw("><wsrm:BareURI>")
	if trimXMLSpace(rt.BareURI) == "" {
		w.fail(errors.New("soap: empty BareURI"))
	}
	w.text(rt.BareURI)
	w.raw("</wsrm:BareURI></wsrm:ReplyTo>")
}

// response writes wsrm:Response: replies in the given order, fault codes
// through d (D6). Empty responses never get here (A14).
func (w *writer) response(v Version, r *Response, d faults.Dialect, decl bool) {
	w.blockStart(v, "Response", decl)
	for i := range r.Replies {
		rep := &r.Replies[i]
		if !rep.Sequenced {
			if len(rep.Ranges) != 0 {
				w.fail(errors.New("soap: a NonSequenceReply has no ranges"))
			}
			w.raw("<wsrm:NonSequenceReply")
			w.groupID(rep.GroupID)
			w.faultAttr(rep.Fault, d)
			w.raw("/>")
			continue
		}
		if len(rep.Ranges) == 0 {
			w.fail(errors.New("soap: SequenceReplies needs at least one ReplyRange"))
		}
		if rep.Fault != 0 {
			w.fail(errors.New("soap: SequenceReplies carries faults on its ranges, not on itself"))
		}
		w.raw("<wsrm:SequenceReplies")
		w.groupID(rep.GroupID)
		w.raw(">")
		for j := range rep.Ranges {
			rg := &rep.Ranges[j]
			if rg.From > rg.To {
				w.fail(errors.New("soap: ReplyRange from > to (R71)"))
			}
			w.raw("<wsrm:ReplyRange")
			w.uintAttr("from", rg.From)
			w.uintAttr("to", rg.To)
			w.faultAttr(rg.Fault, d)
			w.raw("/>")
		}
		w.raw("</wsrm:SequenceReplies>")
	}
	w.raw("</wsrm:Response>")
}

// pollRequest writes wsrm:PollRequest (R33).
func (w *writer) pollRequest(v Version, p *PollRequest, decl bool) {
	if p == nil || len(p.Refs) == 0 {
		w.fail(errors.New("soap: a PollRequest needs at least one RefToMessageIds (R33)"))
		return
	}
	w.blockStart(v, "PollRequest", decl)
	for i := range p.Refs {
		ref := &p.Refs[i]
		w.raw("<wsrm:RefToMessageIds")
		w.groupID(ref.GroupID)
		if len(ref.Ranges) == 0 {
			w.raw("/>")
			continue
		}
		w.raw(">")
		for _, rg := range ref.Ranges {
			if rg.From > rg.To {
				w.fail(errors.New("soap: SequenceNumRange from > to (R33)"))
			}
			w.raw("<wsrm:SequenceNumRange")
			w.uintAttr("from", rg.From)
			w.uintAttr("to", rg.To)
			w.raw("/>")
		}
		w.raw("</wsrm:RefToMessageIds>")
	}
	if p.ReplyTo != nil {
		w.replyTo(p.ReplyTo)
	}
	w.raw("</wsrm:PollRequest>")
}
