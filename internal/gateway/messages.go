package gateway

import (
	"net/http"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
)

// MessageStatus is the body of GET /v1/messages/{id}.
type MessageStatus struct {
	ID       string  `json:"id"`
	GroupID  string  `json:"groupId"`
	Number   *uint64 `json:"number"`
	State    string  `json:"state"`
	Reason   string  `json:"reason"`
	Fault    string  `json:"fault"`
	Attempts int     `json:"attempts"`
}

// handleMessage answers from the sending RMP while it holds the message,
// else from the outcome record kept once its outcome was handled; a
// message known to neither is 404 (no state is made up).
func (g *Gateway) handleMessage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ref, err := ParseMessageID(id)
	if err != nil {
		writeError(w, http.StatusNotFound, "unknown message "+id)
		return
	}
	st := MessageStatus{ID: id, GroupID: ref.GroupID, Number: numberJSON(!ref.Singleton, ref.Number)}
	var view rmp.MessageView
	held := false
	if err := g.node.Inspect(r.Context(), func(e *rmp.Engine, _ time.Time) {
		view, held = e.SendingMessage(ref)
	}); err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	rec, recorded := g.records.get(id)
	switch {
	case recorded && (rec.Outcome == "failed" || !held || view.State != "pending"):
		// A handled outcome is final unless a later fault fails an
		// acknowledged message (D12, D13), which replaces the record.
		st.State, st.Reason, st.Fault = rec.Outcome, rec.Reason, rec.Fault
		st.Attempts = view.Attempts
	case held:
		st.State, st.Attempts = view.State, view.Attempts
	default:
		writeError(w, http.StatusNotFound, "unknown message "+id)
		return
	}
	writeJSON(w, http.StatusOK, st)
}
