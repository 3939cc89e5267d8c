package outbound

import (
	"bufio"
	"context"
	"errors"
	"math"
	"net"
	"os"
	"sync"
	"time"
)

// h1Conn is one keep-alive connection of h1, used by one exchange at a
// time. Its deadlines bound the exchange in real time, as the context
// deadlines and timers of net/http's Transport do.
type h1Conn struct {
	nc      net.Conn
	addr    string
	lr      limitedReader
	br      *bufio.Reader
	bw      *bufio.Writer
	scratch [20]byte

	// headerDeadline is set while a shorter ResponseHeaderTimeout bounds
	// the wait for the head: a timeout then is worded as net/http's.
	headerDeadline bool
	idleSince      time.Time

	// The context whose cancellation aborts this connection's exchange:
	// registered once for as long as exchanges come with the same one
	// (an rmp.Node sends everything under its own), not per exchange.
	mu       sync.Mutex
	ctx      context.Context
	stop     func() bool
	inUse    bool
	canceled bool // ctx ended during this exchange
}

// limitedReader reads the connection at most left bytes more: while a
// response head is read, maxResponseHeaderBytes and the reader's buffer.
type limitedReader struct {
	nc   net.Conn
	left int64
}

func (r *limitedReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, errHeaderTooLarge
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.nc.Read(p)
	r.left -= int64(n)
	return n, err
}

// bufferSize is the size of a connection's read and write buffers, as
// net/http's Transport sizes them: a ≈1.5 KB envelope and its head go in
// one write.
const bufferSize = 4 << 10

func newH1Conn(nc net.Conn, addr string) *h1Conn {
	c := &h1Conn{nc: nc, addr: addr}
	c.lr = limitedReader{nc: nc, left: math.MaxInt64}
	c.br = bufio.NewReaderSize(&c.lr, bufferSize)
	c.bw = bufio.NewWriterSize(nc, bufferSize)
	return c
}

// arm starts an exchange under ctx: Timeout bounds all of it, a shorter
// headerTimeout the wait for the response head, and ctx's end aborts it.
func (c *h1Conn) arm(ctx context.Context, timeout, headerTimeout time.Duration) error {
	c.mu.Lock()
	c.inUse, c.canceled = true, false
	if ctx != c.ctx {
		if c.stop != nil {
			c.stop()
			c.stop = nil
		}
		c.ctx = ctx
		if ctx.Done() != nil {
			c.stop = context.AfterFunc(ctx, c.abort)
		}
	}
	c.mu.Unlock()
	now := time.Now()
	c.headerDeadline = headerTimeout > 0 && headerTimeout < timeout
	if c.headerDeadline {
		c.nc.SetWriteDeadline(now.Add(timeout))
		c.nc.SetReadDeadline(now.Add(headerTimeout))
	} else {
		c.nc.SetDeadline(now.Add(timeout))
	}
	// Checked after the deadlines are set: an end of ctx from here on
	// runs abort, which overrides them.
	if err := ctx.Err(); err != nil {
		return err
	}
	return nil
}

// abort ends the exchange in progress, if any, when its context ends.
func (c *h1Conn) abort() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inUse {
		c.canceled = true
		c.nc.SetDeadline(time.Unix(1, 0))
	}
}

// release ends the exchange: a later end of its context aborts nothing.
func (c *h1Conn) release() {
	c.mu.Lock()
	c.inUse = false
	c.mu.Unlock()
}

// limitHead bounds the bytes read for the response head.
func (c *h1Conn) limitHead() { c.lr.left = maxResponseHeaderBytes + bufferSize }

// headRead lifts the head's bounds once it is in: the body is bounded
// by MaxResponseBytes, and by Timeout from the exchange's start.
func (c *h1Conn) headRead(timeout time.Duration) {
	c.lr.left = math.MaxInt64
	if c.headerDeadline {
		c.headerDeadline = false
		c.mu.Lock()
		if !c.canceled {
			c.nc.SetReadDeadline(time.Now().Add(timeout))
		}
		c.mu.Unlock()
	}
}

// cause words an I/O error of the exchange: the context's error when it
// ended, a header timeout as net/http words it.
func (c *h1Conn) cause(err error) error {
	c.mu.Lock()
	canceled, ctx := c.canceled, c.ctx
	c.mu.Unlock()
	if canceled && ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if c.headerDeadline {
			return errHeaderTimeout
		}
		return context.DeadlineExceeded
	}
	return err
}

func (c *h1Conn) markIdle() { c.idleSince = time.Now() }

func (c *h1Conn) idleFor() time.Duration { return time.Since(c.idleSince) }

// close closes the connection and forgets its context.
func (c *h1Conn) close() {
	c.mu.Lock()
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
	c.mu.Unlock()
	c.nc.Close()
}

// sweeper closes h1's connections idle past IdleConnTimeout: one timer
// for the pool, running while any connection is idle, not one per
// connection.
type sweeper struct {
	h     *h1
	timer *time.Timer // nil until the first connection is pooled
	armed bool
}

// arm runs the sweep after d unless it is due already; h.mu is held.
func (s *sweeper) arm(d time.Duration) {
	if s.armed {
		return
	}
	s.armed = true
	if s.timer == nil {
		s.timer = time.AfterFunc(d, s.run)
		return
	}
	s.timer.Reset(d)
}

func (s *sweeper) run() {
	more := s.h.closeIdle()
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	s.armed = false
	if more || s.h.nidle > 0 {
		// Half the timeout: a connection is closed at most 1.5 × it
		// after it went idle.
		s.armed = true
		s.timer.Reset(max(s.h.cfg.IdleConnTimeout/2, time.Millisecond))
	}
}
