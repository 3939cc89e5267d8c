package gateway

import (
	"net/http"
	"time"

	"github.com/wsrkit/wsrkit/rmp/admin"
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
	// LastError says why the last transmission of a pending message brought
	// no ack; omitted otherwise.
	LastError string `json:"lastError,omitempty"`
	// Response is the business response of an acknowledged message (R73).
	Response string `json:"response,omitempty"`
	// At is when the outcome was recorded; omitted before one was (#21).
	At string `json:"at,omitempty"`
}

// handleMessage answers from the sending RMP while it knows the message,
// else from the outcome record kept once its outcome was handled; a
// message known to neither is 404 (no state is made up).
func (g *Gateway) handleMessage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ref, err := ParseMessageID(id)
	if err != nil {
		writeError(w, http.StatusNotFound, "unknown message "+id)
		return
	}
	n, holder := g.routeShard(g.shardOf(ref.GroupID))
	rec, recorded := g.records.get(id)
	if n == nil {
		// Another instance holds the shard; an outcome this instance
		// handled before the shard moved is in its local records only.
		if holder != "" && r.Header.Get(HeaderForwardedBy) == "" {
			status, hdr, answer, err := g.forwardTo(r.Context(), r, nil, holder)
			if err == nil && (status != http.StatusNotFound || !recorded) {
				w.Header().Set("Content-Type", hdr.Get("Content-Type"))
				w.WriteHeader(status)
				w.Write(answer)
				return
			}
		}
		if !recorded {
			writeError(w, http.StatusServiceUnavailable, "the message's shard is held elsewhere and its holder did not answer; try again")
			return
		}
		g.writeRecord(w, id, rec)
		return
	}
	st := MessageStatus{ID: id, GroupID: ref.GroupID, Number: numberJSON(!ref.Singleton, ref.Number)}
	var view admin.MessageView
	held := false
	if err := n.Admin(r.Context(), func(a admin.Engine, _ time.Time) {
		view, held = admin.Message(a, ref)
	}); err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	switch {
	case held:
		// The sending RMP's view is the newest while it has one (D27: an
		// outcome not yet handled is still in its outbox).
		st.State, st.Attempts, st.LastError, st.Response = view.State, view.Attempts, view.LastError, string(view.Response)
		if view.State == "failed" {
			st.Reason = ReasonString(view.Reason)
			st.Fault = faultString(view.Reason, view.Fault, view.SOAPFault)
		}
		// Once the outcome is handled, the sending RMP keeps the state and
		// reason of a message whose group stays for late faults (D13) but
		// not its fault code or attempts: the record of that same outcome
		// has them.
		if recorded && rec.Outcome == st.State && rec.Reason == st.Reason {
			if st.Fault == "" {
				st.Fault = rec.Fault
			}
			if st.Attempts == 0 {
				st.Attempts = rec.Attempts
			}
			if st.Response == "" {
				st.Response = rec.Response
			}
			st.At = rec.At
		}
	case recorded:
		st.State, st.Reason, st.Fault, st.Attempts, st.Response, st.At = rec.Outcome, rec.Reason, rec.Fault, rec.Attempts, rec.Response, rec.At
	default:
		writeError(w, http.StatusNotFound, "unknown message "+id)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// writeRecord answers GET /v1/messages/{id} from an outcome record.
func (g *Gateway) writeRecord(w http.ResponseWriter, id string, rec Record) {
	writeJSON(w, http.StatusOK, recordStatus(rec))
}

func recordStatus(rec Record) MessageStatus {
	return MessageStatus{ID: rec.ID, GroupID: rec.GroupID, Number: rec.Number, State: rec.Outcome, Reason: rec.Reason,
		Fault: rec.Fault, Attempts: rec.Attempts, Response: rec.Response, At: rec.At}
}
