package outbound

import (
	"bytes"
	"compress/gzip"
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
// body has none or does not parse: no ack, R36; parsed with
// soap.ParseOptions.SkipBody, so its Body's content is in business, not
// in its tree) and its business response (R73); ok is false when r was
// not parsed.
func (r PostResult) ParsedReply() (env *soap.Envelope, business []byte, ok bool) {
	return r.reply, r.business, r.parsed
}

// businessResponse is the SOAP Body content of an answer that carries an
// RM-Reply (R73), or nil when the Body holds nothing but white space.
func businessResponse(env *soap.Envelope) []byte {
	if env.Body == nil {
		return nil
	}
	b := env.BodyContent()
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	return b
}

// parseReply is a response body's envelope; nil when it has none or does
// not parse (no ack, R36). Only its headers, its Fault and its Body's
// content are read, so the Body is not built (soap.ParseOptions.SkipBody):
// the business response is the content as the receiver wrote it (#22).
func parseReply(body []byte, opts soap.ParseOptions) *soap.Envelope {
	if len(body) == 0 {
		return nil
	}
	opts.SkipBody = true
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

// HTTPTransport is a Transport with keep-alive connection reuse, a
// timeout per exchange and a concurrency limit per destination. Its own
// client makes plain http:// exchanges itself, on the calling goroutine
// (h1.go), and the others (https://, an exempt origin, user information)
// through net/http; a caller's Client makes them all.
type HTTPTransport struct {
	cfg    Config
	client *http.Client
	direct *http.Client // unchecked dials, for cfg.Policy.Exempt origins; nil without
	own    bool         // client and direct are NewClient's (exchange)
	h1     *h1          // the plain http:// exchanges of client; nil when not own

	mu      sync.Mutex
	slots   map[string]chan struct{}  // per scheme+host; each holds MaxPerDestination tokens
	byURL   map[string]*destination   // URLs already checked, at most maxCachedURLs
	headers map[headerKey]http.Header // request headers by kind of Post, at most maxCachedHeaders
	watches []*watch                  // idle exchange contexts, at most maxIdleWatches (watch.go)
}

// destination is what HTTPTransport keeps of a URL it checked: its
// host's concurrency tokens and the request every POST to it starts from
// (its URL parsed once: a node posts to a few URLs many times, #22).
type destination struct {
	slot   chan struct{}
	tmpl   *http.Request // method, URL and Host; never sent itself
	direct bool          // an exempt origin: sent with HTTPTransport.direct
	h1     *h1Dest       // sent by HTTPTransport.h1; nil for net/http
}

// headerKey is what a POST's request header is made of.
type headerKey struct {
	contentType, action string
	soap11              bool
}

// maxCachedURLs bounds HTTPTransport's cache of checked URLs, and
// maxCachedHeaders its cache of request headers (actions come from
// producers, ReplyTo URLs from peers).
const (
	maxCachedURLs    = 1024
	maxCachedHeaders = 256
)

// NewHTTPTransport returns an HTTPTransport with cfg's zero fields
// defaulted; a nil cfg.Policy is the zero Policy, public
// addresses only.
func NewHTTPTransport(cfg Config) *HTTPTransport {
	cfg = cfg.WithDefaults()
	if cfg.Policy == nil {
		cfg.Policy = &Policy{}
	}
	t := &HTTPTransport{cfg: cfg, client: cfg.Client, slots: map[string]chan struct{}{},
		byURL: map[string]*destination{}, headers: map[headerKey]http.Header{}}
	if t.client == nil {
		t.own = true
		t.client = NewClient(cfg)
		t.h1 = newH1(cfg, newDialer(cfg))
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

// destination returns what the transport keeps of rawURL, checking
// rawURL once per distinct string.
func (t *HTTPTransport) destination(rawURL string) (*destination, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d, ok := t.byURL[rawURL]; ok {
		return d, nil
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
	// As http.NewRequest makes it: an empty port dropped from the host.
	tmpl, err := http.NewRequest(http.MethodPost, rawURL, nil)
	if err != nil {
		return nil, err
	}
	tmpl.Header = nil // each POST gets its kind's (header)
	d := &destination{slot: s, tmpl: tmpl,
		direct: t.direct != nil && t.cfg.Policy.Exempts(Origin(tmpl.URL))}
	if t.h1 != nil && !d.direct {
		d.h1 = h1Target(tmpl)
	}
	if len(t.byURL) >= maxCachedURLs {
		clear(t.byURL) // bounded: ReplyTo URLs come from peers
	}
	t.byURL[rawURL] = d
	return d, nil
}

// slot returns the concurrency tokens of rawURL's scheme+host.
func (t *HTTPTransport) slot(rawURL string) (chan struct{}, error) {
	d, err := t.destination(rawURL)
	if err != nil {
		return nil, err
	}
	return d.slot, nil
}

// header returns the request header of p's kind of POST. One Header
// serves every POST of a kind at once when the transport's own client
// sends them: net/http only reads a request's header (a RoundTripper
// must not change it; http.Client copies it before adding to it). A
// caller's client gets a copy of its own.
func (t *HTTPTransport) header(p *Post) (http.Header, error) {
	k := headerKey{contentType: p.ContentType, soap11: p.SOAP11}
	if p.SOAP11 {
		k.action = p.SOAPAction
	}
	t.mu.Lock()
	h, ok := t.headers[k]
	t.mu.Unlock()
	if !ok {
		h = http.Header{"Content-Type": {k.contentType}}
		if t.own {
			// What net/http adds to every request in a header of its
			// own (one more map per POST); the response is then
			// decoded here (responseBody), as net/http would.
			h["Accept-Encoding"] = []string{"gzip"}
		}
		if k.soap11 {
			// Quotes and backslashes escaped; a control character (CR, LF
			// would split the header) refused, whatever checked the action.
			if strings.IndexFunc(k.action, func(c rune) bool { return c < ' ' || c == 0x7f }) >= 0 {
				return nil, fmt.Errorf("rmp: action %q has a control character: not sent", k.action)
			}
			h["Soapaction"] = []string{soap.SOAPAction(k.action)}
		}
		if err := checkValues(h); err != nil {
			return nil, err // checked once per kind, not per POST
		}
		t.mu.Lock()
		if len(t.headers) >= maxCachedHeaders {
			clear(t.headers) // bounded: actions come from producers
		}
		t.headers[k] = h
		t.mu.Unlock()
	}
	if !t.own {
		h = h.Clone()
	}
	return h, nil
}

// Do sends p and reads the whole response. Any status is a result; only a
// failure to get a response is an error.
func (t *HTTPTransport) Do(ctx context.Context, p Post) (PostResult, error) {
	d, err := t.destination(p.URL)
	if err != nil {
		return PostResult{}, err
	}
	select {
	case d.slot <- struct{}{}: // a free token: no wait, no select on ctx
	default:
		select {
		case d.slot <- struct{}{}:
		case <-ctx.Done():
			return PostResult{}, ctx.Err()
		}
	}
	defer func() { <-d.slot }()

	h, err := t.header(&p)
	if err != nil {
		return PostResult{}, err
	}
	if d.h1 != nil {
		return t.h1.do(ctx, d.tmpl, d.h1, h, &p)
	}
	w := t.arm(ctx, t.cfg.Timeout)
	defer t.disarm(w) // after the body is read and closed: Timeout bounds it too
	req := d.tmpl.WithContext(w.ctx)
	req.Header = h
	if len(p.Body) > 0 {
		// As http.NewRequest sets them for a []byte body: an in-memory
		// body is written with the header, in one write.
		body := p.Body
		req.ContentLength = int64(len(body))
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	} else {
		req.Body = http.NoBody
		req.GetBody = func() (io.ReadCloser, error) { return http.NoBody, nil }
	}
	client := t.client
	if d.direct {
		client = t.direct // the operator's own destination
	}
	resp, err := t.exchange(client, req)
	if err != nil {
		return PostResult{}, err
	}
	defer resp.Body.Close()
	body, err := responseBody(resp, t.own, t.cfg.MaxResponseBytes)
	if err != nil {
		return PostResult{}, err
	}
	return PostResult{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: body, Peer: peer.FromTLS(resp.TLS)}, nil
}

// responseBody reads resp's whole body, at most limit bytes (more is
// errResponseTooLarge); decoded when the request asked gzip for itself
// (decode), as net/http decodes one it asked for.
func responseBody(resp *http.Response, decode bool, limit int64) ([]byte, error) {
	src, hint := io.Reader(resp.Body), resp.ContentLength
	if decode && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		zr, err := gzipReader(resp.Body)
		if err != nil {
			return nil, err
		}
		defer putGzipReader(zr)
		src, hint = zr, -1
	}
	body, err := readAllSized(src, hint, limit)
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, errResponseTooLarge
	}
	return body, nil
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

// gzipPool keeps the readers of gzip responses (net/http keeps its own so).
var gzipPool sync.Pool

// gzipReader reads the gzip body r, as net/http decodes a response to a
// request that it asked gzip for: an empty body is an empty response.
func gzipReader(r io.Reader) (*gzip.Reader, error) {
	zr, _ := gzipPool.Get().(*gzip.Reader)
	if zr == nil {
		zr = new(gzip.Reader)
	}
	if err := zr.Reset(r); err != nil && err != io.EOF {
		putGzipReader(zr)
		return nil, err
	}
	return zr, nil
}

// putGzipReader gives zr back to the pool, holding nothing of its body.
func putGzipReader(zr *gzip.Reader) {
	zr.Reset(emptyFlate{})
	gzipPool.Put(zr)
}

// emptyFlate is an empty flate.Reader: a gzip.Reader reset on it keeps
// no buffer and no reference.
type emptyFlate struct{}

func (emptyFlate) Read([]byte) (int, error) { return 0, io.EOF }
func (emptyFlate) ReadByte() (byte, error)  { return 0, io.EOF }

// readAllSized is io.ReadAll of at most limit+1 bytes (one more than
// limit tells a body that is too large), with the first buffer sized from
// the request's or response's Content-Length (when it is within limit), so
// a body is read into one allocation instead of io.ReadAll's doubling
// ones. The hint only sizes the buffer.
func readAllSized(r io.Reader, hint, limit int64) ([]byte, error) {
	if hint <= 0 || hint > limit {
		hint = 512
	}
	// One byte more than announced, so that the read that sees EOF does
	// not grow the buffer.
	b := make([]byte, 0, hint+1)
	for {
		n, err := r.Read(b[len(b):min(int64(cap(b)), limit+1)])
		b = b[:len(b)+n]
		if err == io.EOF || int64(len(b)) > limit {
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
