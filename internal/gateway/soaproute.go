package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
)

// A transparent proxy route (-route NAME=URL) puts the gateway between an
// unmodified SOAP client and a remote WS-R endpoint: POST /soap/NAME takes
// the client's plain SOAP 1.1 or 1.2 request, sends its Body reliably
// (AckRequested, DuplicateElimination, Response pattern; ordered within a
// WSRKit-Group-Key), keeps its action, and answers with the peer's business
// response once the message is acknowledged — so the client sees the
// service it always saw (SPEC-NOTES "Transparent routes").

// Headers of a route exchange.
const (
	// HeaderGroupKey, on a route request, puts the message in the ordered,
	// exactly-once group of that key (the submit API's "group").
	HeaderGroupKey = "WSRKit-Group-Key"
	// HeaderMessageID, on every route answer once the message is stored,
	// is its id for GET /v1/messages/{id}.
	HeaderMessageID = "WSRKit-Message-Id"
)

// routeWaiters hands each handled outcome to the route requests waiting for
// it, by message id.
type routeWaiters struct {
	mu sync.Mutex
	m  map[string][]chan sender.Outcome
}

func (rw *routeWaiters) add(id string) chan sender.Outcome {
	ch := make(chan sender.Outcome, 1)
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.m == nil {
		rw.m = map[string][]chan sender.Outcome{}
	}
	rw.m[id] = append(rw.m[id], ch)
	return ch
}

func (rw *routeWaiters) remove(id string, ch chan sender.Outcome) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	ws := rw.m[id]
	for i, c := range ws {
		if c == ch {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(rw.m, id)
	} else {
		rw.m[id] = ws
	}
}

// wake gives o to every request waiting for its message.
func (rw *routeWaiters) wake(id string, o sender.Outcome) {
	rw.mu.Lock()
	ws := rw.m[id]
	delete(rw.m, id)
	rw.mu.Unlock()
	for _, ch := range ws {
		ch <- o
	}
}

// handleRoute is POST /soap/{name}.
func (g *Gateway) handleRoute(w http.ResponseWriter, r *http.Request) {
	to, ok := g.cfg.Routes[r.PathValue("name")]
	if !ok {
		http.Error(w, "no such route (see -route)", http.StatusNotFound)
		return
	}
	// Read as /rmp reads a request: gzip/deflate decoded, within
	// -max-inflight-bytes, media type, charset, action, envelope.
	in, rb := g.readRequest(w, r)
	if in == nil {
		return
	}
	defer rb.Release()
	env, v, err := in.Envelope()
	if errors.Is(err, soap.ErrContentType) {
		http.Error(w, err.Error(), http.StatusUnsupportedMediaType)
		return
	}
	if err != nil {
		routeFault(w, v, soap.FaultCode(v, true), http.StatusBadRequest, "the request is not a SOAP envelope wsrkit can read: "+err.Error())
		return
	}
	if env.Request != nil || env.Response != nil || env.PollRequest != nil {
		routeFault(w, v, soap.FaultCode(v, true), http.StatusBadRequest, "the request already carries WS-Reliability headers: POST it to /rmp")
		return
	}
	for _, h := range env.OtherHeaders() {
		if soap.MustUnderstand(h, v) {
			// The route forwards the Body only, so it cannot honour it.
			routeFault(w, v, "MustUnderstand", http.StatusInternalServerError,
				fmt.Sprintf("header block {%s}%s is not understood by the wsrkit route (only the Body is forwarded)", h.NamespaceURI(), h.Tag))
			return
		}
	}
	action := in.Action()
	if err := soap.CheckAction(action, maxActionBytes); err != nil {
		routeFault(w, v, soap.FaultCode(v, true), http.StatusBadRequest, "action: "+err.Error())
		return
	}
	key := r.Header.Get(HeaderGroupKey)
	sub := rmp.Submission{
		To: to, GroupKey: key, Action: action, Pattern: group.ReplyResponse,
		Flags:   group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: key != ""},
		Payload: bytes.TrimSpace(env.BodyContent()),
		Version: v,
	}
	// Given back once submitted: the exchange may wait -route-timeout.
	g.onSubmitNode(w, r, rb.Bytes, key, func(n *rmp.Node) { g.routeExchange(w, r, n, v, sub, rb.Release) })
}

// maxActionBytes bounds an action taken from a client.
const maxActionBytes = 4096

// routeExchange submits sub on n and answers once its outcome is in, or
// with a 504 fault after -route-timeout.
func (g *Gateway) routeExchange(w http.ResponseWriter, r *http.Request, n *rmp.Node, v soap.Version, sub rmp.Submission, submitted func()) {
	ref, err := n.Submit(r.Context(), sub)
	submitted()
	if err != nil {
		status := http.StatusServiceUnavailable
		if errors.Is(err, sender.ErrInvalidSubmission) || errors.Is(err, sender.ErrGroupParams) {
			status = http.StatusBadRequest
		}
		routeFault(w, v, soap.FaultCode(v, status == http.StatusBadRequest), status, "not accepted for reliable sending: "+err.Error())
		return
	}
	id := MessageID(ref)
	w.Header().Set(HeaderMessageID, id)
	ch := g.waiters.add(id)
	defer g.waiters.remove(id, ch)
	// An outcome handled before the waiter was added is in the records.
	if rec, ok := g.records.get(id); ok {
		g.answerRoute(w, v, id, rec.Outcome == "acknowledged", []byte(rec.Response), rec.Reason, rec.Fault)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), g.cfg.RouteTimeout)
	defer cancel()
	select {
	case o := <-ch:
		j := outcomeJSON(o)
		g.answerRoute(w, v, id, o.Kind == sender.Acknowledged, o.Response, j.Reason, j.Fault)
	case <-ctx.Done():
		if r.Context().Err() != nil {
			return // the client went away; the message is still sent
		}
		routeFault(w, v, soap.FaultCode(v, false), http.StatusGatewayTimeout,
			fmt.Sprintf("no acknowledgement within %s for message %s; wsrkit keeps resending it: GET /v1/messages/%s", g.cfg.RouteTimeout, id, id))
	}
}

// answerRoute answers a route client with its message's outcome: the
// business response (or business fault) of an acknowledged message, 202
// for one without (a one-way operation), a Server fault for a failure.
func (g *Gateway) answerRoute(w http.ResponseWriter, v soap.Version, id string, acked bool, response []byte, reason, fault string) {
	if !acked {
		msg := fmt.Sprintf("message %s failed: %s", id, reason)
		if fault != "" {
			msg += " (" + fault + ")"
		}
		routeFault(w, v, soap.FaultCode(v, false), http.StatusInternalServerError, msg)
		return
	}
	if len(response) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	b, err := soap.AppendEnvelope(nil, v, soap.Headers{}, 0, response)
	if err != nil {
		routeFault(w, v, soap.FaultCode(v, false), http.StatusInternalServerError, "rendering the business response: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", soap.ContentType(v, ""))
	w.WriteHeader(soap.BusinessStatus(v, response))
	w.Write(b)
}

// routeFault answers a route client with a SOAP Fault of its version with
// SOAP code code (soap.FaultCode, MustUnderstand).
func routeFault(w http.ResponseWriter, v soap.Version, code string, status int, reason string) {
	if !v.Valid() {
		v = soap.SOAP11
	}
	b, err := soap.AppendPlainFault(nil, v, code, reason)
	if err != nil {
		http.Error(w, reason, status)
		return
	}
	w.Header().Set("Content-Type", soap.ContentType(v, ""))
	w.WriteHeader(status)
	w.Write(b)
}
