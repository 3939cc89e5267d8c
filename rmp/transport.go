package rmp

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/soap"
)

// Post is one outbound HTTP POST of a SOAP envelope: a reliable message, a
// PollRequest, or a callback RM-Reply (R83: all WS-Reliability traffic is
// POST).
type Post struct {
	URL         string
	ContentType string
	// SOAPAction is sent as a quoted SOAPAction header under SOAP 1.1 (R84);
	// under SOAP 1.2 the action rides in ContentType.
	SOAPAction string
	// SOAP11 selects the SOAP 1.1 SOAPAction header.
	SOAP11 bool
	Body   []byte
}

// PostResult is what came back: the status and the response body, or an
// error when no HTTP response arrived.
type PostResult struct {
	Status      int
	ContentType string
	Body        []byte

	// reply is Body parsed by WithParsedReply, business its business
	// response (R73); parsed says they were.
	reply    *soap.Envelope
	business []byte
	parsed   bool
}

// WithParsedReply returns r with its body parsed under opts, as
// Engine.SendResult would parse it, so that a driver can parse on the
// goroutine that made the exchange and the engine's loop only applies the
// result (ServeHTTP does the same with requests). opts must be the
// engine's EngineConfig.Parse.
func (r PostResult) WithParsedReply(opts soap.ParseOptions) PostResult {
	r.reply, r.parsed = parseReply(r.Body, opts), true
	if r.reply != nil && r.reply.Response != nil {
		r.business = businessResponse(r.reply)
	}
	return r
}

// parseReply is a response body's envelope; nil when it has none or does
// not parse (no ack, R36).
func parseReply(body []byte, opts soap.ParseOptions) *soap.Envelope {
	if len(body) == 0 {
		return nil
	}
	env, err := soap.Parse(body, opts)
	if err != nil {
		return nil
	}
	return env
}

// Transport sends POSTs. The driver calls it from its own goroutines.
type Transport interface {
	Do(ctx context.Context, p Post) (PostResult, error)
}

// HTTPTransportConfig bounds an HTTPTransport.
type HTTPTransportConfig struct {
	// Timeout bounds one exchange, response body included. Default 30s.
	Timeout time.Duration
	// MaxPerDestination bounds concurrent exchanges per scheme+host, and
	// the idle connections kept per host. Default 16.
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
	// Outbound is checked on every connection the transport dials (RMP
	// traffic goes to URLs that peers and producers chose); nil means the
	// zero outbound.Policy, public addresses only. A Client of the caller's
	// own dials as it was built to: then only literal addresses are checked.
	Outbound *outbound.Policy
	// Client is the http.Client to use; nil means NewHTTPClient(cfg).
	Client *http.Client

	// Tests: the resolver, and a Control run after Outbound's.
	resolver    *net.Resolver
	testControl func(network, address string, c syscall.RawConn) error
}

// HTTPTransport is a Transport over net/http with keep-alive connection
// reuse, a timeout per exchange and a concurrency limit per destination.
type HTTPTransport struct {
	cfg    HTTPTransportConfig
	client *http.Client
	direct *http.Client // unchecked dials, for cfg.Outbound.Exempt origins; nil without

	mu    sync.Mutex
	slots map[string]chan struct{} // per scheme+host; each holds MaxPerDestination tokens
	byURL map[string]chan struct{} // slots by URL already checked, at most maxCachedURLs
}

// maxCachedURLs bounds HTTPTransport's cache of checked URLs.
const maxCachedURLs = 1024

// NewHTTPTransport returns an HTTPTransport with cfg's zero fields defaulted.
func NewHTTPTransport(cfg HTTPTransportConfig) *HTTPTransport {
	cfg = cfg.withDefaults()
	if cfg.Outbound == nil {
		cfg.Outbound = &outbound.Policy{}
	}
	t := &HTTPTransport{cfg: cfg, client: cfg.Client, slots: map[string]chan struct{}{}, byURL: map[string]chan struct{}{}}
	if t.client == nil {
		t.client = NewHTTPClient(cfg)
		if len(cfg.Outbound.Exempt) > 0 {
			open := cfg
			open.Outbound = nil
			t.direct = NewHTTPClient(open)
		}
	}
	return t
}

func (cfg HTTPTransportConfig) withDefaults() HTTPTransportConfig {
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
		cfg.MaxPerDestination = 16
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = 4 << 20
	}
	if cfg.MaxIdleConns <= 0 {
		cfg.MaxIdleConns = 256
	}
	return cfg
}

// NewHTTPClient returns the http.Client an HTTPTransport of cfg uses when
// cfg.Client is nil (zero fields defaulted): keep-alive reuse with a
// bounded idle pool, dial, TLS and response-header timeouts, cfg.Timeout
// per exchange, and no redirects: a 3xx is the answer (R36: not an ack).
// With cfg.Outbound every dial is checked against it, and no proxy is used
// (a proxy would connect on the client's behalf, unchecked); a nil
// Outbound dials anything, for the operator's own URLs (-deliver, -notify).
func NewHTTPClient(cfg HTTPTransportConfig) *http.Client {
	cfg = cfg.withDefaults()
	d := &net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: 30 * time.Second, Resolver: cfg.resolver}
	proxy := http.ProxyFromEnvironment
	if p := cfg.Outbound; p != nil {
		proxy = nil
		d.Control = func(network, address string, c syscall.RawConn) error {
			if err := p.Control(network, address, c); err != nil {
				return err
			}
			if cfg.testControl != nil {
				return cfg.testControl(network, address, c)
			}
			return nil
		}
	}
	tr := &http.Transport{
		Proxy:                 proxy,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   cfg.TLSHandshakeTimeout,
		ResponseHeaderTimeout: cfg.ResponseHeaderTimeout,
		IdleConnTimeout:       cfg.IdleConnTimeout,
		MaxIdleConns:          cfg.MaxIdleConns,
		MaxIdleConnsPerHost:   cfg.MaxPerDestination,
		MaxConnsPerHost:       cfg.MaxPerDestination,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig:       cfg.TLS,
	}
	return &http.Client{Transport: tr, Timeout: cfg.Timeout, CheckRedirect: noRedirects}
}

// noRedirects makes a client answer a redirect with the 3xx itself.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// ErrResponseTooLarge is returned when a response body exceeds
// MaxResponseBytes; the exchange then counts as "no acknowledgement".
var ErrResponseTooLarge = errors.New("rmp: HTTP response body exceeds the configured limit")

// slot returns the concurrency tokens of rawURL's scheme+host, checking
// rawURL once per distinct string: a node posts to a few URLs many times.
func (t *HTTPTransport) slot(rawURL string) (chan struct{}, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.byURL[rawURL]; ok {
		return s, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("rmp: destination %q is not an absolute http(s) URL", rawURL)
	}
	if err := t.cfg.Outbound.CheckURL(rawURL); err != nil {
		return nil, err // a literal refused address: no dial at all
	}
	key := outbound.Origin(u)
	s, ok := t.slots[key]
	if !ok {
		s = make(chan struct{}, t.cfg.MaxPerDestination)
		t.slots[key] = s
	}
	if len(t.byURL) >= maxCachedURLs {
		clear(t.byURL) // bounded: ReplyTo URLs come from peers
	}
	t.byURL[rawURL] = s
	return s, nil
}

// Do sends p and reads the whole response. Any status is a result; only a
// failure to get a response is an error.
func (t *HTTPTransport) Do(ctx context.Context, p Post) (PostResult, error) {
	slot, err := t.slot(p.URL)
	if err != nil {
		return PostResult{}, err
	}
	select {
	case slot <- struct{}{}:
	case <-ctx.Done():
		return PostResult{}, ctx.Err()
	}
	defer func() { <-slot }()

	ctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(p.Body))
	if err != nil {
		return PostResult{}, err
	}
	req.Header.Set("Content-Type", p.ContentType)
	if p.SOAP11 {
		// Quotes and backslashes escaped; a control character (CR, LF
		// would split the header) refused, whatever checked the action.
		if strings.IndexFunc(p.SOAPAction, func(c rune) bool { return c < ' ' || c == 0x7f }) >= 0 {
			return PostResult{}, fmt.Errorf("rmp: action %q has a control character: not sent", p.SOAPAction)
		}
		req.Header.Set("SOAPAction", soap.SOAPAction(p.SOAPAction))
	}
	client := t.client
	if t.direct != nil && t.cfg.Outbound.Exempts(outbound.Origin(req.URL)) {
		client = t.direct // the operator's own destination
	}
	resp, err := client.Do(req)
	if err != nil {
		return PostResult{}, err
	}
	defer resp.Body.Close()
	body, err := readAllSized(io.LimitReader(resp.Body, t.cfg.MaxResponseBytes+1), resp.ContentLength, t.cfg.MaxResponseBytes)
	if err != nil {
		return PostResult{}, err
	}
	if int64(len(body)) > t.cfg.MaxResponseBytes {
		return PostResult{}, ErrResponseTooLarge
	}
	return PostResult{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: body}, nil
}
