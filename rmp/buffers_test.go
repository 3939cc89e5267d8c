package rmp

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/soap"
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

// TestReplyEnvelopeSize: the buffer guessed for an RM-Reply envelope holds
// it, for one group and for several with ranges, faults and a body.
func TestReplyEnvelopeSize(t *testing.T) {
	long := "mid:" + strings.Repeat("x", 300) + "@example.com"
	for _, resp := range []*soap.Response{
		{Replies: []group.Reply{{GroupID: "mid:1.bench@wsrkit", Sequenced: true, Ranges: []group.ReplyRange{{From: 0, To: 41}}}}},
		{Replies: []group.Reply{
			{GroupID: long, Sequenced: true, Ranges: []group.ReplyRange{
				{From: 0, To: 1<<63 - 1}, {From: 5, To: 9},
				{From: 11, To: 11, Fault: faults.MessageProcessingFailure}}},
			{GroupID: long, Fault: faults.MessageExpired},
		}},
	} {
		for _, v := range []soap.Version{soap.SOAP11, soap.SOAP12} {
			for _, body := range [][]byte{nil, []byte("<r:Result xmlns:r=\"urn:r\">ok</r:Result>")} {
				b, err := soap.AppendEnvelope(nil, v, soap.Headers{Response: resp}, faults.Extended, body)
				if err != nil {
					t.Fatal(err)
				}
				if size := replyEnvelopeSize(resp, body); len(b) > size {
					t.Errorf("%v, %d replies: envelope %d bytes, buffer %d", v, len(resp.Replies), len(b), size)
				}
			}
		}
	}
}
