package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/httpbody"
)

// With -store etcd a request about one group goes to the node of the
// group's shard: here when this instance holds it, else forwarded once to
// the holder's -advertise-url, else answered 503 (a sender treats it as no
// ack and resends, D26; R36).

// HeaderForwardedBy marks a request one instance forwarded to another,
// naming the forwarder; a forwarded request is never forwarded again.
const HeaderForwardedBy = "WSRKit-Forwarded-By"

// shardParam is the query parameter of a shard node's ReplyTo: callbacks
// name their shard, so they route without parsing the envelope.
const shardParam = "shard"

// shardNode is a held shard and its node.
type shardNode struct {
	shard int
	node  *rmp.Node
}

// nodes returns the nodes this instance runs, in shard order.
func (g *Gateway) nodes() []shardNode { return g.place.nodes() }

// shardOf is the shard of a group id (0 with -store pebble).
func (g *Gateway) shardOf(groupID string) int { return g.place.shardOf(groupID) }

// routeShard returns the local node of a shard, or the URL of the
// instance holding it; neither when its holder is unknown.
func (g *Gateway) routeShard(shard int) (*rmp.Node, string) { return g.place.route(shard) }

// onShard runs fn with the local node of shard, or forwards the request
// (whose body is body) to the shard's holder, or answers 503.
func (g *Gateway) onShard(w http.ResponseWriter, r *http.Request, body []byte, shard int, fn func(*rmp.Node)) {
	n, url := g.routeShard(shard)
	switch {
	case n != nil:
		fn(n)
	case url != "" && r.Header.Get(HeaderForwardedBy) == "":
		g.relay(w, r, body, url)
	default:
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("shard %d is not held here and its holder is unknown or moving; try again", shard))
	}
}

// relay forwards the request to base and copies the answer back; an
// unreachable holder is 503.
func (g *Gateway) relay(w http.ResponseWriter, r *http.Request, body []byte, base string) {
	status, hdr, answer, err := g.forwardTo(r.Context(), r, body, base)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	for _, k := range []string{"Content-Type", "Allow", HeaderMessageID} {
		if v := hdr.Get(k); v != "" {
			w.Header().Set(k, v)
		}
	}
	w.WriteHeader(status)
	w.Write(answer)
}

// forwardTo sends the request to the same path at base, marked with
// HeaderForwardedBy, and reads the answer within -max-body.
func (g *Gateway) forwardTo(ctx context.Context, r *http.Request, body []byte, base string) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, r.Method, base+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	for _, k := range []string{"Content-Type", "SOAPAction", "Accept", "Authorization"} {
		if v := r.Header.Get(k); v != "" {
			req.Header.Set(k, v)
		}
	}
	g.auth.sign(req, r, g.cfg.NodeID, body, time.Now())
	g.forwards.Add(1)
	resp, err := g.forward.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("forwarding to the shard's holder: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusForbidden && resp.Header.Get(HeaderForwardRefused) != "" {
		g.log.Warn("the shard's holder refused a forwarded request: the instances need the same -cluster-secret-file, or certificates of -cluster-ca", "holder", base)
		return 0, nil, nil, errors.New("the shard's holder refused this instance's forwarded request (instance authentication: -cluster-ca, -cluster-secret-file)")
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, g.cfg.MaxBody+1))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("reading the shard holder's answer: %w", err)
	}
	if int64(len(answer)) > g.cfg.MaxBody {
		return 0, nil, nil, errors.New("the shard holder's answer exceeds -max-body")
	}
	return resp.StatusCode, resp.Header, answer, nil
}

// readBody reads a request body with httpbody.Read: decoded, within
// -max-body and -max-inflight-bytes. It answers a refusal itself (400,
// 413, 415, 503; as JSON, or as plain text for the RMP endpoint) and
// returns nil then; the caller releases the body once it has answered.
func (g *Gateway) readBody(w http.ResponseWriter, r *http.Request, plain bool) *httpbody.Body {
	if b, ok := r.Context().Value(forwardedBodyKey{}).(*httpbody.Body); ok {
		return b // read and authenticated by forwardGate
	}
	body, err := httpbody.Read(w, r, g.bodyLimits())
	if err == nil {
		return body
	}
	if plain {
		httpbody.WriteError(w, err)
		return nil
	}
	be := &httpbody.Error{Status: http.StatusBadRequest, Reason: err.Error()}
	errors.As(err, &be)
	be.SetHeaders(w.Header())
	writeError(w, be.Status, be.Reason)
	return nil
}

// bodyLimits are -max-body and -max-inflight-bytes.
func (g *Gateway) bodyLimits() httpbody.Limits {
	return httpbody.Limits{MaxBody: g.cfg.MaxBody, Budget: g.bodies}
}

// readRequest reads a SOAP request with rmp.ReadRequest: as readBody,
// and an envelope past an element, depth or attribute limit refused as
// the limit is crossed (the Inbound carries its fault; the Body is nil).
// It answers a refusal of the body itself (plain text) and returns nil.
func (g *Gateway) readRequest(w http.ResponseWriter, r *http.Request) (*rmp.Inbound, *httpbody.Body) {
	if b, ok := r.Context().Value(forwardedBodyKey{}).(*httpbody.Body); ok {
		// Read and authenticated by forwardGate, which releases it.
		return rmp.ParseRequest(r.Header, b.Bytes, g.parseOptions()), b
	}
	in, body, err := rmp.ReadRequest(w, r, g.bodyLimits(), g.parseOptions())
	if err != nil {
		httpbody.WriteError(w, err)
		return nil, nil
	}
	return in, body
}

// handleRMP is the RMP endpoint, served as the placement says.
func (g *Gateway) handleRMP(w http.ResponseWriter, r *http.Request) { g.place.serveRMP(g, w, r) }

// serveSharded is the RMP endpoint with -store etcd: it finds the
// request's shard from ?shard= (a callback to a shard node's ReplyTo) or
// from the first groupId of its wsrm headers, and serves it there. An
// envelope that names no group is answered by any local node (a fault
// about it).
func (g *Gateway) serveSharded(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "the RMP endpoint takes POST only (R83)", http.StatusMethodNotAllowed)
		return
	}
	// Parsed once: the groupId picks the shard and the same parse is
	// served there; only a forwarded request is parsed again by its holder.
	in, rb := g.readRequest(w, r)
	if in == nil {
		return
	}
	defer rb.Release() // when not served here (a node releases it once taken)
	var body []byte
	shard, ok := 0, false
	if rb != nil {
		body = rb.Bytes
		shard, ok = g.inboundShard(r, in)
	}
	if !ok { // no group, or refused while read: answered here
		ns := g.nodes()
		if len(ns) == 0 {
			http.Error(w, "this instance holds no shard yet; try again", http.StatusServiceUnavailable)
			return
		}
		shard = ns[0].shard
	}
	g.onShard(w, r, body, shard, func(n *rmp.Node) {
		n.ServeInbound(w, asOriginal(r, in), in)
	})
}

// inboundShard is the shard an RMP request belongs to: ?shard= (a callback
// to a shard node's ReplyTo), else its first groupId; ok false when it
// names none (malformed, or no wsrm header).
func (g *Gateway) inboundShard(r *http.Request, in *rmp.Inbound) (int, bool) {
	if v := r.URL.Query().Get(shardParam); v != "" {
		if s, err := strconv.Atoi(v); err == nil && s >= 0 && s < g.cfg.Shards {
			return s, true
		}
	}
	gid := in.GroupID()
	if gid == "" {
		return 0, false
	}
	return g.shardOf(gid), true
}
