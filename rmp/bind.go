package rmp

import (
	"net/url"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/peer"
)

// Sending groups bound to their destination (#19, under
// Config.Receiver.BindGroupsToPeer, which binds the receiving groups to
// their opener): an RM-Reply about one of our sending groups — an ack or a fault, in the
// answer to a message or a poll, or in a request to our endpoint (a
// callback, R31, or acks riding on a message) — counts only when it comes
// from the party the group was sent to. Over https:// that party is the
// identity of the server certificate the destination presented
// (Peer.ID); a group sent over plain http is bound to no one.

// maxDestPeers bounds the destinations whose identity is remembered; past
// it the map starts over (each identity is learnt again from the next
// exchange with its destination).
const maxDestPeers = 4096

// replySource is where RM-Replies came from.
type replySource struct {
	// origin is the destination (scheme://host) whose answer carried them;
	// "" for a request to this RMP's endpoint.
	origin string
	// peer is the sender's verified identity (Peer.ID): the server's for
	// an answer, the client's for a request; "" when none.
	peer string
}

// learnDestPeer records the identity the destination of an exchange to
// rawURL presented.
func (e *Engine) learnDestPeer(rawURL string, p peer.Peer) {
	if !e.cfg.Receiver.BindGroupsToPeer || p.IsZero() {
		return
	}
	o, ok := tlsOrigin(rawURL)
	if !ok {
		return
	}
	if e.destPeers == nil || len(e.destPeers) >= maxDestPeers {
		e.destPeers = make(map[string]string)
	}
	e.destPeers[o] = p.ID()
}

// tlsOrigin is rawURL's scheme://host when it is an https:// URL. A URL
// that does not begin with "https:" is not parsed at all: the engine's
// loop asks this of every answer (answerSource, #22).
func tlsOrigin(rawURL string) (string, bool) {
	if !hasHTTPSScheme(rawURL) {
		return "", false
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return "", false
	}
	return outbound.Origin(u), true
}

// hasHTTPSScheme reports whether s begins with "https:", in any case
// (url.Parse's scheme is that, lowercased, for no other string).
func hasHTTPSScheme(s string) bool {
	const want = "https:"
	if len(s) < len(want) {
		return false
	}
	for i := range len(want) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != want[i] {
			return false
		}
	}
	return true
}

// bindReplies keeps the entries of rs that src may speak for and counts
// the others (wsrkit_refused_total{reason="foreign-peer-reply"}); it
// reports whether it dropped any. An entry about a group this sending RMP
// does not know passes: the sender ignores it anyway (R30).
func (e *Engine) bindReplies(rs []group.Reply, src replySource) ([]group.Reply, bool) {
	if !e.cfg.Receiver.BindGroupsToPeer {
		return rs, false
	}
	kept := rs[:0:0]
	dropped := false
	for i := range rs {
		if e.mayReply(rs[i].GroupID, src) {
			kept = append(kept, rs[i])
			continue
		}
		dropped = true
		e.metrics.ForeignPeerReplies++
	}
	return kept, dropped
}

// mayReply reports whether src may acknowledge or fault the sending group
// groupID: the group went over plain http (bound to no one), or src is
// the group's destination itself (its own answer; TLS verified the host),
// or src's verified identity is the one that destination presented.
func (e *Engine) mayReply(groupID string, src replySource) bool {
	g, ok := e.send.Group(groupID)
	if !ok {
		return true
	}
	o, tls := tlsOrigin(g.To)
	if !tls || o == src.origin {
		return true
	}
	want, known := e.destPeers[o]
	return known && src.peer != "" && src.peer == want
}

// foreignReplyFault refuses a request whose only content was RM-Replies
// that its sender may not give (D7: the request is not accepted, so a
// SOAP Fault; the sender of a callback retries it, as after any failure).
func foreignReplyFault() *faults.Fault {
	return faults.New(faults.InvalidRequest, "rmp.foreign-peer-reply",
		"an RM-Reply about a group that was not sent to this peer")
}

// answerSource is where an answer to ref came from: the URL the engine
// rendered the POST for (else, for a driver that built the ref itself,
// the message's group's destination) and the identity its server
// presented, which is learnt for that destination first.
func (e *Engine) answerSource(ref OutboundRef, res outbound.PostResult) replySource {
	to := ref.to
	if to == "" && ref.Kind == OutMessage {
		if g, ok := e.send.Group(ref.Message.GroupID); ok {
			to = g.To
		}
	}
	e.learnDestPeer(to, res.Peer)
	o, _ := tlsOrigin(to)
	return replySource{origin: o, peer: res.Peer.ID()}
}
