package outbound

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// h1 is HTTPTransport's own HTTP/1.1 client for plain http:// destinations
// (#22): each exchange is written and read on the goroutine that calls Do,
// over a pooled keep-alive connection, one exchange at a time per
// connection. net/http's Transport gives every connection a reader and a
// writer goroutine and hands each exchange to them over channels; at 64
// groups that hand-off cost about a fifth of a message's CPU for both
// nodes (BENCHMARKS.md). https://, proxies and a caller's own Client keep
// net/http. What the peer sees is what net/http would send: the same
// request line and headers in the same order.
type h1 struct {
	cfg    Config
	dialer *net.Dialer

	mu    sync.Mutex
	idle  map[string][]*h1Conn // by dial address; the most recently used last
	nidle int                  // ≤ cfg.MaxIdleConns
	sweep sweeper              // closes connections idle past IdleConnTimeout (h1conn.go)
}

// h1Dest is what an exchange with one http:// URL needs: the address to
// dial and the start of every request head to it.
type h1Dest struct {
	addr string // host:port
	head []byte // "POST <request-URI> HTTP/1.1\r\nHost: …\r\nUser-Agent: …\r\n"
}

// maxResponseHeaderBytes bounds a response's head, the status line and
// header fields of it and of any 1xx before it: a peer streaming header
// lines is cut off there, not buffered.
const maxResponseHeaderBytes = 1 << 20

// userAgent is what net/http sends when a request names none.
const userAgent = "Go-http-client/1.1"

func newH1(cfg Config, dialer *net.Dialer) *h1 {
	c := &h1{cfg: cfg, dialer: dialer, idle: map[string][]*h1Conn{}}
	c.sweep.h = c
	return c
}

// h1Target returns the h1Dest of tmpl, a POST to rawURL as
// http.NewRequest made it, or nil when net/http must send it: not plain
// http, user information (Basic credentials), or a host net/http would
// rewrite (an IPv6 zone, a name that is not ASCII).
func h1Target(tmpl *http.Request) *h1Dest {
	u := tmpl.URL
	if u.Scheme != "http" || u.User != nil || u.Host == "" {
		return nil
	}
	for i := 0; i < len(tmpl.Host); i++ {
		if c := tmpl.Host[i]; c <= ' ' || c >= 0x7f || c == '%' {
			return nil
		}
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	uri := u.RequestURI()
	if strings.IndexFunc(uri, func(c rune) bool { return c <= ' ' || c >= 0x7f }) >= 0 {
		return nil // RequestURI escapes these; never sent raw
	}
	head := make([]byte, 0, 64+len(uri)+len(tmpl.Host))
	head = append(head, "POST "...)
	head = append(head, uri...)
	head = append(head, " HTTP/1.1\r\nHost: "...)
	head = append(head, tmpl.Host...)
	head = append(head, "\r\nUser-Agent: "+userAgent+"\r\n"...)
	return &h1Dest{addr: net.JoinHostPort(u.Hostname(), port), head: head}
}

// errHeaderTimeout is net/http's wording of a ResponseHeaderTimeout.
var errHeaderTimeout = errors.New("net/http: timeout awaiting response headers")

// errHeaderTooLarge is a response head past maxResponseHeaderBytes.
var errHeaderTooLarge = errors.New("net/http: server response headers exceeded " +
	strconv.Itoa(maxResponseHeaderBytes) + " bytes; aborted")

// do makes one exchange of p with d over a pooled connection or a new one.
// The caller holds the destination's slot; h is p's header (header,
// which checked its values). Errors are worded as net/http's Client words them.
func (c *h1) do(ctx context.Context, tmpl *http.Request, d *h1Dest, h http.Header, p *Post) (PostResult, error) {
	fail := func(err error) (PostResult, error) {
		return PostResult{}, &url.Error{Op: "Post", URL: tmpl.URL.String(), Err: err}
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	for attempt := 0; ; attempt++ {
		conn, reused := c.get(d.addr)
		if conn == nil {
			var err error
			if conn, err = c.dial(ctx, d.addr); err != nil {
				return fail(err)
			}
		}
		res, written, err := c.exchange(ctx, conn, tmpl, d, h, p)
		// A pooled connection the server closed as the request went out:
		// nothing of it was read, so it is sent once more on a new one,
		// as net/http resends a request it had not written.
		if err != nil && reused && !written && attempt == 0 && ctx.Err() == nil {
			continue
		}
		return res, err
	}
}

// exchange writes p on conn and reads the answer; conn goes back to the
// pool when the answer was read whole and neither side closes, and is
// closed otherwise. written says the request left in full. As with
// net/http, an error before the response head is in is a *url.Error, one
// reading the body is not.
func (c *h1) exchange(ctx context.Context, conn *h1Conn, tmpl *http.Request, d *h1Dest, h http.Header, p *Post) (res PostResult, written bool, err error) {
	fail := func(err error) error { return &url.Error{Op: "Post", URL: tmpl.URL.String(), Err: conn.cause(err)} }
	keep := false
	defer func() {
		conn.release()
		if keep {
			c.put(conn)
		} else {
			conn.close()
		}
	}()
	if err := conn.arm(ctx, c.cfg.Timeout, c.cfg.ResponseHeaderTimeout); err != nil {
		return PostResult{}, false, fail(err)
	}
	bw := conn.bw
	bw.Write(d.head)
	bw.WriteString("Content-Length: ")
	bw.Write(strconv.AppendInt(conn.scratch[:0], int64(len(p.Body)), 10))
	bw.WriteString("\r\n")
	// net/http writes the other fields sorted by name.
	for _, k := range [...]string{"Accept-Encoding", "Content-Type", "Soapaction"} {
		for _, v := range h[k] {
			bw.WriteString(k)
			bw.WriteString(": ")
			bw.WriteString(v)
			bw.WriteString("\r\n")
		}
	}
	bw.WriteString("\r\n")
	bw.Write(p.Body)
	if err := bw.Flush(); err != nil {
		return PostResult{}, false, fail(err)
	}

	conn.limitHead()
	resp, err := readResponse(conn.br, tmpl)
	if err != nil {
		return PostResult{}, true, fail(err)
	}
	conn.headRead(c.cfg.Timeout)
	body, err := responseBody(resp, true, c.cfg.MaxResponseBytes)
	if err == errResponseTooLarge {
		return PostResult{}, true, err
	}
	if err != nil {
		return PostResult{}, true, conn.cause(err)
	}
	// Reused only when the body was read to its end: a gzip stream that
	// ended before its HTTP body did leaves bytes that are not the next
	// answer's.
	keep = !resp.Close && bodyAtEOF(resp.Body) && conn.br.Buffered() == 0
	return PostResult{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: body}, true, nil
}

// readResponse reads the answer to req, past any 1xx informational
// response before it, as net/http's Transport does; a 101 Switching
// Protocols is no answer to a POST.
func readResponse(br *bufio.Reader, req *http.Request) (*http.Response, error) {
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, err
		}
		switch code := resp.StatusCode; {
		case code == http.StatusSwitchingProtocols:
			return nil, fmt.Errorf("net/http: server answered a POST with %d %s", code, http.StatusText(code))
		case code >= 100 && code < 200:
			continue // the head limit bounds how many
		}
		return resp, nil
	}
}

// bodyAtEOF reports whether body, read to the end by its reader or not,
// has nothing left.
func bodyAtEOF(body io.Reader) bool {
	var b [1]byte
	n, err := body.Read(b[:])
	return n == 0 && err == io.EOF
}

// get returns a pooled connection to addr that is still open, or nil.
func (c *h1) get(addr string) (*h1Conn, bool) {
	for {
		c.mu.Lock()
		stack := c.idle[addr]
		if len(stack) == 0 {
			c.mu.Unlock()
			return nil, false
		}
		conn := stack[len(stack)-1]
		stack[len(stack)-1] = nil
		if stack = stack[:len(stack)-1]; len(stack) == 0 {
			delete(c.idle, addr)
		} else {
			c.idle[addr] = stack
		}
		c.nidle--
		c.mu.Unlock()
		if conn.alive() {
			return conn, true
		}
		conn.close() // the server closed it while it was idle, or sent bytes unasked
	}
}

// put pools conn for its address's next exchange, or closes it when the
// pool is full (MaxPerDestination an address, MaxIdleConns in all).
func (c *h1) put(conn *h1Conn) {
	c.mu.Lock()
	stack := c.idle[conn.addr]
	if len(stack) >= c.cfg.MaxPerDestination || c.nidle >= c.cfg.MaxIdleConns {
		c.mu.Unlock()
		conn.close()
		return
	}
	conn.markIdle()
	c.idle[conn.addr] = append(stack, conn)
	c.nidle++
	c.sweep.arm(c.cfg.IdleConnTimeout)
	c.mu.Unlock()
}

// closeIdle closes the pooled connections idle for IdleConnTimeout or
// longer; it reports whether any stay pooled.
func (c *h1) closeIdle() bool {
	var stale []*h1Conn
	c.mu.Lock()
	for addr, stack := range c.idle {
		kept := stack[:0]
		for _, conn := range stack {
			if conn.idleFor() >= c.cfg.IdleConnTimeout {
				stale = append(stale, conn)
			} else {
				kept = append(kept, conn)
			}
		}
		clear(stack[len(kept):])
		if len(kept) == 0 {
			delete(c.idle, addr)
		} else {
			c.idle[addr] = kept
		}
	}
	c.nidle -= len(stale)
	more := c.nidle > 0
	c.mu.Unlock()
	for _, conn := range stale {
		conn.close()
	}
	return more
}

// dial connects to addr, through the dialer's Policy check.
func (c *h1) dial(ctx context.Context, addr string) (*h1Conn, error) {
	nc, err := c.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return newH1Conn(nc, addr), nil
}

// checkValues refuses a header value net/http would refuse: a control
// character other than tab (CR or LF would split the header).
func checkValues(h http.Header) error {
	for k, vs := range h {
		for _, v := range vs {
			for i := 0; i < len(v); i++ {
				if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
					return fmt.Errorf("net/http: invalid header field value for %q", k)
				}
			}
		}
	}
	return nil
}
