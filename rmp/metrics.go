package rmp

import (
	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// Metrics are the engine's counters, exported by the gateway.
type Metrics struct {
	// Receiving side.
	Accepted   uint64 // reliable messages accepted (not refused, not duplicates)
	Delivered  uint64 // hand-offs taken by the consumer
	Duplicates uint64 // duplicates recognised (D18)
	Discarded  uint64 // accepted messages that will never be delivered (D12, D14)
	// Sending side.
	Submitted uint64
	Retries   uint64 // resends (D26)
	// FaultsSent counts fault indications and SOAP Faults emitted, by code;
	// FaultsReceived those read by the sending side.
	FaultsSent     [16]uint64
	FaultsReceived [16]uint64
	// ForeignPeer counts messages refused, and ForeignPeerPolls PollRequest
	// references ignored, because their group is bound to another peer
	// identity (receiver.Config.BindGroupsToPeer).
	ForeignPeer, ForeignPeerPolls uint64
	// Outcomes counts outcomes handed to the producer, by kind and reason.
	Outcomes map[OutcomeLabel]uint64
	// Gauges.
	SenderGroups int
	Pending      int
	// Commits counts the synced store batches a Node committed (each holds
	// the effects of one or more loop iterations); 0 from Engine.Metrics.
	Commits uint64
}

// OutcomeLabel is an outcome's kind and reason, the labels of
// wsrkit_outcomes_total.
type OutcomeLabel struct {
	Outcome string // "acknowledged" | "failed"
	Reason  string // "" | "expired" | …
}

func (m *Metrics) countFault(c faults.Code, sent bool) {
	if int(c) >= len(m.FaultsSent) {
		return
	}
	if sent {
		m.FaultsSent[c]++
	} else {
		m.FaultsReceived[c]++
	}
}

func (m *Metrics) countReceiverEvent(ev *receiver.Event) {
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
		case receiver.LabelForeignPeer:
			m.ForeignPeer++
		}
		m.countFault(ev.Code, true)
	}
}

func (m *Metrics) countOutcome(o *sender.Outcome) {
	if m.Outcomes == nil {
		m.Outcomes = map[OutcomeLabel]uint64{}
	}
	l := OutcomeLabel{Outcome: "acknowledged"}
	if o.Kind == sender.Failed {
		l = OutcomeLabel{Outcome: "failed", Reason: o.Reason.String()}
		if o.Reason == sender.ReasonFaultReceived {
			m.countFault(o.Fault, false)
		}
	}
	m.Outcomes[l]++
}
