package rmp

import (
	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/admin"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// counters are the engine's counters (rmp/admin.Metrics) and how its
// effects count into them.
type counters struct{ admin.Metrics }

func (m *counters) countFault(c faults.Code, sent bool) {
	if int(c) >= len(m.FaultsSent) {
		return
	}
	if sent {
		m.FaultsSent[c]++
	} else {
		m.FaultsReceived[c]++
	}
}

func (m *counters) countReceiverEvent(ev *receiver.Event) {
	switch ev.Kind {
	case receiver.EventDuplicate:
		m.Duplicates++
	case receiver.EventDiscarded:
		m.Discarded++
		m.countFault(ev.Code, true)
	case receiver.EventRefused:
		switch ev.Label {
		case receiver.LabelForeignPeerPoll: // nothing was sent
			m.ForeignPeerPolls++
			return
		case receiver.LabelPollGroupNotAllowed:
			m.GroupNotAllowedPolls++
			return
		case receiver.LabelForeignPeer:
			m.ForeignPeer++
		case receiver.LabelGroupNotAllowed:
			m.GroupNotAllowed++
		}
		m.countFault(ev.Code, true)
	}
}

func (m *counters) countOutcome(o *sender.Outcome) {
	if m.Outcomes == nil {
		m.Outcomes = map[admin.OutcomeLabel]uint64{}
	}
	l := admin.OutcomeLabel{Outcome: "acknowledged"}
	if o.Kind == sender.Failed {
		l = admin.OutcomeLabel{Outcome: "failed", Reason: o.Reason.String()}
		if o.Reason == sender.ReasonFaultReceived {
			m.countFault(o.Fault, false)
		}
	}
	m.Outcomes[l]++
}
