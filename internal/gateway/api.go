package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/admin"
)

// routes wires the HTTP API (README "HTTP API"): the public routes, which
// partners and SOAP clients use, and the admin routes, guarded by the
// -admin-token-file token. One listener serves both unless -admin-listen
// gives the admin routes their own (adminMux).
func (g *Gateway) routes() {
	g.mux = http.NewServeMux()
	g.publicRoutes(g.mux)
	g.adminRoutes(g.mux)
	if g.cfg.AdminListen != "" {
		g.publicMux = http.NewServeMux()
		g.publicRoutes(g.publicMux)
		g.adminMux = http.NewServeMux()
		g.adminRoutes(g.adminMux)
		g.adminMux.Handle("GET /healthz", g.admin(http.HandlerFunc(g.handleHealth)))
		g.publicHandler = g.forwardGate(g.publicMux, g.adminMux)
		g.adminHandler = g.forwardGate(g.adminMux, nil)
	}
	g.handler = g.forwardGate(g.mux, nil)
}

func (g *Gateway) publicRoutes(m *http.ServeMux) {
	var rmpHandler http.Handler = g.limit(http.HandlerFunc(g.handleRMP))
	if g.peerAllow != nil {
		rmpHandler = g.peerAllow.guard(rmpHandler)
	}
	m.Handle("/rmp", rmpHandler)
	m.HandleFunc("POST /soap/{name}", g.limitFunc(g.handleRoute))
	m.HandleFunc("GET /healthz", g.handleHealth)
}

func (g *Gateway) adminRoutes(m *http.ServeMux) {
	h := func(pattern string, f http.HandlerFunc) { m.Handle(pattern, g.admin(f)) }
	h("POST /v1/messages", g.limitFunc(g.handleSubmit))
	h("GET /v1/messages", g.handleMessages)
	h("GET /v1/messages/{id}", g.handleMessage)
	h("GET /v1/peers", g.handlePeers)
	h("GET /v1/stats", g.handleStats)
	h("GET /v1/inbox", g.handleInbox)
	h("DELETE /v1/inbox/{id}", g.handleInboxDelete)
	h("GET /v1/groups", g.handleGroups)
	h("GET /v1/groups/{groupId}", g.handleGroup)
	h("DELETE /v1/groups/{groupId}", g.handleGroupDelete)
	h("GET /v1/clock", g.handleClockGet)
	h("POST /v1/clock", g.limitFunc(g.handleClockPost))
	if g.cfg.MetricsPublic {
		m.HandleFunc("GET /metrics", g.handleMetrics)
	} else {
		h("GET /metrics", g.handleMetrics)
	}
	if g.cfg.Console {
		// The console authenticates itself (the token as a bearer or its
		// login cookie) and reads the API of this same mux.
		m.Handle("/console/", g.newConsole(m))
	}
}

// limit bounds every request body by -max-body; the node answers 413 for
// /rmp itself, readJSON for the JSON API.
func (g *Gateway) limit(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, g.cfg.MaxBody)
		h.ServeHTTP(w, r)
	})
}

func (g *Gateway) limitFunc(h http.HandlerFunc) http.HandlerFunc {
	return g.limit(h).ServeHTTP
}

// errorJSON is every error body of the JSON API.
type errorJSON struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorJSON{Error: msg})
}

// readJSON decodes a request body into v; it answers a refusal itself and
// returns false then. Unknown fields are ignored.
func (g *Gateway) readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body := g.readBody(w, r, false)
	if body == nil {
		return false
	}
	defer body.Release()
	return decodeJSON(w, body.Bytes, v)
}

// decodeJSON decodes body into v; it answers 400 itself and returns false
// then.
func decodeJSON(w http.ResponseWriter, body []byte, v any) bool {
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			writeJSON(w, http.StatusBadRequest, errorJSON{Error: "malformed JSON: " + err.Error(), Field: te.Field})
			return false
		}
		writeError(w, http.StatusBadRequest, "malformed JSON: "+err.Error())
		return false
	}
	return true
}

func (g *Gateway) handleHealth(w http.ResponseWriter, r *http.Request) {
	for _, sn := range g.nodes() {
		if err := sn.node.Err(); err != nil {
			writeError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		// A round trip through the node's loop proves the store is open.
		if err := sn.node.Admin(r.Context(), func(admin.Engine, time.Time) {}); err != nil {
			writeError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (g *Gateway) handleInbox(w http.ResponseWriter, r *http.Request) {
	if g.inbox == nil {
		writeError(w, http.StatusNotFound, "no inbox: deliveries go to -deliver")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": g.inbox.list()})
}

func (g *Gateway) handleInboxDelete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if g.inbox == nil {
		writeError(w, http.StatusNotFound, "no inbox: deliveries go to -deliver")
		return
	}
	ref, ok := g.inbox.lookup(id)
	if !ok {
		// Another instance may hold the message's shard (and its inbox).
		gid, known := inboxGroup(id)
		if !known {
			writeError(w, http.StatusNotFound, "unknown inbox message "+id)
			return
		}
		g.onShard(w, r, nil, g.shardOf(gid), func(*rmp.Node) {
			writeError(w, http.StatusNotFound, "unknown inbox message "+id)
		})
		return
	}
	n, _ := g.routeShard(g.shardOf(ref.Group.GroupID))
	if n == nil { // the shard was just handed over; its new holder hands the message out again
		writeError(w, http.StatusServiceUnavailable, "the message's shard moved to another instance; read the inbox again")
		return
	}
	if err := n.Confirm(r.Context(), ref, nil); err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	g.inbox.remove(id)
	w.WriteHeader(http.StatusNoContent)
}
