package outbound

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/wsrkit/wsrkit/rmp/peer"
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
	// Peer is the identity of the server certificate HTTPTransport
	// verified for an https:// exchange (peer.FromTLS); the zero Peer
	// otherwise. The engine binds groups to it (rmp/bind.go).
	Peer peer.Peer

	// reply is Body parsed by WithParsedReply, business its business
	// response (R73); parsed says they were.
	reply    *soap.Envelope
	business []byte
	parsed   bool
}

// WithParsedReply returns r with its body parsed under opts, as
// rmp.Engine.SendResult would parse it, so that a driver can parse on the
// goroutine that made the exchange and the engine's loop only applies the
// result (rmp.Node.ServeHTTP does the same with requests). opts must be
// the engine's Config.Parse.
func (r PostResult) WithParsedReply(opts soap.ParseOptions) PostResult {
	r.reply, r.parsed = parseReply(r.Body, opts), true
	if r.reply != nil && r.reply.Response != nil {
		r.business = businessResponse(r.reply)
	}
	return r
}

// ParsedReply is what WithParsedReply parsed: the envelope (nil when the
// body has none or does not parse: no ack, R36) and its business response
// (R73); ok is false when r was not parsed.
func (r PostResult) ParsedReply() (env *soap.Envelope, business []byte, ok bool) {
	return r.reply, r.business, r.parsed
}

// businessResponse is the SOAP Body content of an answer that carries an
// RM-Reply (R73), or nil when the Body holds nothing but white space.
func businessResponse(env *soap.Envelope) []byte {
	if env.Body == nil || len(env.Body.Child) == 0 {
		return nil
	}
	b := env.BodyContent()
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	return b
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

// Transport sends POSTs. The driver (rmp.Node) calls it from its own
// goroutines.
type Transport interface {
	Do(ctx context.Context, p Post) (PostResult, error)
}

// DestinationLimit is implemented by a Transport that makes at most
// MaxPerDestination exchanges at once per scheme+host (Origin), the others
// waiting: an rmp.Node then queues the POSTs beyond it itself rather than
// park a goroutine on each (#22). A wrapping Transport forwards it.
type DestinationLimit interface {
	MaxPerDestination() int
}

// MaxPerDestination is Config.MaxPerDestination (DestinationLimit).
func (t *HTTPTransport) MaxPerDestination() int { return t.cfg.MaxPerDestination }

// HTTPTransport is a Transport over net/http with keep-alive connection
// reuse, a timeout per exchange and a concurrency limit per destination.
type HTTPTransport struct {
	cfg    Config
	client *http.Client
	direct *http.Client // unchecked dials, for cfg.Policy.Exempt origins; nil without
	own    bool         // client and direct are NewClient's (exchange)

	mu    sync.Mutex
	slots map[string]chan struct{} // per scheme+host; each holds MaxPerDestination tokens
	byURL map[string]chan struct{} // slots by URL already checked, at most maxCachedURLs
}

// maxCachedURLs bounds HTTPTransport's cache of checked URLs.
const maxCachedURLs = 1024

// NewHTTPTransport returns an HTTPTransport with cfg's zero fields
// defaulted; a nil cfg.Policy is the zero Policy, public
// addresses only.
func NewHTTPTransport(cfg Config) *HTTPTransport {
	cfg = cfg.WithDefaults()
	if cfg.Policy == nil {
		cfg.Policy = &Policy{}
	}
	t := &HTTPTransport{cfg: cfg, client: cfg.Client, slots: map[string]chan struct{}{}, byURL: map[string]chan struct{}{}}
	if t.client == nil {
		t.own = true
		t.client = NewClient(cfg)
		if len(cfg.Policy.Exempt) > 0 {
			open := cfg
			open.Policy = nil
			t.direct = NewClient(open)
		}
	}
	return t
}

// errResponseTooLarge is returned when a response body exceeds
// MaxResponseBytes; the exchange then counts as "no acknowledgement".
var errResponseTooLarge = errors.New("rmp: HTTP response body exceeds the configured limit")

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
	if err := t.cfg.Policy.CheckURL(rawURL); err != nil {
		return nil, err // a literal refused address: no dial at all
	}
	key := Origin(u)
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
	if t.direct != nil && t.cfg.Policy.Exempts(Origin(req.URL)) {
		client = t.direct // the operator's own destination
	}
	resp, err := t.exchange(client, req)
	if err != nil {
		return PostResult{}, err
	}
	defer resp.Body.Close()
	body, err := readAllSized(io.LimitReader(resp.Body, t.cfg.MaxResponseBytes+1), resp.ContentLength, t.cfg.MaxResponseBytes)
	if err != nil {
		return PostResult{}, err
	}
	if int64(len(body)) > t.cfg.MaxResponseBytes {
		return PostResult{}, errResponseTooLarge
	}
	return PostResult{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: body, Peer: peer.FromTLS(resp.TLS)}, nil
}

// exchange sends req with c, straight through c's Transport when c is
// the transport's own (NewClient's) and the URL carries no user info: that
// client follows no redirect, keeps no cookies and has the Timeout of
// req's context, which ends first, so http.Client.Do would only copy the
// request and its header (for redirects) on every exchange (#22). Errors
// are worded as Client.Do words them.
func (t *HTTPTransport) exchange(c *http.Client, req *http.Request) (*http.Response, error) {
	if !t.own || req.URL.User != nil {
		return c.Do(req)
	}
	resp, err := c.Transport.RoundTrip(req)
	if err != nil {
		if rh, ok := err.(tls.RecordHeaderError); ok && string(rh.RecordHeader[:]) == "HTTP/" {
			err = http.ErrSchemeMismatch
		}
		return nil, &url.Error{Op: "Post", URL: req.URL.String(), Err: err}
	}
	return resp, nil
}

// readAllSized is io.ReadAll with the first buffer sized from the
// request's or response's Content-Length (when it is within limit), so a
// body is read into one allocation instead of io.ReadAll's doubling ones.
// The caller still bounds r; the hint only sizes the buffer.
func readAllSized(r io.Reader, hint, limit int64) ([]byte, error) {
	if hint <= 0 || hint > limit {
		hint = 512
	}
	// One byte more than announced, so that the read that sees EOF does
	// not grow the buffer.
	b := make([]byte, 0, hint+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}
