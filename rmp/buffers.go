package rmp

// Buffer sizes chosen so that a message's bodies and envelopes are each
// one allocation.

import "github.com/wsrkit/wsrkit/soap"

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
