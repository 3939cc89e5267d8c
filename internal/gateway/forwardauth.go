package gateway

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/httpbody"
	"github.com/wsrkit/wsrkit/rmp/peer"
)

// Instances of -store etcd forward requests to the holder of a shard
// (route.go). The holder takes a request marked HeaderForwardedBy only
// from an authenticated instance: a client certificate signed by
// -cluster-ca, or an HMAC-SHA256 signature with the -cluster-secret-file
// key. Anything else so marked is refused (403) and never processed as
// forwarded. An authenticated forward carries the original sender's peer
// identity and address, so the holder's quotas and group binding see the
// partner, not the forwarding instance.

// Headers of a forwarded request besides HeaderForwardedBy.
const (
	// HeaderForwardedPeer is the original sender's verified identity
	// (peer.Peer as JSON); absent when it presented none.
	HeaderForwardedPeer = "WSRKit-Forwarded-Peer"
	// HeaderForwardedFor is the original sender's IP address.
	HeaderForwardedFor = "WSRKit-Forwarded-For"
	// HeaderForwardTime is the forwarding instant, Unix seconds, signed.
	HeaderForwardTime = "WSRKit-Forward-Time"
	// HeaderForwardSignature is the hex HMAC-SHA256 of the request
	// (forwardMAC) under the -cluster-secret-file key.
	HeaderForwardSignature = "WSRKit-Forward-Signature"
	// HeaderForwardRefused marks the holder's 403 to a forward it could
	// not authenticate, so the forwarder reports a configuration error
	// instead of relaying the 403 to its client.
	HeaderForwardRefused = "WSRKit-Forward-Refused"
)

// forwardWindow is how far a signed forward's time may be from the
// holder's clock: a captured request replays only within it.
const forwardWindow = 30 * time.Second

// minClusterSecret is the shortest -cluster-secret-file key accepted.
const minClusterSecret = 16

// clusterAuth is how this instance proves itself to the others and checks
// the forwards it takes (-cluster-ca, -cluster-secret-file).
type clusterAuth struct {
	caFile     string
	ca         atomic.Pointer[x509.CertPool] // nil without -cluster-ca
	cert       *keyPair                      // own -tls-cert, presented with -cluster-ca
	secretFile string
	secret     atomic.Pointer[[]byte] // nil without -cluster-secret-file
}

func newClusterAuth(c *Config) (*clusterAuth, error) {
	a := &clusterAuth{caFile: c.ClusterCA, secretFile: c.ClusterSecretFile}
	if a.caFile != "" {
		k, err := loadKeyPair(c.TLSCert, c.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("-tls-cert/-tls-key: %w", err)
		}
		a.cert = k
	}
	return loaded(a)
}

// reload re-reads the CA, the own certificate and the secret; on an error
// the old ones stay in force.
func (a *clusterAuth) reload() error {
	var errs []error
	if a.caFile != "" {
		if p, err := loadPool(a.caFile); err != nil {
			errs = append(errs, fmt.Errorf("-cluster-ca: %w", err))
		} else {
			a.ca.Store(p)
		}
		errs = append(errs, a.cert.reload())
	}
	if a.secretFile != "" {
		if k, err := readClusterSecret(a.secretFile); err != nil {
			errs = append(errs, err)
		} else {
			a.secret.Store(&k)
		}
	}
	return errors.Join(errs...)
}

// readClusterSecret reads the HMAC key: the file's content without
// trailing white space, at least minClusterSecret bytes. Errors name the
// file, never its content.
func readClusterSecret(file string) ([]byte, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("-cluster-secret-file: %w", err)
	}
	b = bytes.TrimRight(b, " \t\r\n")
	if len(b) < minClusterSecret {
		return nil, fmt.Errorf("-cluster-secret-file: %s holds %d bytes, want at least %d (openssl rand -hex 32)", file, len(b), minClusterSecret)
	}
	return b, nil
}

// enabled reports whether forwards are authenticated at all; without,
// Validate keeps the instances on loopback.
func (a *clusterAuth) enabled() bool { return a.caFile != "" || a.secretFile != "" }

// clientTLS is the TLS configuration of forwarding: with -cluster-ca the
// instances' certificates are trusted by it (as read at start: a reload
// renews what the listener accepts, not this) and this instance presents
// its own; else the outbound one (-peer-ca, -peer-cert).
func (a *clusterAuth) clientTLS(outbound *tls.Config) *tls.Config {
	if a.caFile == "" {
		return outbound
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: a.ca.Load(), GetClientCertificate: a.cert.getClientCertificate}
}

// verifyChain verifies a presented client certificate chain against roots.
func verifyChain(chain []*x509.Certificate, roots *x509.CertPool) error {
	if len(chain) == 0 {
		return errors.New("no certificate presented")
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	return err
}

// sign marks req, whose body is body, as forwarded by node on behalf of
// the sender of orig, and signs it with the cluster secret when there is one.
func (a *clusterAuth) sign(req *http.Request, orig *http.Request, node string, body []byte, now time.Time) {
	req.Header.Set(HeaderForwardedBy, node)
	if p := peer.FromRequest(orig); !p.IsZero() {
		b, _ := json.Marshal(p)
		req.Header.Set(HeaderForwardedPeer, string(b))
	}
	req.Header.Set(HeaderForwardedFor, remoteIP(orig.RemoteAddr))
	if k := a.secret.Load(); k != nil {
		ts := strconv.FormatInt(now.Unix(), 10)
		req.Header.Set(HeaderForwardTime, ts)
		req.Header.Set(HeaderForwardSignature, hex.EncodeToString(forwardMAC(*k, req.Method, req.URL.RequestURI(), req.Header, body)))
	}
}

// signedHeaders are the headers a forward's signature covers, besides
// the method, the request target and the body: every header the holder
// acts on.
var signedHeaders = []string{HeaderForwardTime, HeaderForwardedBy, HeaderForwardedPeer, HeaderForwardedFor,
	"Content-Type", "SOAPAction", "Accept", "Authorization"}

// forwardMAC is HMAC-SHA256 under key of the method, the request target,
// the signed headers and the SHA-256 of the body, one per line.
func forwardMAC(key []byte, method, target string, h http.Header, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	io.WriteString(m, "wsrkit-forward-v1\n"+method+"\n"+target+"\n")
	for _, k := range signedHeaders {
		io.WriteString(m, strconv.Quote(h.Get(k))+"\n")
	}
	sum := sha256.Sum256(body)
	m.Write(sum[:])
	return m.Sum(nil)
}

// forwarded is what the holder knows of a forwarded request's origin.
type forwarded struct {
	// authenticated: the forwarding instance proved itself, so peer and
	// addr are the original sender's; else (no -cluster-ca nor secret,
	// loopback only) they are unknown.
	authenticated bool
	peer          peer.Peer
	addr          string
}

type forwardedKey struct{}

// forwardedOf returns the origin of a forwarded request, nil for one that
// was not forwarded.
func forwardedOf(r *http.Request) *forwarded {
	f, _ := r.Context().Value(forwardedKey{}).(*forwarded)
	return f
}

type forwardedBodyKey struct{}

// checkForward authenticates a request marked HeaderForwardedBy. With
// -cluster-ca a client certificate it verifies is enough; else the
// signature must match within forwardWindow of now (the body is read for
// it, and returned). ok false: refused, with the reason.
func (a *clusterAuth) checkForward(r *http.Request, body func() ([]byte, bool), now time.Time) (f *forwarded, reason string, ok bool) {
	f = &forwarded{}
	if !a.enabled() {
		return f, "", true
	}
	switch {
	case a.caFile != "" && r.TLS != nil && len(r.TLS.PeerCertificates) > 0 &&
		verifyChain(r.TLS.PeerCertificates, a.ca.Load()) == nil:
	case a.secret.Load() != nil && r.Header.Get(HeaderForwardSignature) != "":
		ts, err := strconv.ParseInt(r.Header.Get(HeaderForwardTime), 10, 64)
		if err != nil {
			return nil, "no valid " + HeaderForwardTime, false
		}
		if d := now.Sub(time.Unix(ts, 0)); d > forwardWindow || d < -forwardWindow {
			return nil, fmt.Sprintf("%s is %s off this instance's clock (at most %s)", HeaderForwardTime, d.Round(time.Second), forwardWindow), false
		}
		sig, err := hex.DecodeString(r.Header.Get(HeaderForwardSignature))
		if err != nil {
			return nil, "malformed " + HeaderForwardSignature, false
		}
		b, read := body()
		if !read {
			return nil, "", false // answered by body()
		}
		if !hmac.Equal(sig, forwardMAC(*a.secret.Load(), r.Method, r.RequestURI, r.Header, b)) {
			return nil, "the signature does not match (-cluster-secret-file differs?)", false
		}
	default:
		return nil, "neither a -cluster-ca client certificate nor a " + HeaderForwardSignature, false
	}
	f.authenticated = true
	f.addr = r.Header.Get(HeaderForwardedFor)
	if v := r.Header.Get(HeaderForwardedPeer); v != "" {
		if err := json.Unmarshal([]byte(v), &f.peer); err != nil {
			return nil, "malformed " + HeaderForwardedPeer, false
		}
	}
	return f, "", true
}

// forwardGate is the main listener's handler: requests marked forwarded
// are authenticated (else 403, counted) and carry their origin in the
// context; an authenticated forward to an admin route is served by admin
// (with -admin-listen, whose routes the main listener lacks), the token
// still checked there.
func (g *Gateway) forwardGate(next, admin http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(HeaderForwardedBy) == "" {
			next.ServeHTTP(w, r)
			return
		}
		var rb *httpbody.Body
		body := func() ([]byte, bool) {
			if rb = g.readBody(w, r, r.URL.Path == "/rmp"); rb == nil {
				return nil, false
			}
			return rb.Bytes, true
		}
		f, reason, ok := g.auth.checkForward(r, body, time.Now())
		if rb != nil {
			defer rb.Release()
		}
		if !ok {
			if reason == "" {
				return // the body was refused, and answered
			}
			g.refusedForwards.Add(1)
			g.log.Debug("refused a forwarded request", "from", r.RemoteAddr, "by", r.Header.Get(HeaderForwardedBy), "reason", reason)
			w.Header().Set(HeaderForwardRefused, "1")
			writeError(w, http.StatusForbidden, "forwarded request refused: "+reason)
			return
		}
		ctx := context.WithValue(r.Context(), forwardedKey{}, f)
		if rb != nil {
			ctx = context.WithValue(ctx, forwardedBodyKey{}, rb)
			r.Body = io.NopCloser(bytes.NewReader(rb.Bytes))
		}
		r = r.WithContext(ctx)
		// Only instances of -store etcd forward; unauthenticated forwards
		// are possible on loopback only (Validate).
		if admin != nil && g.place.spread() && (f.authenticated || !g.auth.enabled()) && strings.HasPrefix(r.URL.Path, "/v1/") {
			admin.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// asOriginal is a forwarded RMP request as its original sender made it:
// the peer identity and address it came with when the forward was
// authenticated, else none (not the forwarding instance's).
func asOriginal(r *http.Request, in *rmp.Inbound) *http.Request {
	f := forwardedOf(r)
	if f == nil {
		return r
	}
	o := r.WithContext(r.Context())
	o.TLS = nil
	if f.authenticated {
		in.SetPeer(f.peer)
		if f.addr != "" {
			o.RemoteAddr = f.addr
		}
	}
	return o
}

// remoteIP is the IP address of a RemoteAddr, without its port.
func remoteIP(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}
