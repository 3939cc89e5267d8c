package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
)

// SubmitRequest is the body of POST /v1/messages. Unknown fields are
// ignored; To and Body are required.
type SubmitRequest struct {
	To              *string `json:"to"`
	Group           string  `json:"group"`
	Last            bool    `json:"last"`
	Ordered         bool    `json:"ordered"`
	Ack             bool    `json:"ack"`
	DupElim         bool    `json:"dupElim"`
	ExpiresIn       string  `json:"expiresIn"`
	ExpiryTime      string  `json:"expiryTime"`
	GroupExpiryTime string  `json:"groupExpiryTime"`
	GroupMaxIdle    string  `json:"groupMaxIdle"`
	ReplyPattern    string  `json:"replyPattern"`
	SOAP            string  `json:"soap"`
	Action          string  `json:"action"`
	Body            *string `json:"body"`
}

// SubmitAnswer is the 202 body of POST /v1/messages.
type SubmitAnswer struct {
	ID      string  `json:"id"`
	GroupID string  `json:"groupId"`
	Number  *uint64 `json:"number"`
}

// fieldError is a 400 naming the JSON field at fault.
type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

func bad(field, format string, args ...any) *fieldError {
	return &fieldError{field: field, msg: fmt.Sprintf(format, args...)}
}

// submission checks a SubmitRequest and builds the engine's Submission.
func (g *Gateway) submission(req *SubmitRequest, now time.Time) (rmp.Submission, *fieldError) {
	var s rmp.Submission
	if req.To == nil || *req.To == "" {
		return s, bad("to", "required")
	}
	if u, err := url.Parse(*req.To); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return s, bad("to", "must be an absolute http or https URL")
	}
	if err := g.cfg.outbound().CheckURL(*req.To); err != nil {
		return s, bad("to", "%v", err)
	}
	if req.Body == nil {
		return s, bad("body", "required")
	}
	s.To = *req.To
	s.GroupKey = req.Group
	s.Last = req.Last
	s.Flags = group.Flags{AckRequested: req.Ack, DuplicateElimination: req.DupElim, MessageOrder: req.Ordered}
	if err := soap.CheckAction(req.Action, maxActionBytes); err != nil {
		return s, bad("action", "%v", err)
	}
	s.Action = req.Action
	s.Payload = []byte(*req.Body)
	switch req.SOAP {
	case "", "1.1":
		s.Version = soap.SOAP11
	case "1.2":
		s.Version = soap.SOAP12
	default:
		return s, bad("soap", "must be \"1.1\" or \"1.2\"")
	}
	// The parser and limits of /rmp, on the envelope the body will travel
	// in (issue 18).
	if err := soap.CheckBodyContent(s.Version, s.Payload, g.parseOptions()); err != nil {
		reason := err.Error()
		var f *faults.Fault
		if errors.As(err, &f) && f.Reason != "" {
			reason = f.Reason
		}
		return s, bad("body", "not a SOAP Body's content: %s", reason)
	}
	s.Pattern = group.ReplyResponse
	if req.ReplyPattern != "" {
		p, ok := group.ParseReplyPattern(req.ReplyPattern)
		if !ok {
			return s, bad("replyPattern", "must be Response, Callback or Poll")
		}
		s.Pattern = p
	}
	if req.ExpiresIn != "" && req.ExpiryTime != "" {
		return s, bad("expiryTime", "give expiresIn or expiryTime, not both")
	}
	if req.ExpiresIn != "" {
		d, err := time.ParseDuration(req.ExpiresIn)
		if err != nil || d <= 0 {
			return s, bad("expiresIn", "must be a positive Go duration such as \"60s\"")
		}
		s.Expiry = now.Add(d)
	}
	if req.ExpiryTime != "" {
		t, err := time.Parse(time.RFC3339Nano, req.ExpiryTime)
		if err != nil {
			return s, bad("expiryTime", "must be RFC 3339")
		}
		s.Expiry = t.UTC()
	}
	if req.GroupExpiryTime != "" {
		t, err := time.Parse(time.RFC3339Nano, req.GroupExpiryTime)
		if err != nil {
			return s, bad("groupExpiryTime", "must be RFC 3339")
		}
		s.Timing.Expiry = t.UTC()
	}
	if req.GroupMaxIdle != "" {
		d, err := parseIdle(req.GroupMaxIdle)
		if err != nil {
			return s, bad("groupMaxIdle", "%v", err)
		}
		s.Timing.MaxIdle, s.Timing.HasMaxIdle = d, true
	}
	// The sender's own rules (R07, R13, D10, R16, last), before the
	// submission is forwarded or keyed.
	if err := s.Validate(now, g.cfg.DefaultExpiresIn); err != nil {
		return s, submitFieldError(req, err)
	}
	return s, g.beyondMaxLifetime(req, &s, now)
}

// beyondMaxLifetime refuses an ExpiryTime, a groupExpiryTime or a
// groupMaxIdle beyond -max-lifetime (#18), the bound of this gateway.
func (g *Gateway) beyondMaxLifetime(req *SubmitRequest, s *rmp.Submission, now time.Time) *fieldError {
	horizon := now.Add(g.cfg.MaxLifetime)
	switch {
	case s.Expiry.After(horizon):
		f := "expiryTime"
		if req.ExpiresIn != "" {
			f = "expiresIn"
		}
		return bad(f, "more than -max-lifetime (%s) ahead", g.cfg.MaxLifetime)
	case s.Timing.Expiry.After(horizon):
		return bad("groupExpiryTime", "more than -max-lifetime (%s) ahead", g.cfg.MaxLifetime)
	case s.Timing.HasMaxIdle && receiver.Exceeds(s.Timing.MaxIdle, g.cfg.MaxLifetime):
		return bad("groupMaxIdle", "longer than -max-lifetime (%s)", g.cfg.MaxLifetime)
	}
	return nil
}

// submitFieldError maps a sender refusal to the request's field: a
// lifetime given as expiresIn is named so.
func submitFieldError(req *SubmitRequest, err error) *fieldError {
	var fe *sender.FieldError
	if !errors.As(err, &fe) {
		return &fieldError{msg: err.Error()}
	}
	f := fe.Field
	if f == "expiryTime" && req != nil && req.ExpiresIn != "" {
		f = "expiresIn"
	}
	return &fieldError{field: f, msg: fe.Reason()}
}

// parseIdle reads a Go duration ("10m") or an xsd:duration ("PT10M").
func parseIdle(v string) (group.Duration, error) {
	if strings.HasPrefix(v, "P") {
		d, err := soap.ParseDuration(v)
		if err != nil || d.Negative || d.IsZero() {
			return group.Duration{}, errors.New("must be a positive duration")
		}
		return d, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return group.Duration{}, errors.New("must be a positive duration such as \"10m\" or \"PT10M\"")
	}
	return group.Fixed(d), nil
}

func (g *Gateway) handleSubmit(w http.ResponseWriter, r *http.Request) {
	rb := g.readBody(w, r, false)
	if rb == nil {
		return
	}
	defer rb.Release()
	body := rb.Bytes
	if batch, ok := batchForm(body); ok {
		g.handleSubmitBatch(w, r, body, batch)
		return
	}
	var req SubmitRequest
	if !decodeJSON(w, body, &req) {
		return
	}
	sub, ferr := g.submission(&req, g.Now())
	if ferr != nil {
		writeJSON(w, http.StatusBadRequest, errorJSON{Error: ferr.Error(), Field: ferr.field})
		return
	}
	key, err := idempotencyKey(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	g.onSubmitNode(w, r, body, req.Group, func(n *rmp.Node) {
		if key == "" {
			g.submit(w, r, n, sub)
			return
		}
		g.submitOnce(w, r, n, sub, key, requestPrint(&req))
	})
}

// submitOnce is submit under an Idempotency-Key: the key's first 202 is
// answered again for the same request, 422 for another, 409 while the
// first is in progress. The key is recorded where the message is
// submitted (a group key's shard, with -store etcd), after the message is
// durable and before the 202.
func (g *Gateway) submitOnce(w http.ResponseWriter, r *http.Request, n *rmp.Node, sub rmp.Submission, key, print string) {
	ans, ok, err := g.idem.begin(key, print, g.Now())
	switch {
	case errors.Is(err, errKeyDifferent):
		writeError(w, http.StatusUnprocessableEntity, err.Error())
		return
	case err != nil:
		writeError(w, http.StatusConflict, err.Error())
		return
	case ok:
		writeJSON(w, http.StatusAccepted, ans)
		return
	}
	status, answer := g.submitted(r, n, sub)
	var first *SubmitAnswer
	if a, ok := answer.(SubmitAnswer); ok && status == http.StatusAccepted {
		first = &a
	}
	if err := g.idem.done(key, print, first, g.Now()); err != nil && g.opts.Logger != nil {
		// The message is accepted all the same; a retry may submit it again.
		g.opts.Logger.Error("recording an Idempotency-Key failed", "err", err)
	}
	writeJSON(w, status, answer)
}

// onSubmitNode runs fn on the node that sends for group key (the node of
// the key's shard with -store etcd, forwarding the request to its holder);
// a singleton ("") goes to any node held here.
func (g *Gateway) onSubmitNode(w http.ResponseWriter, r *http.Request, body []byte, key string, fn func(*rmp.Node)) {
	if key != "" {
		// One sender per group key: the key's shard, wherever it is held.
		g.onShard(w, r, body, g.place.keyShard(key), fn)
		return
	}
	ns := g.nodes()
	if len(ns) == 0 {
		writeError(w, http.StatusServiceUnavailable, "this instance holds no shard yet; try again")
		return
	}
	fn(ns[g.nextAny.Add(1)%uint64(len(ns))].node)
}

// submit hands sub to node n and answers the submit.
func (g *Gateway) submit(w http.ResponseWriter, r *http.Request, n *rmp.Node, sub rmp.Submission) {
	status, answer := g.submitted(r, n, sub)
	writeJSON(w, status, answer)
}

// submitted hands sub to node n: the answer's status and JSON body.
func (g *Gateway) submitted(r *http.Request, n *rmp.Node, sub rmp.Submission) (int, any) {
	ref, err := n.Submit(r.Context(), sub)
	if err != nil {
		return submitRefusal(err)
	}
	return http.StatusAccepted, submitAnswer(ref)
}

func submitAnswer(ref sender.MessageRef) SubmitAnswer {
	return SubmitAnswer{ID: MessageID(ref), GroupID: ref.GroupID, Number: numberJSON(!ref.Singleton, ref.Number)}
}

// submitRefusal is the status and body of a submission the node refused.
func submitRefusal(err error) (int, errorJSON) {
	switch {
	case errors.Is(err, sender.ErrGroupAborted):
		return http.StatusConflict, errorJSON{Error: err.Error()}
	case errors.Is(err, sender.ErrBoundsFull):
		return http.StatusServiceUnavailable, errorJSON{Error: err.Error()}
	case errors.Is(err, sender.ErrGroupParams):
		return http.StatusBadRequest, errorJSON{Error: err.Error(), Field: "group"}
	case errors.Is(err, sender.ErrInvalidSubmission):
		return http.StatusBadRequest, errorJSON{Error: err.Error(), Field: submitFieldError(nil, err).field}
	default:
		return http.StatusServiceUnavailable, errorJSON{Error: err.Error()}
	}
}
