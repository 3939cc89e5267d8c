package gateway

import (
	"net/http"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/admin"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// GroupJSON is one group of GET /v1/groups.
type GroupJSON struct {
	GroupID      string      `json:"groupId"`
	Generation   uint64      `json:"generation"`
	Role         string      `json:"role"`
	State        string      `json:"state"`
	Ranges       [][2]uint64 `json:"ranges"`
	Held         int         `json:"held"`
	LastNumber   *uint64     `json:"lastNumber"`
	NextDeadline *string     `json:"nextDeadline"`
	// LastActivity is the last message received (receiver) or sent,
	// resends included (sender); null when unknown (#21).
	LastActivity *string `json:"lastActivity"`

	// Missing are the numbers below the highest received or acknowledged
	// one that are not (the gaps); omitted when none (#21).
	Missing [][2]uint64 `json:"missing,omitempty"`
	// Only in GET /v1/groups/{groupId} (#21): a sending group's
	// destination and its first unacknowledged messages (pendingTotal in
	// all).
	To           string        `json:"to,omitempty"`
	Pending      []PendingJSON `json:"pending,omitempty"`
	PendingTotal int           `json:"pendingTotal,omitempty"`
}

// PendingJSON is one unacknowledged message of a sending group.
type PendingJSON struct {
	ID       string  `json:"id"`
	Number   *uint64 `json:"number"`
	Attempts int     `json:"attempts"`
	// NextAttempt is the next resend, or after the last one the instant
	// the message fails (retries-exhausted).
	NextAttempt string `json:"nextAttempt"`
	ExpiryTime  string `json:"expiryTime"`
	LastError   string `json:"lastError,omitempty"`
}

// maxPendingShown bounds the pending messages one group answer lists.
const maxPendingShown = 100

// groupsJSON is the body of GET /v1/groups: total counts the groups that
// match the filters; next is the after= of the next page, null on the last.
type groupsJSON struct {
	Groups []GroupJSON `json:"groups"`
	Total  int         `json:"total"`
	Next   *string     `json:"next"`
}

func groupJSON(v admin.GroupView) GroupJSON {
	j := GroupJSON{
		GroupID:    v.GroupID,
		Generation: v.Generation,
		Role:       roleName(v.Role),
		State:      "open",
		Ranges:     make([][2]uint64, 0, len(v.Ranges)),
		Held:       v.Held,
		LastNumber: numberJSON(v.HasLast, v.LastNumber),
	}
	if v.Terminated {
		j.State = "terminated"
	}
	for _, r := range v.Ranges {
		j.Ranges = append(j.Ranges, [2]uint64{r.From, r.To})
	}
	if !v.NextDeadline.IsZero() {
		s := apiTime(v.NextDeadline)
		j.NextDeadline = &s
	}
	j.LastActivity = optTime(v.LastActivity)
	j.Missing = missing(j.Ranges)
	return j
}

// missing is the complement of ranges below their highest number.
func missing(ranges [][2]uint64) [][2]uint64 {
	var out [][2]uint64
	next := uint64(0)
	for _, r := range ranges {
		if r[0] > next {
			out = append(out, [2]uint64{next, r[0] - 1})
		}
		next = r[1] + 1
	}
	return out
}

func roleName(r group.Role) string {
	if r == group.RoleSender {
		return "sender"
	}
	return "receiver"
}

// roles reads ?role=: both roles when absent; ok false for another value.
func roles(r *http.Request) (admin.Roles, bool) { return parseRoles(r.URL.Query().Get("role")) }

// parseRoles reads a role= value.
func parseRoles(role string) (admin.Roles, bool) {
	switch role {
	case "":
		return admin.Receiving | admin.Sending, true
	case "receiver":
		return admin.Receiving, true
	case "sender":
		return admin.Sending, true
	}
	return 0, false
}

func (g *Gateway) handleGroups(w http.ResponseWriter, r *http.Request) {
	q, err := parseGroupQuery(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	// With -store etcd: the groups of the shards this instance holds.
	sel := &selection{q: &q}
	for _, sn := range g.nodes() {
		err := sn.node.Admin(r.Context(), func(a admin.Engine, _ time.Time) {
			sel.selectGroups(a)
		})
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
	}
	writeJSON(w, http.StatusOK, sel.answer())
}

// answer is the body of the selected page.
func (s *selection) answer() groupsJSON {
	page, next := s.page()
	out := groupsJSON{Groups: make([]GroupJSON, len(page)), Total: s.total}
	for i, row := range page {
		out.Groups[i] = groupJSON(row.v)
	}
	if next != "" {
		out.Next = &next
	}
	return out
}

// handleGroup answers one group: the receiving side's newest generation
// first, then the sending group, unless ?role= says which.
func (g *Gateway) handleGroup(w http.ResponseWriter, r *http.Request) {
	var j GroupJSON
	g.onGroup(w, r, func(a admin.Engine, _ time.Time, id string, roles admin.Roles) bool {
		v, found := admin.Group(a, id, roles)
		if found {
			j = groupDetail(a, v)
		}
		return found
	}, func(string, admin.Roles) { writeJSON(w, http.StatusOK, j) })
}

// groupDetail is groupJSON with what only the one-group answer carries.
func groupDetail(a admin.Engine, v admin.GroupView) GroupJSON {
	j := groupJSON(v)
	if v.Role != group.RoleSender {
		return j
	}
	if gi, ok := a.SendingGroup(v.GroupID); ok {
		j.To = gi.To
		ps, total := a.SendingPending(v.GroupID, maxPendingShown)
		j.PendingTotal = total
		for _, p := range ps {
			ref := sender.MessageRef{GroupID: v.GroupID, Number: p.Number, Singleton: gi.Singleton}
			j.Pending = append(j.Pending, PendingJSON{ID: MessageID(ref), Number: numberJSON(!gi.Singleton, p.Number),
				Attempts: p.Attempts, NextAttempt: apiTime(p.NextAt), ExpiryTime: apiTime(p.Expiry), LastError: p.LastError})
		}
	}
	return j
}

// handleGroupDelete terminates and removes a group: on the sending side
// its unacknowledged messages fail with group-aborted; on the receiving
// side held messages are discarded with GroupAborted faults (D13).
func (g *Gateway) handleGroupDelete(w http.ResponseWriter, r *http.Request) {
	g.onGroup(w, r, func(a admin.Engine, now time.Time, id string, roles admin.Roles) bool {
		return admin.Abort(a, now, id, roles)
	}, func(id string, roles admin.Roles) {
		if roles&admin.Receiving != 0 && g.inbox != nil {
			g.inbox.dropGroup(id)
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// onGroup serves a request about the path's group on the node holding it:
// find runs in its engine and reports whether the group is there; then
// found answers. A bad role= is a 400, an engine that does not answer a
// 503, a group not found a 404.
func (g *Gateway) onGroup(w http.ResponseWriter, r *http.Request,
	find func(a admin.Engine, now time.Time, id string, roles admin.Roles) bool,
	found func(id string, roles admin.Roles)) {
	id := r.PathValue("groupId")
	roles, ok := roles(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "role must be sender or receiver")
		return
	}
	g.onShard(w, r, nil, g.shardOf(id), func(n *rmp.Node) {
		ok := false
		err := n.Admin(r.Context(), func(a admin.Engine, now time.Time) {
			ok = find(a, now, id, roles)
		})
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		if !ok {
			writeError(w, http.StatusNotFound, "unknown group "+id)
			return
		}
		found(id, roles)
	})
}
