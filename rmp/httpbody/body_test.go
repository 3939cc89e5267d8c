package httpbody

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// compressed is b written through a compressor.
func compressed(b []byte, newWriter func(io.Writer) io.WriteCloser) []byte {
	var buf bytes.Buffer
	zw := newWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func gzipped(b []byte) []byte {
	return compressed(b, func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })
}

func zlibbed(b []byte) []byte {
	return compressed(b, func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) })
}

func rawDeflated(b []byte) []byte {
	return compressed(b, func(w io.Writer) io.WriteCloser {
		zw, _ := flate.NewWriter(w, flate.DefaultCompression)
		return zw
	})
}

// readBody runs Read on a request with the given body and
// Content-Encoding; contentLength -1 makes it chunked.
func readBody(body []byte, encoding string, chunked bool, lim Limits) (*Body, *httptest.ResponseRecorder, error) {
	r := httptest.NewRequest(http.MethodPost, "/rmp", bytes.NewReader(body))
	if chunked {
		r.ContentLength = -1
	}
	if encoding != "" {
		r.Header.Set("Content-Encoding", encoding)
	}
	w := httptest.NewRecorder()
	b, err := Read(w, r, lim)
	return b, w, err
}

func bodyStatus(t *testing.T, err error) int {
	t.Helper()
	be, ok := err.(*Error)
	require.True(t, ok, "want a *Error, got %v", err)
	return be.Status
}

// Issue 17 item 5: gzip and deflate (zlib, or raw as some clients send)
// are decoded; identity is nothing; anything else is 415 naming what is.
func TestReadBodyEncodings(t *testing.T) {
	plain := []byte(strings.Repeat("<a>réliable</a>", 200))
	for enc, wire := range map[string][]byte{
		"": plain, "identity": plain, "gzip": gzipped(plain), "x-gzip": gzipped(plain), "GZIP": gzipped(plain),
		"deflate": zlibbed(plain), "Deflate ": rawDeflated(plain), "identity, gzip": gzipped(plain),
	} {
		for _, chunked := range []bool{false, true} {
			b, _, err := readBody(wire, enc, chunked, Limits{MaxBody: 1 << 20})
			require.NoError(t, err, enc)
			require.Equal(t, plain, b.Bytes, enc)
		}
	}
	for _, enc := range []string{"br", "compress", "zstd", "gzip, gzip", "gzip, deflate"} {
		_, w, err := readBody(gzipped(plain), enc, false, Limits{})
		require.Equal(t, http.StatusUnsupportedMediaType, bodyStatus(t, err), enc)
		WriteError(w, err)
		require.Equal(t, http.StatusUnsupportedMediaType, w.Code)
		require.Equal(t, "gzip, deflate", w.Header().Get("Accept-Encoding"), "RFC 9110 §12.5.3")
	}
	for enc, wire := range map[string][]byte{
		"gzip": plain, "deflate": []byte("\x78\x9c not deflate"), "x-gzip": gzipped(plain)[:40],
	} {
		_, _, err := readBody(wire, enc, false, Limits{})
		require.Equal(t, http.StatusBadRequest, bodyStatus(t, err), enc)
	}
}

// Issue 17 item 5: -max-body bounds the decoded bytes: a zip bomb is 413
// after at most MaxBody+1 decoded bytes, and its buffer is given back.
func TestReadBodyZipBomb(t *testing.T) {
	bomb := gzipped(make([]byte, 64<<20)) // 64 MiB of zeros in ~64 KiB
	require.Less(t, len(bomb), 1<<20)
	budget := NewBudget(8 << 20)
	for _, enc := range []string{"gzip", "deflate"} {
		wire := bomb
		if enc == "deflate" {
			wire = zlibbed(make([]byte, 64<<20))
		}
		_, _, err := readBody(wire, enc, false, Limits{MaxBody: 1 << 20, Budget: budget})
		require.Equal(t, http.StatusRequestEntityTooLarge, bodyStatus(t, err), enc)
		require.Zero(t, budget.InUse(), "a refused body's buffer is given back")
	}
	// Exactly MaxBody decoded is fine; the wire size is bounded too.
	b, _, err := readBody(gzipped(make([]byte, 1<<20)), "gzip", false, Limits{MaxBody: 1 << 20})
	require.NoError(t, err)
	require.Len(t, b.Bytes, 1<<20)
	_, _, err = readBody(make([]byte, 1<<20+1), "", true, Limits{MaxBody: 1 << 20})
	require.Equal(t, http.StatusRequestEntityTooLarge, bodyStatus(t, err))
}

// Issue 18 item 2: the budget bounds the bodies held at once, by the
// buffers they are read into; a spent budget is 503 with Retry-After, and
// a released body makes room again.
func TestReadBodyBudget(t *testing.T) {
	budget := NewBudget(10 << 10)
	lim := Limits{MaxBody: 8 << 10, Budget: budget}
	first, _, err := readBody(make([]byte, 6<<10), "", false, lim)
	require.NoError(t, err)
	require.Equal(t, int64(6<<10+1), budget.InUse(), "Content-Length sized the one buffer")
	for _, chunked := range []bool{false, true} {
		_, w, err := readBody(make([]byte, 6<<10), "", chunked, lim)
		require.Equal(t, http.StatusServiceUnavailable, bodyStatus(t, err))
		WriteError(w, err)
		require.Equal(t, "1", w.Header().Get("Retry-After"))
		require.Contains(t, w.Body.String(), "-max-inflight-bytes")
	}
	// Decoded bytes count, not wire bytes.
	_, _, err = readBody(gzipped(make([]byte, 6<<10)), "gzip", false, lim)
	require.Equal(t, http.StatusServiceUnavailable, bodyStatus(t, err))
	require.Equal(t, int64(6<<10+1), budget.InUse(), "refusals hold nothing")
	first.Release()
	first.Release() // a second release gives nothing back twice
	require.Zero(t, budget.InUse())
	// A chunked body holds its old and new buffer while it grows.
	_, _, err = readBody(make([]byte, 5<<10), "", true, lim)
	require.Equal(t, http.StatusServiceUnavailable, bodyStatus(t, err), "4 KiB + 8 KiB to grow past 4 KiB")
	second, _, err := readBody(make([]byte, 4<<10-1), "", true, lim)
	require.NoError(t, err)
	require.Len(t, second.Bytes, 4<<10-1)
	second.Release()
	require.Zero(t, budget.InUse())
}

// scanRecorder is a Limits.Scan that keeps what it was given and refuses
// once it holds more than refuseAt bytes (0: never).
type scanRecorder struct {
	got      bytes.Buffer
	writes   int
	refuseAt int
}

func (s *scanRecorder) Write(p []byte) (int, error) {
	s.writes++
	s.got.Write(p)
	if s.refuseAt > 0 && s.got.Len() > s.refuseAt {
		return len(p), errScanRefused
	}
	return len(p), nil
}

var errScanRefused = &Error{Status: http.StatusTeapot, Reason: "scan refused"}

// ScanAfter holds Scan back until the body passes it: a shorter body is
// never scanned, a longer one is scanned from its first byte, in order,
// whole, and a refusal stops the reading there (#22).
func TestReadBodyScanAfter(t *testing.T) {
	small := bytes.Repeat([]byte("s"), 1000)
	large := make([]byte, 200<<10)
	for i := range large {
		large[i] = byte('a' + i%26)
	}
	for _, chunked := range []bool{false, true} {
		sc := &scanRecorder{}
		b, _, err := readBody(small, "", chunked, Limits{Scan: sc, ScanAfter: 16 << 10})
		require.NoError(t, err)
		require.Equal(t, small, b.Bytes)
		require.Zero(t, sc.writes, "a body under ScanAfter is not scanned")

		sc = &scanRecorder{}
		b, _, err = readBody(gzipped(large), "gzip", chunked, Limits{Scan: sc, ScanAfter: 16 << 10})
		require.NoError(t, err)
		require.Equal(t, large, b.Bytes)
		require.Equal(t, large, sc.got.Bytes(), "scanned from the first byte, whole and in order")

		sc = &scanRecorder{}
		b, _, err = readBody(small, "", chunked, Limits{Scan: sc})
		require.NoError(t, err)
		require.Equal(t, small, sc.got.Bytes(), "without ScanAfter every byte is scanned")

		sc = &scanRecorder{refuseAt: 32 << 10}
		_, _, err = readBody(large, "", chunked, Limits{Scan: sc, ScanAfter: 16 << 10})
		require.Equal(t, errScanRefused, err)
		require.Less(t, sc.got.Len(), len(large), "the reading stopped at the refusal")
	}
}
