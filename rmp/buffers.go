package rmp

// Buffer sizes chosen so that a message's bodies and envelopes are each
// one allocation.

import (
	"io"

	"github.com/wsrkit/wsrkit/soap"
)

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

// replyEnvelopeSize is a buffer size that holds an envelope with resp and
// body in one allocation: the envelope and its tags are about 400 bytes,
// each reply about 150 beside its group id, each range about 60.
func replyEnvelopeSize(resp *soap.Response, body []byte) int {
	n := 512 + len(body)
	if resp != nil {
		for _, r := range resp.Replies {
			n += 160 + len(r.GroupID) + 64*len(r.Ranges)
		}
	}
	return n
}
