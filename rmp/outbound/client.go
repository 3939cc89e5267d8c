package outbound

import (
	"crypto/tls"
	"net"
	"net/http"
	"syscall"
	"time"
)

// DefaultMaxPerDestination is Config.MaxPerDestination when none is set:
// the gateway's -peer-concurrency, and room for a Node's send window (64)
// of one ordered group on HTTP/1.1, one exchange per connection (#22).
const DefaultMaxPerDestination = 64

// Config bounds the HTTP exchanges an RMP makes (HTTPTransport, and
// NewClient for the operator's own destinations).
type Config struct {
	// Timeout bounds one exchange, response body included. Default 30s.
	Timeout time.Duration
	// MaxPerDestination bounds concurrent exchanges per scheme+host, and
	// the idle connections kept per host. Default DefaultMaxPerDestination.
	MaxPerDestination int
	// MaxResponseBytes bounds a response body. Default 4 MiB.
	MaxResponseBytes int64
	// DialTimeout bounds connecting, name resolution included. Default 10s.
	DialTimeout time.Duration
	// TLSHandshakeTimeout bounds a TLS handshake. Default 10s.
	TLSHandshakeTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for the response header once
	// the request is written. Default Timeout.
	ResponseHeaderTimeout time.Duration
	// IdleConnTimeout closes a pooled connection idle this long. Default 90s.
	IdleConnTimeout time.Duration
	// MaxIdleConns bounds the idle pool over all destinations (peers
	// choose ReplyTo URLs). Default 256.
	MaxIdleConns int
	// TLS configures https:// exchanges: the roots trusted for peers and
	// the client certificate presented to them. nil means Go's defaults
	// (system roots, no certificate).
	TLS *tls.Config
	// Policy is checked on every connection dialled (RMP traffic goes to
	// URLs that peers and producers chose); for HTTPTransport nil means
	// the zero Policy, public addresses only, for NewClient no check. A
	// Client of the caller's own dials as it was built to: then only
	// literal addresses are checked.
	Policy *Policy
	// Client is the http.Client to use; nil means NewClient(cfg).
	Client *http.Client
	// Resolver resolves names for NewClient's dials; nil means Go's.
	Resolver *net.Resolver
	// Control, when set, runs after Policy's check on every dial
	// NewClient makes (to log or restrict further).
	Control func(network, address string, c syscall.RawConn) error
}

// WithDefaults returns cfg with its zero fields defaulted.
func (cfg Config) WithDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.Timeout, 30*time.Second)
	def(&cfg.DialTimeout, 10*time.Second)
	def(&cfg.TLSHandshakeTimeout, 10*time.Second)
	def(&cfg.ResponseHeaderTimeout, cfg.Timeout)
	def(&cfg.IdleConnTimeout, 90*time.Second)
	if cfg.MaxPerDestination <= 0 {
		cfg.MaxPerDestination = DefaultMaxPerDestination
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = 4 << 20
	}
	if cfg.MaxIdleConns <= 0 {
		cfg.MaxIdleConns = 256
	}
	return cfg
}

// NewClient returns the http.Client an HTTPTransport of cfg uses when
// cfg.Client is nil (zero fields defaulted): keep-alive reuse with a
// bounded idle pool, dial, TLS and response-header timeouts, cfg.Timeout
// per exchange, and no redirects: a 3xx is the answer (R36: not an ack).
// With cfg.Policy every dial is checked against it, and no proxy is used
// (a proxy would connect on the client's behalf, unchecked); a nil Policy
// dials anything, for the operator's own URLs (-deliver, -notify).
func NewClient(cfg Config) *http.Client {
	cfg = cfg.WithDefaults()
	d := newDialer(cfg)
	proxy := http.ProxyFromEnvironment
	if cfg.Policy != nil {
		proxy = nil
	}
	// A ResponseHeaderTimeout no shorter than Timeout never fires: the
	// exchange's Timeout (the client's, or HTTPTransport's deadline on the
	// request's context) started earlier and ends first; without it,
	// net/http arms no timer per request for it (#22).
	headerTimeout := cfg.ResponseHeaderTimeout
	if headerTimeout >= cfg.Timeout {
		headerTimeout = 0
	}
	// net/http writes its ALPN protocols into a transport's TLS config on
	// the first exchange (its HTTP/2 set-up): each client gets a copy, so
	// clients made from one Config (the gateway's peer client and its
	// -deliver client share the peer TLS settings) do not race on the
	// caller's.
	tlsConf := cfg.TLS
	if tlsConf != nil {
		tlsConf = tlsConf.Clone()
	}
	tr := &http.Transport{
		Proxy:                 proxy,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   cfg.TLSHandshakeTimeout,
		ResponseHeaderTimeout: headerTimeout,
		IdleConnTimeout:       cfg.IdleConnTimeout,
		MaxIdleConns:          cfg.MaxIdleConns,
		MaxIdleConnsPerHost:   cfg.MaxPerDestination,
		MaxConnsPerHost:       cfg.MaxPerDestination,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig:       tlsConf,
	}
	return &http.Client{Transport: tr, Timeout: cfg.Timeout, CheckRedirect: noRedirects}
}

// newDialer is the dialer of cfg's exchanges: with cfg.Policy, every
// address it is about to connect to is checked, after name resolution.
func newDialer(cfg Config) *net.Dialer {
	d := &net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: 30 * time.Second, Resolver: cfg.Resolver}
	if p := cfg.Policy; p != nil {
		d.Control = func(network, address string, c syscall.RawConn) error {
			if err := p.Control(network, address, c); err != nil {
				return err
			}
			if cfg.Control != nil {
				return cfg.Control(network, address, c)
			}
			return nil
		}
	}
	return d
}

// noRedirects makes a client answer a redirect with the 3xx itself.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
