// Package testpki makes certificates for tests: an in-test CA, server
// certificates for loopback and client certificates with a subject CN and
// SAN URIs, as crypto/tls values and as PEM files.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// CA is a certificate authority made for one test.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	PEM  []byte // the CA certificate
}

var serial atomic.Int64

// NewCA makes a CA named name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial.Add(1)),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("testpki: CA: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("testpki: CA: %v", err)
	}
	return &CA{Cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Pool is a pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// WriteCA writes the CA certificate to dir/name and returns the path.
func (ca *CA) WriteCA(t testing.TB, dir, name string) string {
	t.Helper()
	return write(t, filepath.Join(dir, name), ca.PEM)
}

// Leaf is a certificate issued by a CA, with its key.
type Leaf struct {
	CertPEM, KeyPEM []byte
	TLS             tls.Certificate
}

// Server issues a server certificate for 127.0.0.1, ::1 and localhost,
// with subject CN cn and the SAN URIs uris (which come first in its
// peer.Peer identity, so that two loopback gateways differ); it is good for
// client authentication too.
func (ca *CA) Server(t testing.TB, cn string, uris ...string) *Leaf {
	t.Helper()
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	addURIs(t, tmpl, uris)
	return ca.issue(t, tmpl)
}

// Client issues a client certificate with subject CN cn and the SAN URIs
// uris (e.g. "spiffe://example/partner-a").
func (ca *CA) Client(t testing.TB, cn string, uris ...string) *Leaf {
	t.Helper()
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	addURIs(t, tmpl, uris)
	return ca.issue(t, tmpl)
}

func addURIs(t testing.TB, tmpl *x509.Certificate, uris []string) {
	t.Helper()
	for _, s := range uris {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatalf("testpki: SAN URI %q: %v", s, err)
		}
		tmpl.URIs = append(tmpl.URIs, u)
	}
}

func (ca *CA) issue(t testing.TB, tmpl *x509.Certificate) *Leaf {
	t.Helper()
	key := newKey(t)
	tmpl.SerialNumber = big.NewInt(serial.Add(1))
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatalf("testpki: certificate: %v", err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatalf("testpki: key: %v", err)
	}
	l := &Leaf{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}),
	}
	if l.TLS, err = tls.X509KeyPair(l.CertPEM, l.KeyPEM); err != nil {
		t.Fatalf("testpki: key pair: %v", err)
	}
	return l
}

// Write writes the certificate and key to dir/name.crt and dir/name.key
// and returns their paths.
func (l *Leaf) Write(t testing.TB, dir, name string) (certFile, keyFile string) {
	t.Helper()
	return write(t, filepath.Join(dir, name+".crt"), l.CertPEM), write(t, filepath.Join(dir, name+".key"), l.KeyPEM)
}

// ClientConfig is a TLS client configuration trusting roots (nil: the
// system's) and presenting leaf (nil: no certificate) whatever CAs the
// server names, so that the server's own check is what a test meets.
func ClientConfig(roots *x509.CertPool, leaf *Leaf) *tls.Config {
	c := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if leaf != nil {
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &leaf.TLS, nil }
	}
	return c
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("testpki: key: %v", err)
	}
	return key
}

func write(t testing.TB, path string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatalf("testpki: %v", err)
	}
	return path
}
