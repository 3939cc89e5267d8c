package sim

import (
	"github.com/wsrkit/wsrkit/rmp/admin"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// final checks the end state after the network healed and every timer ran
// out: each submitted AckRequested message has a final outcome; guaranteed ones were
// delivered and acknowledged; an acknowledged message was delivered; no
// state is left (R94).
func (m *model) final() {
	wd := m.wd
	for id := range m.recs {
		r := &m.recs[id]
		if !r.submitted {
			continue
		}
		g := &wd.w.groups[wd.w.msgs[id].g]
		if !g.flags.AckRequested {
			// Best effort: no outcome (checked as it comes), lost or not.
			if len(r.taken) > 0 {
				wd.res.BestEffort["delivered"]++
			} else {
				wd.res.BestEffort["lost"]++
			}
			continue
		}
		if len(r.outcomes) == 0 {
			wd.violate(id, "D27: no outcome reported for a submitted message")
			continue
		}
		last := r.outcomes[len(r.outcomes)-1]
		if last.Kind == sender.Acknowledged {
			wd.res.Acked++
		} else {
			wd.res.Failed[last.Reason.String()]++
		}
		switch {
		case r.abortedFailed && last.Kind != sender.Failed:
			wd.violate(id, "D16: failed when its sending group was aborted, final outcome %v", last.Kind)
		case g.guaranteed && (last.Kind != sender.Acknowledged || len(r.taken) == 0):
			wd.violate(id, "guaranteed delivery: final outcome %v %v, taken %d times", last.Kind, last.Reason, len(r.taken))
		case last.Kind == sender.Acknowledged && len(r.taken) == 0:
			// An ack means durably accepted (D8); a message acked and then
			// discarded (D12, D14) must be failed by a later fault (D13),
			// under every reply pattern and after an operator delete of its
			// sending group: the sender polls acknowledged numbers until
			// they can no longer be discarded (sender poll.go).
			wd.violate(id, "D8/R41: acknowledged but never delivered (discarded=%v)", r.discarded)
		}
	}
	for _, n := range wd.nodes {
		if gs := admin.Groups(n.e.Admin(), admin.Sending); len(gs) > 0 {
			wd.violate(-1, "R94: %s still holds %d sending groups after quiescence, first %+v", n.name, len(gs), gs[0])
		}
		if gs := admin.Groups(n.e.Admin(), admin.Receiving); len(gs) > 0 {
			wd.violate(-1, "R94: %s still holds %d receiving groups after quiescence, first %+v", n.name, len(gs), gs[0])
		}
	}
}
