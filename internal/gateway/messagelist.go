package gateway

import (
	"net/http"
	"strconv"
	"strings"
)

// messagesJSON is the body of GET /v1/messages (#21): the handled
// outcomes this instance recorded (-max-records), newest first.
type messagesJSON struct {
	Messages []MessageStatus `json:"messages"`
	Total    int             `json:"total"`
	Next     *string         `json:"next"`
}

// handleMessages lists recorded outcomes: ?state=acknowledged|failed,
// ?reason=, ?group= (a group id), ?q= (a substring of the message or group
// id), paged by ?limit= [100, at most 1000] and ?after= (the next of the
// previous page).
func (g *Gateway) handleMessages(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	state, reason, gid, q := v.Get("state"), v.Get("reason"), v.Get("group"), v.Get("q")
	switch state {
	case "", "acknowledged", "failed":
	default:
		writeError(w, http.StatusBadRequest, "state must be acknowledged or failed")
		return
	}
	limit := defaultGroupPage
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxGroupPage {
			writeError(w, http.StatusBadRequest, "limit must be 1 to "+strconv.Itoa(maxGroupPage))
			return
		}
		limit = n
	}
	match := func(rec *Record) bool {
		switch {
		case state != "" && rec.Outcome != state, reason != "" && rec.Reason != reason,
			gid != "" && rec.GroupID != gid:
			return false
		}
		return q == "" || strings.Contains(rec.ID, q) || strings.Contains(rec.GroupID, q)
	}
	recs, next, total := g.records.list(match, v.Get("after"), limit)
	out := messagesJSON{Messages: make([]MessageStatus, len(recs)), Total: total}
	for i, rec := range recs {
		out.Messages[i] = recordStatus(rec)
		out.Messages[i].Response = "" // GET /v1/messages/{id} has it
	}
	if next != "" {
		out.Next = &next
	}
	writeJSON(w, http.StatusOK, out)
}
