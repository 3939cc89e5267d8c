package gateway

import (
	"net/http"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
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

func groupJSON(v rmp.GroupView) GroupJSON {
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
func roles(r *http.Request) (recv, send, ok bool) {
	switch r.URL.Query().Get("role") {
	case "":
		return true, true, true
	case "receiver":
		return true, false, true
	case "sender":
		return false, true, true
	}
	return false, false, false
}

func (g *Gateway) handleGroups(w http.ResponseWriter, r *http.Request) {
	recv, send, ok := roles(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "role must be sender or receiver")
		return
	}
	// With -store etcd: the groups of the shards this instance holds.
	out := []GroupJSON{}
	for _, sn := range g.nodes() {
		err := sn.node.Inspect(r.Context(), func(e *rmp.Engine, _ time.Time) {
			if recv {
				for _, v := range e.ReceivingGroups() {
					out = append(out, groupJSON(v))
				}
			}
			if send {
				for _, v := range e.SendingGroups() {
					out = append(out, groupJSON(v))
				}
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
	recv, send, ok := roles(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "role must be sender or receiver")
		return
	}
	g.onShard(w, r, nil, g.shardOf(id), func(n *rmp.Node) {
		var v rmp.GroupView
		found := false
		err := n.Inspect(r.Context(), func(e *rmp.Engine, _ time.Time) {
			if recv {
				v, found = e.ReceivingGroupView(id)
			}
			if !found && send {
				v, found = e.SendingGroupView(id)
			}
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
	recv, send, ok := roles(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "role must be sender or receiver")
		return
	}
	g.onShard(w, r, nil, g.shardOf(id), func(n *rmp.Node) {
		found, err := n.AbortGroup(r.Context(), id, recv, send)
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		if !found {
			writeError(w, http.StatusNotFound, "unknown group "+id)
			return
		}
		if recv && g.inbox != nil {
			g.inbox.dropGroup(id)
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
