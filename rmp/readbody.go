package rmp

import "io"

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
