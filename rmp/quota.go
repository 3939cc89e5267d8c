package rmp

import (
	"net"
	"net/http"
	"net/netip"

	"github.com/wsrkit/wsrkit/rmp/peer"
	"github.com/wsrkit/wsrkit/rmp/receiver"
)

// quotaPeer names the sender of an inbound request for the receiving
// RMP's per-peer bounds (receiver.Config.MaxGroupsPerPeer, #18): its
// verified identity under mutual TLS (Peer.ID), else its IP address, so
// that one host's connections count together; "" when neither is known.
func quotaPeer(p peer.Peer, addr string) string {
	if id := p.ID(); id != "" {
		return receiver.VerifiedPeerPrefix + id // binds groups (BindGroupsToPeer)
	}
	if addr != "" {
		return "ip:" + addr
	}
	return ""
}

// clientAddr is the IP address of the request's client, without its port.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	// net.ParseIP(host).String() without its two allocations when host is
	// already written so (#22); net.ParseIP takes no zone.
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" {
		return host
	}
	var buf [64]byte
	if s := a.Unmap().AppendTo(buf[:0]); string(s) != host {
		return string(s)
	}
	return host
}
