package rmp

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/httpbody"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/peer"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/soap"
)

// Inbound is an inbound request parsed outside the engine: parsing is pure
// and the most expensive step, so a driver does it on the request's own
// goroutine and hands the result to ReceiveInbound.
type Inbound struct {
	version    soap.Version
	ctErr      error
	env        *soap.Envelope
	parseErr   error
	payload    []byte // the envelope without its wsrm headers
	payloadErr error
	action     string    // stored and delivered with the message
	peer       peer.Peer // the sender's verified identity (mutual TLS)
	// The ReplyTo URLs the driver's outbound.Policy refuses (checkOutbound).
	replyToRefused, pollReplyToRefused bool
	addr                               string         // the sender's IP address (clientAddr), for quotas
	body                               *httpbody.Body // ReadRequest's, released once the engine has taken the request
	wire                               eofReader      // ReadRequest's reader of the request body
	scan                               soap.Scanner   // ReadRequest's limits, checked as the body arrives
}

// Envelope is the parsed envelope and its SOAP version, or the error that
// refused the request: soap.ErrContentType for a Content-Type that names
// no SOAP version (the RMP endpoint answers it 415), else a charset or a
// parse error (the version is then the Content-Type's). A driver that
// serves plain SOAP beside the RMP endpoint (the gateway's -route) reads
// requests with ParseRequest too. The envelope is parsed with
// soap.ParseOptions.SkipBody: its Body may have no children in the tree;
// its content is BodyContent.
func (in *Inbound) Envelope() (*soap.Envelope, soap.Version, error) {
	if in.ctErr != nil {
		return nil, in.version, in.ctErr
	}
	return in.env, in.version, in.parseErr
}

// Action is the action the request was sent with (soap.RequestAction).
func (in *Inbound) Action() string { return in.action }

// SetPeer sets the sender's identity, for a driver that authenticated the
// request itself; otherwise Node.ServeInbound takes it from the request's
// verified client certificate (peer.FromRequest).
func (in *Inbound) SetPeer(p peer.Peer) { in.peer = p }

// ParseRequest parses a POST to the RMP endpoint from its headers and body
// under opts (the engine's Config.Parse): the envelope, and the action of
// a SOAP 1.1 request from its SOAPAction header (soap.RequestAction) or of
// a SOAP 1.2 one from its Content-Type.
func ParseRequest(h http.Header, body []byte, opts soap.ParseOptions) *Inbound {
	return parseInbound(h.Get("Content-Type"), h.Get("SOAPAction"), body, opts)
}

func parseInbound(contentType, soapAction string, body []byte, opts soap.ParseOptions) *Inbound {
	in, charset := inboundHead(contentType, soapAction)
	if in.ctErr == nil {
		in.parse(body, charset, opts)
	}
	return in
}

// inboundHead is the Inbound of a request's headers, before its body is
// read, and the Content-Type's charset.
func inboundHead(contentType, soapAction string) (*Inbound, string) {
	in := &Inbound{}
	var charset, ctAction string
	in.version, ctAction, charset, in.ctErr = soap.MediaType(contentType)
	if in.ctErr == nil {
		in.action = soap.RequestAction(in.version, ctAction, soapAction)
	}
	return in, charset
}

// parse parses the body of a request whose Content-Type is a SOAP one.
func (in *Inbound) parse(body []byte, charset string, opts soap.ParseOptions) {
	var err error
	// UTF-16 declared only by the charset parameter (no BOM); Parse finds
	// the rest by itself.
	if body, err = soap.ToUTF8(body, charset); err != nil {
		in.parseErr = err
		return
	}
	// Nobody here reads the Body's tree: the payload stored and delivered
	// is spliced from the bytes (issue #22).
	opts.SkipBody = true
	in.env, in.parseErr = soap.Parse(body, opts)
	if in.env != nil {
		in.version = in.env.Version
	}
	if in.parseErr == nil && in.env.Request != nil {
		in.payload, in.payloadErr = in.env.WithoutWSRM()
	}
}

// checkOutbound marks the ReplyTo URLs of the request (its message's and
// its PollRequest's) that p refuses, so that the engine refuses them
// (InvalidReplyPattern, InvalidPollRequest) and never calls them. A URL
// that is not absolute http(s) is left to the receiver's own checks.
// Node.ServeInbound checks every request against NodeConfig.Outbound.
func (in *Inbound) checkOutbound(p *outbound.Policy) {
	if in.env == nil {
		return
	}
	refused := func(raw string) bool {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return false
		}
		return p.CheckURL(raw) != nil
	}
	if r := in.env.Request; r != nil && r.ReplyPattern.ReplyTo != nil {
		in.replyToRefused = refused(r.ReplyPattern.ReplyTo.BareURI)
	}
	if pr := in.env.PollRequest; pr != nil && pr.ReplyTo != nil {
		in.pollReplyToRefused = refused(pr.ReplyTo.BareURI)
	}
}

// GroupID is the first groupId the request names: its reliable message's,
// else its first RM-Reply's, else its first poll reference's; "" when it
// names none or could not be read. A router that spreads groups over
// nodes reads it (the request is then served with Node.ServeInbound).
func (in *Inbound) GroupID() string {
	env := in.env
	switch {
	case env == nil || in.ctErr != nil:
		return ""
	case env.Request != nil:
		return env.Request.MessageID.GroupID
	case env.Response != nil && len(env.Response.Replies) > 0:
		return env.Response.Replies[0].GroupID
	case env.PollRequest != nil && len(env.PollRequest.Refs) > 0:
		return env.PollRequest.Refs[0].GroupID
	}
	return ""
}

// Receive processes one inbound HTTP POST to the RMP endpoint: a reliable
// message, a PollRequest, an RM-Reply for the sending side (a callback, or
// acks piggy-backed on a message), or several of these in one envelope. Its
// HTTP response comes out as an Answer with the given token.
func (e *Engine) Receive(now time.Time, token uint64, contentType string, body []byte) {
	e.ReceiveInbound(now, token, parseInbound(contentType, "", body, e.cfg.Parse))
}

// ReceiveInbound is Receive for a request parsed with ParseRequest.
func (e *Engine) ReceiveInbound(now time.Time, token uint64, in *Inbound) {
	if in.ctErr != nil {
		e.answerPlain(token, http.StatusUnsupportedMediaType, in.ctErr.Error())
		return
	}
	v, env := in.version, in.env
	if in.parseErr != nil {
		e.refuse(token, v, in.parseErr)
		return
	}
	if env.Request == nil && env.Response == nil && env.PollRequest == nil {
		e.soapFault(token, v, faults.New(faults.InvalidRequest, "rmp.no-wsrm-header",
			"the envelope carries no wsrm:Request, wsrm:Response or wsrm:PollRequest header"))
		return
	}
	if env.Response != nil {
		// RM-Replies for the sending side: a callback (R31) or acks that
		// ride on a message (digest §3), each only from the group's
		// destination (bind.go).
		rs, dropped := e.bindReplies(env.Response.Replies, replySource{peer: in.peer.ID()})
		e.addSender(e.send.Replies(now, rs))
		if dropped && env.Request == nil && env.PollRequest == nil {
			e.soapFault(token, v, foreignReplyFault())
			return
		}
	}
	var out soap.Response
	var business []byte
	var await *receiver.DeliveryRef
	later := false // await names a delivery that is not in this Ready
	if env.Request != nil {
		if in.payloadErr != nil {
			e.soapFault(token, v, faults.New(faults.InvalidRequest, "rmp.payload", in.payloadErr.Error()))
			return
		}
		m := receiverMessage(env, in.payload)
		m.Action = in.action
		if in.replyToRefused {
			// Refused under Callback; under another pattern never kept.
			m.ReplyToRefused = m.Pattern == group.ReplyCallback
			if !m.ReplyToRefused {
				m.ReplyTo = ""
			}
		}
		m.Peer = quotaPeer(in.peer, in.addr)
		rrd := e.recv.Message(now, m)
		if e.faulted(token, v, rrd) {
			return
		}
		e.countAccept(&rrd)
		if m.Pattern == group.ReplyResponse {
			await = handedOut(&rrd, &m)
		}
		if rrd.Reply != nil {
			out.Replies = appendReplies(out.Replies, rrd.Reply)
			business = append([]byte(nil), rrd.Response...)
			if await == nil && business == nil && m.Pattern == group.ReplyResponse && !e.cfg.Receiver.AckOnDelivery {
				// Held out of order, or a copy of a message not taken yet:
				// its business response may still ride on this answer.
				// (Under AckOnDelivery the answer carries no ack of a held
				// message for a response to ride beside.)
				await = e.undelivered(&rrd, &m)
				later = await != nil
			}
		}
		e.addReceiver(rrd)
	}
	polled := false
	if env.PollRequest != nil {
		p := receiverPoll(env.PollRequest)
		p.ReplyToRefused = in.pollReplyToRefused
		p.Peer = quotaPeer(in.peer, in.addr)
		prd := e.recv.Poll(now, p)
		if e.faulted(token, v, prd) {
			return
		}
		if prd.PollAnswer != nil {
			out.Replies = appendReplies(out.Replies, prd.PollAnswer)
		}
		polled = true
		e.addReceiver(prd)
	}
	switch {
	case len(out.Replies) > 0 || business != nil || polled:
		// A poll answer with nothing to report is an envelope without a
		// Response header (A14).
		var resp *soap.Response
		if len(out.Replies) > 0 {
			resp = &out
		}
		e.answerEnvelope(token, v, resp, business)
		if await != nil && business == nil {
			// R73: the consumer's business response rides on this answer.
			a := &e.rd.Answers[len(e.rd.Answers)-1]
			a.Await, a.AwaitLater, a.version, a.reply = await, later, v, resp
		}
	default:
		e.rd.Answers = append(e.rd.Answers, Answer{Token: token, Status: http.StatusAccepted})
	}
}

// handedOut returns the reference of m's delivery when rd hands m to the
// consumer, so that its business response can ride on m's own answer under
// the Response pattern (R73).
func handedOut(rd *receiver.Ready, m *receiver.Message) *receiver.DeliveryRef {
	for i := range rd.Deliver {
		ref := rd.Deliver[i].Ref
		if ref.Group.GroupID == m.GroupID && ref.HasNumber == m.HasNumber && (!m.HasNumber || ref.Number == m.Number) {
			return &ref
		}
	}
	return nil
}

// undelivered returns the reference of m when rd reports it held or a
// duplicate and the receiver has not handed it to the consumer yet.
func (e *Engine) undelivered(rd *receiver.Ready, m *receiver.Message) *receiver.DeliveryRef {
	for _, ev := range rd.Events {
		if ev.Kind != receiver.EventHeld && ev.Kind != receiver.EventDuplicate || ev.Group.GroupID != m.GroupID ||
			ev.HasNumber != m.HasNumber || m.HasNumber && ev.Number != m.Number {
			continue
		}
		ref := receiver.DeliveryRef{Group: ev.Group, HasNumber: ev.HasNumber, Number: ev.Number}
		if e.recv.Undelivered(ref) {
			return &ref
		}
	}
	return nil
}

// refuse answers a request the parser refused. A message it could identify
// gets a fault indication in a wsrm:Response (D7); anything else a SOAP
// Fault (R38, R79).
func (e *Engine) refuse(token uint64, v soap.Version, err error) {
	var f *faults.Fault
	if !errors.As(err, &f) {
		f = faults.New(faults.InvalidRequest, "rmp.unreadable", err.Error())
	}
	if !v.Valid() {
		v = soap.SOAP11
	}
	if f.Scope == faults.ScopeMessage && f.GroupID != "" {
		e.metrics.countFault(f.Code, true)
		rep := group.Reply{GroupID: f.GroupID, Fault: f.Code}
		if f.HasNumber {
			rep = group.Reply{GroupID: f.GroupID, Sequenced: true,
				Ranges: []group.ReplyRange{{From: f.From, To: f.To, Fault: f.Code}}}
		}
		e.answerEnvelope(token, v, &soap.Response{Replies: []group.Reply{rep}}, nil)
		return
	}
	e.soapFault(token, v, f)
}

// faulted takes in a receiver Ready that refuses the message or poll with a
// SOAP fault, and answers with that fault alone.
func (e *Engine) faulted(token uint64, v soap.Version, rd receiver.Ready) bool {
	if rd.SOAPFault == nil {
		return false
	}
	e.addReceiver(rd)
	e.soapFault(token, v, rd.SOAPFault)
	return true
}

func (e *Engine) soapFault(token uint64, v soap.Version, f *faults.Fault) {
	e.metrics.countFault(f.Code, true)
	reason := f.Reason
	if reason == "" {
		reason = f.Rule
	}
	b, err := soap.AppendFaultEnvelope(nil, v, f.Code, reason, e.cfg.Receiver.Dialect)
	if err != nil {
		e.answerPlain(token, http.StatusInternalServerError, err.Error())
		return
	}
	e.rd.Answers = append(e.rd.Answers, Answer{Token: token, Status: soap.FaultStatus(v, e.cfg.Receiver.Dialect.Wire(f.Code)),
		ContentType: soap.ContentType(v, ""), Body: b})
}

func (e *Engine) answerEnvelope(token uint64, v soap.Version, resp *soap.Response, body []byte) {
	// Codes from the receiver are already mapped through the dialect (D6).
	b, err := soap.AppendEnvelope(make([]byte, 0, replyEnvelopeSize(resp, body)), v, soap.Headers{Response: resp}, faults.Extended, body)
	if err != nil {
		e.answerPlain(token, http.StatusInternalServerError, err.Error())
		return
	}
	e.rd.Answers = append(e.rd.Answers, Answer{Token: token, Status: soap.BusinessStatus(v, body), ContentType: soap.ContentType(v, ""), Body: b})
}

func (e *Engine) answerPlain(token uint64, status int, msg string) {
	e.rd.Answers = append(e.rd.Answers, Answer{Token: token, Status: status,
		ContentType: "text/plain; charset=utf-8", Body: []byte(msg + "\n")})
}

// countAccept counts a message as accepted unless the receiver refused it
// or recognised a duplicate.
func (e *Engine) countAccept(rd *receiver.Ready) {
	for _, ev := range rd.Events {
		if ev.Kind == receiver.EventRefused || ev.Kind == receiver.EventDuplicate {
			return
		}
	}
	e.metrics.Accepted++
}

// receiverMessage translates a parsed reliable message for the receiving
// RMP; payload is the envelope without its wsrm headers.
func receiverMessage(env *soap.Envelope, payload []byte) receiver.Message {
	r := env.Request
	m := receiver.Message{
		GroupID: r.MessageID.GroupID,
		Expiry:  r.ExpiryTime,
		Flags:   r.Flags,
		Pattern: r.ReplyPattern.Value,
		Payload: payload,
	}
	if s := r.MessageID.Sequence; s != nil {
		m.HasNumber, m.Number, m.Last, m.Timing = true, s.Number, s.Last, s.Timing
	}
	if rt := r.ReplyPattern.ReplyTo; rt != nil {
		m.ReplyTo = rt.BareURI
	}
	return m
}

func receiverPoll(p *soap.PollRequest) receiver.PollRequest {
	out := receiver.PollRequest{Refs: p.Refs}
	if p.ReplyTo != nil {
		out.ReplyTo = p.ReplyTo.BareURI
	}
	return out
}

// appendReplies appends a receiver Reply's entries to the replies of a
// wsrm:Response, ranges copied: the Receiver reuses their memory on its
// next call, before the Response may be rendered.
func appendReplies(dst []group.Reply, r *receiver.Reply) []group.Reply {
	for _, ent := range r.Entries {
		if ent.Sequenced {
			ent.Fault = 0
			ent.Ranges = slices.Clone(ent.Ranges)
		} else {
			ent.Ranges = nil
		}
		dst = append(dst, ent)
	}
	return dst
}
