// Package httpbody reads HTTP request bodies safely: decoded
// (Content-Encoding), bounded in decoded bytes, and within a budget of
// bytes shared by every request being served, so that many large bodies at
// once cannot exhaust memory (issue 18). The RMP endpoint (rmp.Node), the
// gateway's submit API and its proxy routes all read bodies with Read.
package httpbody

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultMaxInflightBytes is the default Budget of an rmp.Node.
const DefaultMaxInflightBytes = 64 << 20

// Budget bounds the bytes of request bodies held at once, by every
// Read that shares it: the buffer a body is read into is reserved as
// it grows and given back once the body is no longer needed (Body.Release).
// It never waits: a request that finds it spent is answered 503 with
// Retry-After, which a WS-R sender treats as no ack and resends (D26).
type Budget struct {
	mu    sync.Mutex
	limit int64
	used  int64 // ≤ limit
}

// NewBudget returns a budget of limit bytes (at least 1).
func NewBudget(limit int64) *Budget { return &Budget{limit: max(limit, 1)} }

// InUse returns the bytes reserved now.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

func (b *Budget) reserve(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

func (b *Budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// Limits say how Read reads a body.
type Limits struct {
	// MaxBody bounds the decoded body (and the bytes on the wire); larger
	// is 413. Zero or negative means 4 MiB.
	MaxBody int64
	// Budget is shared by the requests being served; nil means none.
	Budget *Budget
	// Scan, when set, is given the decoded bytes as they are read; the
	// first error it returns stops the reading, and Read returns that
	// error as it is, the rest of the body unread (rmp.ReadRequest checks
	// an envelope's limits so, with a soap.Scanner).
	Scan io.Writer
	// ScanAfter, when positive, holds Scan back until the body has passed
	// that many bytes, and Scan then gets them all from the first: a body
	// that ends before is in memory whole already, for its parser to
	// check, which refuses what Scan would (#22: an envelope's bytes were
	// walked twice).
	ScanAfter int64
}

// Body is a request body read by Read.
type Body struct {
	// Bytes is the decoded body.
	Bytes    []byte
	budget   *Budget
	held     int64 // reserved from budget; read and written by Read only
	released atomic.Bool
}

// Release gives the body's bytes back to the budget; call it once the
// bytes, and what was parsed from them, are no longer in use (an rmp.Node
// releases the Body of an Inbound from rmp.ReadRequest as soon as its
// engine has taken the request, not once it is answered). Later calls,
// from any goroutine, do nothing.
func (b *Body) Release() {
	if b == nil || b.budget == nil || b.released.Swap(true) {
		return
	}
	b.budget.release(b.held)
}

// Error is a body Read refused: the HTTP status to answer (400,
// 413, 415 or 503) and why.
type Error struct {
	Status int
	Reason string
}

func (e *Error) Error() string { return e.Reason }

// SetHeaders sets the headers that go with the status: Retry-After on 503,
// Accept-Encoding on 415 (RFC 9110 §12.5.3).
func (e *Error) SetHeaders(h http.Header) {
	switch e.Status {
	case http.StatusServiceUnavailable:
		h.Set("Retry-After", "1")
	case http.StatusUnsupportedMediaType:
		h.Set("Accept-Encoding", "gzip, deflate")
	}
}

// WriteError answers err from Read as plain text.
func WriteError(w http.ResponseWriter, err error) {
	e := bodyError(err)
	e.SetHeaders(w.Header())
	http.Error(w, e.Reason, e.Status)
}

func bodyError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Status: http.StatusBadRequest, Reason: "reading request body: " + err.Error()}
}

// Read reads r's body, decoded according to its Content-Encoding
// (identity, gzip, x-gzip or deflate — zlib or raw; anything else is 415),
// at most lim.MaxBody decoded bytes (more is 413: a zip bomb stops there),
// reserving the buffer from lim.Budget as it grows (spent is 503). Errors
// are *Error. The caller releases the Body once it has answered.
func Read(w http.ResponseWriter, r *http.Request, lim Limits) (*Body, error) {
	if lim.MaxBody <= 0 {
		lim.MaxBody = 4 << 20
	}
	coding, err := contentCoding(r.Header.Values("Content-Encoding"))
	if err != nil {
		return nil, err
	}
	if r.ContentLength > lim.MaxBody {
		return nil, tooLarge(lim.MaxBody)
	}
	wire := http.MaxBytesReader(w, r.Body, lim.MaxBody)
	src, hint := io.Reader(wire), r.ContentLength
	switch coding {
	case "gzip":
		zr, err := gzip.NewReader(wire)
		if err != nil {
			return nil, readFailure(err, lim.MaxBody, "gzip")
		}
		defer zr.Close()
		src, hint = zr, 4*hint
	case "deflate":
		br := bufio.NewReader(wire)
		src, hint = deflateReader(br), 4*hint
	}
	b := &Body{budget: lim.Budget}
	buf, err := b.read(src, hint, lim.MaxBody, lim.Scan, lim.ScanAfter)
	if err != nil {
		b.Release()
		var se scanError
		if errors.As(err, &se) {
			return nil, se.err
		}
		return nil, readFailure(err, lim.MaxBody, coding)
	}
	b.Bytes = buf
	return b, nil
}

// contentCoding is the one coding of a Content-Encoding header ("" for
// identity); several codings stacked are refused with the unknown ones.
func contentCoding(values []string) (string, error) {
	coding := ""
	for _, v := range values {
		for _, c := range strings.Split(v, ",") {
			switch c = strings.ToLower(strings.TrimSpace(c)); c {
			case "", "identity":
			case "gzip", "x-gzip", "deflate":
				if coding != "" {
					return "", &Error{Status: http.StatusUnsupportedMediaType,
						Reason: "stacked Content-Encodings are not supported: one of gzip, deflate or identity"}
				}
				coding = strings.TrimPrefix(c, "x-")
			default:
				return "", &Error{Status: http.StatusUnsupportedMediaType,
					Reason: "Content-Encoding " + strconv.Quote(c) + " is not supported: gzip, deflate or identity"}
			}
		}
	}
	return coding, nil
}

// deflateReader reads HTTP "deflate": zlib (RFC 9110 §8.4.1.2), or the raw
// deflate some clients send instead, told apart by the zlib header.
func deflateReader(br *bufio.Reader) io.Reader {
	h, _ := br.Peek(2)
	if len(h) == 2 && h[0]&0x0f == 8 && h[0]>>4 <= 7 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 {
		zr, err := zlib.NewReader(br)
		if err != nil {
			return errReader{err}
		}
		return zr
	}
	return flate.NewReader(br)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// scanError is an error of Limits.Scan.
type scanError struct{ err error }

func (e scanError) Error() string { return e.err.Error() }

// firstBuffer bounds the buffer a body is first read into, whatever its
// Content-Length says: the buffer (and its reservation) grows with the
// bytes that arrive, so a body that is refused early (Scan) or stalls
// after announcing 4 MiB holds little of the budget.
const firstBuffer = 64 << 10

// read reads src into a buffer reserved from the budget: first hint bytes
// (at most firstBuffer, within limit), then doubling up to hint, never
// more than limit+1 (one byte past the limit tells a body that is too
// large). Each piece read is given to scan, when set, once the body has
// passed scanAfter bytes.
func (b *Body) read(src io.Reader, hint, limit int64, scan io.Writer, scanAfter int64) ([]byte, error) {
	scanned := 0 // bytes of buf given to scan
	size := min(max(hint+1, 512), limit+1, firstBuffer)
	if !b.grow(size) {
		return nil, budgetSpent()
	}
	buf := make([]byte, 0, size)
	for {
		n, err := src.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, tooLarge(limit)
		}
		if scan != nil && len(buf) > scanned && int64(len(buf)) > scanAfter {
			if _, serr := scan.Write(buf[scanned:]); serr != nil {
				return nil, scanError{serr}
			}
			scanned = len(buf)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			// Both buffers are held while one is copied into the other.
			old, next := int64(cap(buf)), min(2*int64(cap(buf)), limit+1)
			if hint >= old {
				next = min(next, hint+1) // the last growth: to the announced length
			}
			if !b.grow(next) {
				return nil, budgetSpent()
			}
			buf = append(make([]byte, 0, next), buf...)
			b.shrink(old)
		}
	}
}

// grow reserves n more bytes for the body.
func (b *Body) grow(n int64) bool {
	if b.budget == nil {
		return true
	}
	if !b.budget.reserve(n) {
		return false
	}
	b.held += n
	return true
}

// shrink gives n bytes of the body back.
func (b *Body) shrink(n int64) {
	if b.budget != nil {
		b.budget.release(n)
		b.held -= n
	}
}

func tooLarge(limit int64) *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge,
		Reason: "request body exceeds the configured limit of " + strconv.FormatInt(limit, 10) + " bytes (decoded)"}
}

func budgetSpent() *Error {
	return &Error{Status: http.StatusServiceUnavailable,
		Reason: "too many request bodies in flight (-max-inflight-bytes); try again"}
}

// readFailure words an error of reading a body.
func readFailure(err error, limit int64, coding string) error {
	var be *Error
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &be):
		return be
	case errors.As(err, &tooBig):
		return tooLarge(limit)
	case coding != "":
		return &Error{Status: http.StatusBadRequest, Reason: "request body is not valid " + coding + ": " + err.Error()}
	}
	return &Error{Status: http.StatusBadRequest, Reason: "reading request body: " + err.Error()}
}
