package gateway

import (
	"slices"

	"github.com/wsrkit/wsrkit/rmp"
)

// sendingGroups lists the sending groups this process has submitted to
// and the sending RMP still holds, sorted by GroupID.
//
// Stopgap until the sending RMP lists its groups itself: groups recovered
// after a restart are listed again only once a submission names them.
func (g *Gateway) sendingGroups(e *rmp.Engine) []rmp.GroupView {
	g.sentMu.Lock()
	ids := make([]string, 0, len(g.sent))
	for id := range g.sent {
		ids = append(ids, id)
	}
	g.sentMu.Unlock()
	slices.Sort(ids)
	var out []rmp.GroupView
	for _, id := range ids {
		if v, ok := e.SendingGroupView(id); ok {
			out = append(out, v)
			continue
		}
		g.sentMu.Lock()
		delete(g.sent, id) // removed (R94)
		g.sentMu.Unlock()
	}
	return out
}

func (g *Gateway) noteSent(groupID string) {
	g.sentMu.Lock()
	g.sent[groupID] = struct{}{}
	g.sentMu.Unlock()
}
