package receiver

import (
	"strings"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// Groups bound to their peer (#19, Config.BindGroupsToPeer): a group
// remembers the peer that opened it (gstate.peer, stored in its Meta
// record); once that peer is a verified identity, another one may neither
// send into the group nor learn of it by polling.

// VerifiedPeerPrefix starts the Message.Peer of a sender whose identity
// was verified (mutual TLS); other names (an IP address) bind nothing.
const VerifiedPeerPrefix = "tls:"

// Labels of the refusals of Config.BindGroupsToPeer, and of the groupIds
// the driver's peer policy refuses (Config.AllowGroup).
const (
	LabelForeignPeer     = "receiver.foreign-peer"      // a message into another peer's group
	LabelForeignPeerPoll = "receiver.poll-foreign-peer" // a PollRequest reference to one
	// A message, or a PollRequest reference, whose groupId its sender may
	// not use (the gateway's -peer-allow prefixes).
	LabelGroupNotAllowed     = "receiver.group-not-allowed"
	LabelPollGroupNotAllowed = "receiver.poll-group-not-allowed"
)

// boundPeer is the verified peer of f's newest generation that has one
// ("" = bound to no one).
func (f *family) boundPeer() string {
	for i := len(f.gens) - 1; i >= 0; i-- {
		if p := f.gens[i].peer; p != nil && strings.HasPrefix(p.name, VerifiedPeerPrefix) {
			return p.name
		}
	}
	return ""
}

// allowed reports whether Config.AllowGroup lets peer use groupID.
func (r *Receiver) allowed(peer, groupID string) bool {
	return r.cfg.AllowGroup == nil || r.cfg.AllowGroup(peer, groupID)
}

// foreign reports whether groupID is bound to another peer than peer.
func (r *Receiver) foreign(groupID, peer string) bool {
	if !r.cfg.BindGroupsToPeer {
		return false
	}
	f := r.groups[groupID]
	if f == nil {
		return false
	}
	bound := f.boundPeer()
	return bound != "" && bound != peer
}

// refuseForeign refuses m, which another peer sent into a bound group
// (or into one its sender may not use), with InvalidMessageId (the id is
// not the sender's to use, as for receiver.singleton-id-in-use). The
// fault goes in this request's Response only: not to a ReplyTo the other
// party chose, and without the group's pending acks or faults, which are
// not its to read.
func (r *Receiver) refuseForeign(m *Message, label string) {
	r.event(Event{Kind: EventRefused, Group: group.ID{GroupID: m.GroupID}, HasNumber: m.HasNumber,
		Number: m.Number, Code: faults.InvalidMessageId, Label: label})
	r.reply.add(replyItem{groupID: m.GroupID, sequence: m.HasNumber, from: m.Number, to: m.Number, code: faults.InvalidMessageId})
}
