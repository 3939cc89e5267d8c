package rmp

// Buffer sizes chosen so that a message's bodies and envelopes are each
// one allocation.

import (
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
)

// requestEnvelopeSize is a buffer size that holds the envelope of a
// reliable message with header h and body in one allocation: beside the
// group id and ReplyTo, the envelope, its tags and the other header fields
// take under 740 bytes at their longest (SOAP 1.2, a last sequence number
// with the longest groupMaxIdleDuration, every flag, Callback).
func requestEnvelopeSize(h *sender.Header, body []byte) int {
	return 768 + len(body) + len(h.GroupID) + len(h.ReplyTo)
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
