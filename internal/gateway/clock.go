package gateway

import (
	"net/http"
	"time"
)

// ClockRequest is the body of POST /v1/clock: exactly one of Advance (a Go
// duration, not negative) and Set (RFC 3339, not before now).
type ClockRequest struct {
	Advance string `json:"advance"`
	Set     string `json:"set"`
}

// ClockAnswer is the body of both /v1/clock answers.
type ClockAnswer struct {
	Now string `json:"now"`
}

func (g *Gateway) handleClockGet(w http.ResponseWriter, r *http.Request) {
	if g.fake == nil {
		writeError(w, http.StatusNotFound, "the clock endpoint needs -fake-clock")
		return
	}
	writeJSON(w, http.StatusOK, ClockAnswer{Now: apiTime(g.Now())})
}

// handleClockPost moves the fake clock, then waits until the node has
// processed every timer due by then (Node.Sync).
func (g *Gateway) handleClockPost(w http.ResponseWriter, r *http.Request) {
	if g.fake == nil {
		writeError(w, http.StatusNotFound, "the clock endpoint needs -fake-clock")
		return
	}
	var req ClockRequest
	if !g.readJSON(w, r, &req) {
		return
	}
	if (req.Advance == "") == (req.Set == "") {
		writeError(w, http.StatusBadRequest, "give exactly one of advance and set")
		return
	}
	g.clockMu.Lock()
	defer g.clockMu.Unlock()
	if req.Advance != "" {
		d, err := time.ParseDuration(req.Advance)
		if err != nil || d < 0 {
			writeJSON(w, http.StatusBadRequest, errorJSON{Error: "advance must be a non-negative Go duration such as \"30s\"", Field: "advance"})
			return
		}
		g.fake.Add(d)
	} else {
		t, err := time.Parse(time.RFC3339Nano, req.Set)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errorJSON{Error: "set must be RFC 3339", Field: "set"})
			return
		}
		if t.Before(g.Now()) {
			writeJSON(w, http.StatusBadRequest, errorJSON{Error: "the clock does not go back", Field: "set"})
			return
		}
		g.fake.Set(t.UTC())
	}
	for _, sn := range g.nodes() {
		if err := sn.node.Sync(r.Context()); err != nil {
			writeError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
	}
	writeJSON(w, http.StatusOK, ClockAnswer{Now: apiTime(g.Now())})
}
