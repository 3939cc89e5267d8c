package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/wsrkit/wsrkit/rmp/admin"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// Operator aborts (rmp manage.go): during chaos an operator deletes a
// group that is not guaranteed, on its sending side (admin.Engine.AbortSending:
// its unacknowledged messages fail, D16's outcome) or its receiving side
// (admin.Engine.AbortReceiving: held messages and hand-offs not taken are
// discarded with GroupAborted, D13). The model learns an abort from its
// durable events (rule deleted) and checks: a message not acknowledged
// when its sending group was aborted ends Failed; nothing is handed out
// from a deleted receiving generation while its state stays (hidden).

// abortPlan is one operator abort: of the pick-th planned group (the next
// one that is not guaranteed), on the receiving side when recv.
type abortPlan struct {
	at   time.Duration
	pick int
	recv bool
}

func drawAborts(rng *rand.Rand, p params) []abortPlan {
	as := make([]abortPlan, rng.IntN(1+p.groups/10))
	for i := range as {
		as[i] = abortPlan{at: time.Duration(rng.Int64N(int64(p.chaos))), pick: rng.IntN(p.groups), recv: rng.IntN(2) == 0}
	}
	return as
}

func abortsString(as []abortPlan) string {
	s := ""
	for _, a := range as {
		s += fmt.Sprintf(" g%d/recv=%v@+%v", a.pick, a.recv, a.at)
	}
	return s
}

// abort carries out an operator abort on the group's latest submitted id.
func (wd *world) abort(a abortPlan) {
	if wd.healed {
		return
	}
	gi := a.pick
	for i := 0; i < len(wd.w.groups) && wd.w.groups[gi].guaranteed; i++ {
		gi = (gi + 1) % len(wd.w.groups)
	}
	g := &wd.w.groups[gi]
	if g.guaranteed {
		return
	}
	var gid string
	for _, id := range g.msgs {
		if r := &wd.m.recs[id]; r.submitted {
			gid = r.ref.GroupID
		}
	}
	if gid == "" {
		return
	}
	if a.recv {
		n := wd.nodes[g.to]
		if n.e.Admin().AbortReceiving(n.now(), gid) {
			wd.res.Aborts["receiver"]++
		}
		n.drain()
		return
	}
	n := wd.nodes[g.from]
	if v, ok := admin.Group(n.e.Admin(), gid, admin.Sending); ok && !v.Terminated {
		n.e.Admin().AbortSending(n.now(), gid)
		wd.res.Aborts["sender"]++
		n.drain()
	}
}

// senderDeleted checks a sending group the operator aborted, once the
// abort is durable: each message not acknowledged now has a Failed
// outcome, and must end so (final).
func (m *model) senderDeleted(gid string) {
	m.sendDeleted[gid] = true
	for _, id := range m.byGroup[gid] {
		r := &m.recs[id]
		if r.abortedFailed || !m.wd.w.groups[m.wd.w.msgs[id].g].flags.AckRequested {
			continue
		}
		if len(r.outcomes) == 0 {
			m.wd.violate(id, "D16/D27: its sending group was aborted by the operator and it has no outcome")
			continue
		}
		if last := r.outcomes[len(r.outcomes)-1]; last.Kind == sender.Failed {
			r.abortedFailed = true
			m.note(id, "its sending group was aborted by the operator; failed %v", last.Reason)
		}
	}
}

// receiverDeleted follows a receiving generation the operator deleted: it
// hands out nothing while its state stays hidden; once removed, its
// GroupID is unknown to the receiver, and a resend of a number it took
// opens a generation that may carry the same number (D24 counts from the
// state it still has), so the consumer sees that identity again. Being
// idempotent on it (R92), the consumer takes it as new; the model forgets
// the old generation's identities accordingly.
func (m *model) receiverDeleted(ev *receiver.Event) {
	if ev.Rule != group.RuleDeleted {
		return
	}
	switch ev.Kind {
	case receiver.EventTerminated:
		m.deleted[ev.Group], m.hidden[ev.Group] = true, true
	case receiver.EventRemoved:
		delete(m.hidden, ev.Group)
		delete(m.next, ev.Group)
		for k := range m.taken {
			if k.id == ev.Group {
				delete(m.taken, k) // deleting while ranging: no order reaches an output
			}
		}
	}
}
