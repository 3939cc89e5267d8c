package rmp

import (
	"strings"
	"testing"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/soap"
)

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
