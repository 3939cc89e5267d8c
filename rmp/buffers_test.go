package rmp

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/sender"
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

// TestRequestEnvelopeSize: the buffer guessed for a reliable message's
// envelope holds it with every header at its longest, so that rendering
// a message is one allocation.
func TestRequestEnvelopeSize(t *testing.T) {
	far := time.Date(2262, 4, 11, 23, 47, 16, 854775807, time.FixedZone("", -(11*3600+59*60)))
	longest := group.Duration{Years: math.MaxInt64, Months: math.MaxInt64, Days: math.MaxInt64, Clock: math.MaxInt64}
	for _, v := range []soap.Version{soap.SOAP11, soap.SOAP12} {
		for _, timing := range []group.Timing{{}, {Expiry: far}, {HasMaxIdle: true, MaxIdle: longest}} {
			for _, pat := range []group.ReplyPattern{group.ReplyResponse, group.ReplyCallback, group.ReplyPoll} {
				h := sender.Header{GroupID: "g", Sequenced: true, Number: math.MaxUint64, Last: true, Timing: timing,
					Expiry: far, Pattern: pat, Flags: group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: true}}
				if pat == group.ReplyCallback {
					h.ReplyTo = "u"
				}
				body := []byte("<p:x xmlns:p=\"urn:p\"/>")
				tr := sender.Transmission{Header: h, Payload: encodePayload(v, body), To: "http://r.example/rmp"}
				post, err := (&Engine{}).renderMessage(&tr)
				if err != nil {
					t.Fatal(err)
				}
				if size := requestEnvelopeSize(&h, body); len(post.Body) > size {
					t.Errorf("%v, %v, %+v: envelope %d bytes, buffer %d", v, pat, timing, len(post.Body), size)
				}
			}
		}
	}
}
