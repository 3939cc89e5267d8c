package peer

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/url"
	"testing"
)

// TestID: SAN URIs come first, then DNS names, then the CN; the zero Peer
// is no one.
func TestID(t *testing.T) {
	for _, c := range []struct {
		p    Peer
		want string
	}{
		{Peer{CommonName: "a", URIs: []string{"urn:a", "urn:b"}, DNSNames: []string{"a.test"}}, "urn:a"},
		{Peer{CommonName: "a", DNSNames: []string{"a.test"}}, "dns:a.test"},
		{Peer{CommonName: "only"}, "CN=only"},
		{Peer{}, ""},
	} {
		if got := c.p.ID(); got != c.want {
			t.Errorf("%+v.ID() = %q, want %q", c.p, got, c.want)
		}
		if c.p.IsZero() != (c.want == "") {
			t.Errorf("%+v.IsZero() = %v", c.p, c.p.IsZero())
		}
	}
}

// TestFromTLSNeedsAVerifiedChain: a certificate the other end presented
// but this end did not verify names no one.
func TestFromTLSNeedsAVerifiedChain(t *testing.T) {
	u, _ := url.Parse("urn:partner:a")
	c := &x509.Certificate{Subject: pkix.Name{CommonName: "a"}, URIs: []*url.URL{u}, DNSNames: []string{"a.test"}}
	if p := FromTLS(&tls.ConnectionState{PeerCertificates: []*x509.Certificate{c}}); !p.IsZero() {
		t.Fatalf("unverified certificate: %+v, want the zero Peer", p)
	}
	if p := FromTLS(nil); !p.IsZero() {
		t.Fatalf("no TLS: %+v", p)
	}
	p := FromTLS(&tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{c}}})
	if p.ID() != "urn:partner:a" || p.CommonName != "a" || len(p.DNSNames) != 1 {
		t.Fatalf("verified: %+v", p)
	}
}
