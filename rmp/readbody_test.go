package rmp

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// TestReadAllSized: whatever the hint says, the whole body comes back, in
// one allocation when the hint is right.
func TestReadAllSized(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 170) // 1,700 bytes
	for _, hint := range []int64{-1, 0, 1, 100, 1699, 1700, 1701, 1 << 40} {
		got, err := readAllSized(iotest.HalfReader(bytes.NewReader(body)), hint, 4<<20)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("hint %d: %d bytes, %v", hint, len(got), err)
		}
	}
	rd := bytes.NewReader(body)
	allocs := testing.AllocsPerRun(20, func() {
		rd.Reset(body)
		readAllSized(rd, int64(len(body)), 4<<20)
	})
	if allocs != 1 {
		t.Errorf("exact hint: %v allocations, want 1", allocs)
	}
	boom := errors.New("boom")
	if _, err := readAllSized(io.MultiReader(bytes.NewReader(body), iotest.ErrReader(boom)), 10, 4<<20); !errors.Is(err, boom) {
		t.Errorf("read error lost: %v", err)
	}
}
