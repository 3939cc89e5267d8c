// Package peer is the verified identity of the other end of an RMP's HTTP
// exchanges under mutual TLS: the client that sent an inbound request, or
// the server an outbound POST reached. The engine binds groups to it and
// counts per-peer quotas by it.
package peer

import (
	"crypto/tls"
	"net/http"
	"slices"
)

// Peer is the verified identity of the party that sent an inbound request:
// the subject CN and SAN URIs and DNS names of the client certificate it
// presented under mutual TLS. The zero Peer is a sender that presented no
// verified certificate. The HTTP layer hands it to the engine with each
// request (rmp.Inbound); per-peer decisions key on ID.
type Peer struct {
	CommonName string
	URIs       []string
	DNSNames   []string
}

// FromTLS is the identity of the certificate a TLS connection's other
// end presented and this end verified: the client's on a server (against
// its client CAs), the server's on a client (an outbound POST); the zero
// Peer without TLS, without a certificate, or when it was not verified.
func FromTLS(cs *tls.ConnectionState) Peer {
	if cs == nil || len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return Peer{}
	}
	c := cs.VerifiedChains[0][0]
	p := Peer{CommonName: c.Subject.CommonName, DNSNames: slices.Clone(c.DNSNames)}
	for _, u := range c.URIs {
		p.URIs = append(p.URIs, u.String())
	}
	return p
}

// FromRequest is FromTLS of the request's connection.
func FromRequest(r *http.Request) Peer { return FromTLS(r.TLS) }

// IsZero reports whether p names no one (no verified certificate).
func (p Peer) IsZero() bool {
	return p.CommonName == "" && len(p.URIs) == 0 && len(p.DNSNames) == 0
}

// ID is a stable name for p: its first SAN URI, else its first DNS name,
// else "CN=" and its common name; "" for the zero Peer. SANs come first
// because CAs bind them to names (RFC 6125 prefers them over the CN).
func (p Peer) ID() string {
	switch {
	case len(p.URIs) > 0:
		return p.URIs[0]
	case len(p.DNSNames) > 0:
		return "dns:" + p.DNSNames[0]
	case p.CommonName != "":
		return "CN=" + p.CommonName
	}
	return ""
}
