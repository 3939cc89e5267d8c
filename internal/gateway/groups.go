package gateway

import (
	"net/http"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/admin"
	"github.com/wsrkit/wsrkit/rmp/group"
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
	return j
}

func roleName(r group.Role) string {
	if r == group.RoleSender {
		return "sender"
	}
	return "receiver"
}

// roles reads ?role=: both roles when absent; ok false for another value.
func roles(r *http.Request) (admin.Roles, bool) {
	switch r.URL.Query().Get("role") {
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
	roles, ok := roles(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "role must be sender or receiver")
		return
	}
	// With -store etcd: the groups of the shards this instance holds.
	out := []GroupJSON{}
	for _, sn := range g.nodes() {
		err := sn.node.Admin(r.Context(), func(a admin.Engine, _ time.Time) {
			for _, v := range admin.Groups(a, roles) {
				out = append(out, groupJSON(v))
			}
		})
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"groups": out})
}

// handleGroup answers one group: the receiving side's newest generation
// first, then the sending group, unless ?role= says which.
func (g *Gateway) handleGroup(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("groupId")
	roles, ok := roles(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "role must be sender or receiver")
		return
	}
	g.onShard(w, r, nil, g.shardOf(id), func(n *rmp.Node) {
		var v admin.GroupView
		found := false
		err := n.Admin(r.Context(), func(a admin.Engine, _ time.Time) {
			v, found = admin.Group(a, id, roles)
		})
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		if !found {
			writeError(w, http.StatusNotFound, "unknown group "+id)
			return
		}
		writeJSON(w, http.StatusOK, groupJSON(v))
	})
}

// handleGroupDelete terminates and removes a group: on the sending side
// its unacknowledged messages fail with group-aborted; on the receiving
// side held messages are discarded with GroupAborted faults (D13).
func (g *Gateway) handleGroupDelete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("groupId")
	roles, ok := roles(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "role must be sender or receiver")
		return
	}
	g.onShard(w, r, nil, g.shardOf(id), func(n *rmp.Node) {
		found := false
		err := n.Admin(r.Context(), func(a admin.Engine, now time.Time) {
			found = admin.Abort(a, now, id, roles)
		})
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		if !found {
			writeError(w, http.StatusNotFound, "unknown group "+id)
			return
		}
		if roles&admin.Receiving != 0 && g.inbox != nil {
			g.inbox.dropGroup(id)
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
