package rmp

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/peer"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
)

var (
	peerB = peer.Peer{CommonName: "b", URIs: []string{"urn:partner:b"}}
	peerC = peer.Peer{CommonName: "c", URIs: []string{"urn:partner:c"}}
)

// bindSide is a sending engine with BindGroupsToPeer (bind) and one
// Callback-pattern message per destination, each POSTed once and
// answered 202 by a server presenting the given identity.
func bindSide(t *testing.T, bind bool, dests map[string]peer.Peer) (*side, map[string]sender.MessageRef) {
	cfg := engineConfig("s1")
	cfg.Receiver.BindGroupsToPeer, cfg.ReplyTo = bind, "https://s.test/rmp"
	s := newSide(t, "sender", cfg)
	refs := map[string]sender.MessageRef{}
	for _, to := range []string{"https://b.test/rmp", "https://c.test/rmp", "http://plain.test/rmp"} {
		p, ok := dests[to]
		if !ok {
			continue
		}
		sub := submission(to, 0, false)
		sub.To, sub.Pattern = to, group.ReplyCallback
		ref, err := s.e.Submit(epoch, sub)
		require.NoError(t, err)
		refs[to] = ref
		s.drain(epoch)
		require.Len(t, s.sends, 1)
		s.e.SendResult(epoch, s.sends[0].Ref, outbound.PostResult{Status: http.StatusAccepted, Peer: p}, nil)
		s.sends = nil
		s.drain(epoch)
	}
	return s, refs
}

// replyEnvelope is an RM-Reply about number 0 of ref's group, an ack or
// (code) a fault.
func replyEnvelope(t *testing.T, ref sender.MessageRef, code faults.Code) []byte {
	resp := &soap.Response{Replies: []group.Reply{{GroupID: ref.GroupID, Sequenced: true,
		Ranges: []group.ReplyRange{{From: 0, To: 0, Fault: code}}}}}
	b, err := soap.AppendEnvelope(nil, soap.SOAP11, soap.Headers{Response: resp}, faults.Extended, nil)
	require.NoError(t, err)
	return b
}

// callback POSTs body to s's endpoint as peer would and returns the answer.
func (s *side) callback(p peer.Peer, body []byte) Answer {
	in := parseInbound(soap.ContentTypeSOAP11, "", body, s.e.cfg.Parse)
	in.SetPeer(p)
	s.token++
	s.e.ReceiveInbound(epoch, s.token, in)
	s.drain(epoch)
	return s.answers[s.token]
}

// TestRepliesBoundToTheDestination: with BindGroupsToPeer an RM-Reply
// about a sending group counts only from the identity its https
// destination presented: a callback from another identity or from none,
// an ack or a fault, is refused with a SOAP Fault and counted; so is an
// entry about it riding on another destination's answer. The
// destination's own callback acknowledges; a group sent over plain http
// is bound to no one; without the option anyone's reply counts (#19 item 5).
func TestRepliesBoundToTheDestination(t *testing.T) {
	dests := map[string]peer.Peer{"https://b.test/rmp": peerB, "https://c.test/rmp": peerC, "http://plain.test/rmp": {}}
	s, refs := bindSide(t, true, dests)
	toB := refs["https://b.test/rmp"]
	for _, c := range []struct {
		name string
		peer peer.Peer
		code faults.Code
	}{{"C acks B's group", peerC, 0}, {"C faults B's group", peerC, faults.GroupAborted},
		{"no identity acks it", peer.Peer{}, 0}, {"a CN-only certificate", peer.Peer{CommonName: "b"}, 0}} {
		a := s.callback(c.peer, replyEnvelope(t, toB, c.code))
		require.Equal(t, http.StatusInternalServerError, a.Status, c.name)
		require.Contains(t, string(a.Body), "InvalidRequest", c.name)
		require.Contains(t, string(a.Body), "not sent to this peer", c.name)
	}
	require.Empty(t, s.outcomes, "nothing acknowledged or failed B's message")
	require.Equal(t, uint64(4), s.e.metrics.ForeignPeerReplies)

	// C's own answer (to a resend of its message) carrying an ack of B's
	// group: that entry is dropped, C's own counts.
	toC := refs["https://c.test/rmp"]
	both := &soap.Response{Replies: []group.Reply{
		{GroupID: toB.GroupID, Sequenced: true, Ranges: []group.ReplyRange{{}}},
		{GroupID: toC.GroupID, Sequenced: true, Ranges: []group.ReplyRange{{}}}}}
	body, err := soap.AppendEnvelope(nil, soap.SOAP11, soap.Headers{Response: both}, faults.Extended, nil)
	require.NoError(t, err)
	ref := OutboundRef{Kind: OutMessage, Message: toC, to: "https://c.test/rmp"}
	s.e.SendResult(epoch, ref, outbound.PostResult{Status: 200, ContentType: soap.ContentTypeSOAP11, Body: body, Peer: peerC}, nil)
	s.drain(epoch)
	require.Equal(t, []string{"0 acknowledged"}, s.outcomes, "C's ack of its own group only")
	require.Equal(t, uint64(5), s.e.metrics.ForeignPeerReplies)
	mi, _ := s.e.send.Message(toB)
	require.Equal(t, sender.MessagePending, mi.State, "B's message still waits for B")

	a := s.callback(peerB, replyEnvelope(t, toB, 0))
	require.Equal(t, http.StatusAccepted, a.Status, "B's own callback")
	a = s.callback(peerC, replyEnvelope(t, refs["http://plain.test/rmp"], 0))
	require.Equal(t, http.StatusAccepted, a.Status, "a group sent over http is bound to no one")
	require.Equal(t, []string{"0 acknowledged", "0 acknowledged", "0 acknowledged"}, s.outcomes)
	require.Equal(t, uint64(5), s.e.metrics.ForeignPeerReplies)

	open, refs := bindSide(t, false, dests)
	a = open.callback(peerC, replyEnvelope(t, refs["https://b.test/rmp"], 0))
	require.Equal(t, http.StatusAccepted, a.Status)
	require.Equal(t, []string{"0 acknowledged"}, open.outcomes, "unbound: anyone's ack counts")
}

// TestRepliesBeforeTheDestinationIsKnown: after a restart the identity of
// a destination is unknown until the next exchange with it, so its
// callback is refused (and retried by its sender) until then; the answer
// to the resend teaches it (#19 item 5).
func TestRepliesBeforeTheDestinationIsKnown(t *testing.T) {
	s, refs := bindSide(t, true, map[string]peer.Peer{"https://b.test/rmp": peerB})
	toB := refs["https://b.test/rmp"]
	s.restart()
	a := s.callback(peerB, replyEnvelope(t, toB, 0))
	require.Equal(t, http.StatusInternalServerError, a.Status, "unknown yet")
	later := epoch.Add(3 * time.Second)
	s.e.Tick(later)
	s.drain(later)
	require.Len(t, s.sends, 1, "the resend")
	s.e.SendResult(later, s.sends[0].Ref, outbound.PostResult{Status: http.StatusAccepted, Peer: peerB}, nil)
	s.drain(later)
	a = s.callback(peerB, replyEnvelope(t, toB, 0))
	require.Equal(t, http.StatusAccepted, a.Status)
	require.Equal(t, []string{"0 acknowledged"}, s.outcomes)
}

// tlsOrigin skips the parse of a URL that does not begin with "https:"
// (#22) and answers as the parse does for every URL.
func TestTLSOriginAgreesWithTheParse(t *testing.T) {
	parsed := func(raw string) (string, bool) {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return "", false
		}
		return outbound.Origin(u), true
	}
	for _, raw := range []string{"", "h", "https", "https:", "https://", "https://H.example:8443/rm?x",
		"HTTPS://h.example", "HtTpS://h.example/", "http://h.example", "httpx://h.example", " https://h.example",
		"https//h.example", "httpſ://h.example", "https:h.example", "https://[::1]:443/", "https://%zz/"} {
		o, ok := tlsOrigin(raw)
		wo, wok := parsed(raw)
		require.Equal(t, wok, ok, raw)
		require.Equal(t, wo, o, raw)
	}
}
