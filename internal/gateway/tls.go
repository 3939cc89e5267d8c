package gateway

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// Client authentication modes of -tls-client-auth.
const (
	ClientAuthNone    = "none"
	ClientAuthRequest = "request" // verified when presented
	ClientAuthRequire = "require"
)

// keyPair is a certificate and key read from PEM files, replaced on reload
// while handshakes go on with the one they took (no connection drops).
type keyPair struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
	mu                sync.Mutex
	stamp             string // the files' size and mtime at the last load
}

func loadKeyPair(certFile, keyFile string) (*keyPair, error) {
	return loaded(&keyPair{certFile: certFile, keyFile: keyFile})
}

// loaded returns r once its first reload succeeded: the constructor of each
// setting read from files and re-read on SIGHUP (the admin token, the
// -peer-allow list, a certificate and key).
func loaded[T interface{ reload() error }](r T) (T, error) {
	if err := r.reload(); err != nil {
		var none T
		return none, err
	}
	return r, nil
}

// reload reads the files again; on an error the old pair stays in use.
func (k *keyPair) reload() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stamp = filesStamp(k.certFile, k.keyFile)
	c, err := tls.LoadX509KeyPair(k.certFile, k.keyFile)
	if err != nil {
		return fmt.Errorf("loading %s and %s: %w", k.certFile, k.keyFile, err)
	}
	k.cur.Store(&c)
	return nil
}

// changed reports whether the files differ from the last load.
func (k *keyPair) changed() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return filesStamp(k.certFile, k.keyFile) != k.stamp
}

func (k *keyPair) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return k.cur.Load(), nil
}

func (k *keyPair) getClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return k.cur.Load(), nil
}

// filesStamp names the size and modification time of each file, so that
// a poll can see them change without reading them.
func filesStamp(files ...string) string {
	s := ""
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			s += fmt.Sprintf("%d/%d;", fi.Size(), fi.ModTime().UnixNano())
		} else {
			s += "missing;"
		}
	}
	return s
}

// clientTLS is a TLS 1.2+ client config that trusts the CAs in file ca
// (the system's when ca is ""); flag names ca's flag in the error.
func clientTLS(ca, flag string) (*tls.Config, error) {
	config := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pool, err := loadPool(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flag, err)
		}
		config.RootCAs = pool
	}
	return config, nil
}

// loadPool reads a PEM bundle of CA certificates.
func loadPool(file string) (*x509.CertPool, error) {
	certs, err := loadCerts(file)
	if err != nil {
		return nil, err
	}
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p, nil
}

// loadCerts reads the certificates of a PEM bundle; none is an error.
func loadCerts(file string) ([]*x509.Certificate, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	return certs, nil
}

// flagFile is a file and the flag that named it, for errors.
type flagFile struct{ flag, file string }

// caStamp is filesStamp of the client CA files.
func (s *serverTLS) caStamp() string {
	fs := make([]string, len(s.caFiles))
	for i, f := range s.caFiles {
		fs[i] = f.file
	}
	return filesStamp(fs...)
}

// serverTLS is the listener's TLS configuration (-tls-cert, -tls-key,
// -tls-client-ca, -tls-client-auth): TLS 1.2 or later with Go's default
// suites; the certificate and the client CAs are re-read by reload.
type serverTLS struct {
	cert *keyPair
	// caFiles are the client CAs by flag: -tls-client-ca, -cluster-ca.
	caFiles []flagFile
	auth    tls.ClientAuthType
	base    *tls.Config
	admin   *tls.Config                // -admin-listen: the same certificate, no client certificates
	withCA  atomic.Pointer[tls.Config] // base with the current client CAs
	mu      sync.Mutex
	caSeen  string
}

func newServerTLS(c *Config) (*serverTLS, error) {
	k, err := loadKeyPair(c.TLSCert, c.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("-tls-cert/-tls-key: %w", err)
	}
	s := &serverTLS{cert: k, auth: clientAuthType(c)}
	for _, f := range []flagFile{{"-tls-client-ca", c.TLSClientCA}, {"-cluster-ca", c.ClusterCA}} {
		if f.file != "" {
			s.caFiles = append(s.caFiles, f)
		}
	}
	// Instances forwarding to each other present -cluster-ca
	// certificates: asked for even when partners are not (the gateway
	// verifies them itself, clusterAuth), so that partners' certificates
	// are not checked under none.
	if c.ClusterCA != "" && s.auth == tls.NoClientCert {
		s.auth = tls.RequestClientCert
	}
	s.base = &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: k.getCertificate,
		ClientAuth:     s.auth,
		NextProtos:     []string{"h2", "http/1.1"},
	}
	s.admin = s.base.Clone()
	s.admin.ClientAuth = tls.NoClientCert
	if len(s.caFiles) > 0 {
		if err := s.reloadCA(); err != nil {
			return nil, err
		}
		s.base.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) { return s.withCA.Load(), nil }
	}
	return s, nil
}

// clientAuthType maps -tls-client-auth; "" is require with -tls-client-ca,
// else none. request verifies a certificate when one is presented: an
// unverified identity is never handed to the engine.
func clientAuthType(c *Config) tls.ClientAuthType {
	switch c.TLSClientAuth {
	case ClientAuthRequire:
		return tls.RequireAndVerifyClientCert
	case ClientAuthRequest:
		return tls.VerifyClientCertIfGiven
	case "":
		if c.TLSClientCA != "" {
			return tls.RequireAndVerifyClientCert
		}
	}
	return tls.NoClientCert
}

func (s *serverTLS) reloadCA() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caSeen = s.caStamp()
	p := x509.NewCertPool()
	for _, f := range s.caFiles {
		certs, err := loadCerts(f.file)
		if err != nil {
			return fmt.Errorf("%s: %w", f.flag, err)
		}
		for _, c := range certs {
			p.AddCert(c)
		}
	}
	c := s.base.Clone()
	c.ClientCAs = p
	c.GetConfigForClient = nil
	s.withCA.Store(c)
	return nil
}

func (s *serverTLS) reload() error {
	err := s.cert.reload()
	if len(s.caFiles) > 0 {
		err = errors.Join(err, s.reloadCA())
	}
	return err
}

func (s *serverTLS) changed() bool {
	if s.cert.changed() {
		return true
	}
	if len(s.caFiles) == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caStamp() != s.caSeen
}

// peerTLS is the outbound TLS configuration (-peer-ca, -peer-cert,
// -peer-key) of every client: peer sends, RM-Replies, polls, -deliver,
// -notify, -route targets and forwarding. nil config: Go's defaults.
type peerTLS struct {
	cert   *keyPair // nil without -peer-cert
	config *tls.Config
}

func newPeerTLS(c *Config) (*peerTLS, error) {
	if c.PeerCA == "" && c.PeerCert == "" {
		return &peerTLS{}, nil
	}
	config, err := clientTLS(c.PeerCA, "-peer-ca")
	if err != nil {
		return nil, err
	}
	p := &peerTLS{config: config}
	if c.PeerCert != "" {
		k, err := loadKeyPair(c.PeerCert, c.PeerKey)
		if err != nil {
			return nil, fmt.Errorf("-peer-cert/-peer-key: %w", err)
		}
		p.cert = k
		p.config.GetClientCertificate = k.getClientCertificate
	}
	return p, nil
}
