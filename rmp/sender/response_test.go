package sender

import (
	"errors"
	"github.com/wsrkit/wsrkit/rmp/group"
	"testing"
)

// R73: the business response that came back on a message's own POST rides
// on that message's Acknowledged outcome, not on the outcomes of others
// the same RM-Reply acknowledges, and the outbox keeps it across a
// restart.
func TestOutcomeCarriesBusinessResponse_R73(t *testing.T) {
	h := newHarness(t, testConfig())
	h.hold = true // outcomes stay in the outbox until handled
	a := h.submit(Submission{GroupKey: "k", Flags: ackReq, Payload: []byte("0")})
	b := h.submit(Submission{GroupKey: "k", Flags: ackReq, Payload: []byte("1")})
	h.step()
	h.apply(h.s.RepliesWithResponse(h.now, b, []byte(`<q:Price xmlns:q="urn:q">12.5</q:Price>`), []group.Reply{ack(a.GroupID, 0, 1)}))
	byNumber := func(os []Outcome) map[uint64]Outcome {
		m := map[uint64]Outcome{}
		for _, o := range os {
			m[o.Ref.Number] = o
		}
		return m
	}
	got := byNumber(h.outcomes)
	eq(t, len(got), 2, "two outcomes")
	eq(t, got[0].Kind, Acknowledged, "message 0")
	eq(t, got[0].Response == nil, true, "message 0 carries no response")
	eq(t, string(got[1].Response), `<q:Price xmlns:q="urn:q">12.5</q:Price>`, "message 1's response")

	h.restart()
	h.step()
	replayed := byNumber(h.s.Tick(h.now).Notify)
	eq(t, string(replayed[1].Response), `<q:Price xmlns:q="urn:q">12.5</q:Price>`, "the response after a restart")
	eq(t, replayed[0].Response == nil, true, "message 0 still without one")

	// Plain Replies attach nothing; nor does a response for a message the
	// reply does not acknowledge.
	c := h.submit(Submission{GroupKey: "k", Flags: ackReq, Payload: []byte("2")})
	d := h.submit(Submission{GroupKey: "k", Flags: ackReq, Payload: []byte("3")})
	h.step()
	h.apply(h.s.RepliesWithResponse(h.now, d, []byte("<x/>"), []group.Reply{ack(c.GroupID, 2, 2)}))
	h.reply(ack(d.GroupID, 3, 3))
	got = byNumber(h.outcomes)
	eq(t, got[2].Response == nil && got[3].Response == nil, true, "no response without the own message's ack")
}

// Business responses waiting in the outbox count against MaxOutboxBytes:
// over it, submissions are refused (the acknowledgement that brought the
// response never is), before and after a restart, until the producer
// handles the outcome.
func TestOutboxBytesBoundSubmissions(t *testing.T) {
	cfg := testConfig()
	cfg.Limits.MaxOutboxBytes = 16
	h := newHarness(t, cfg)
	h.hold = true
	a := h.submit(Submission{GroupKey: "k", Flags: ackReq, Payload: []byte("0")})
	h.step()
	h.apply(h.s.RepliesWithResponse(h.now, a, []byte("<twenty-bytes-long/>"), []group.Reply{ack(a.GroupID, 0, 0)}))
	eq(t, len(h.outcomes), 1, "the acknowledgement is applied")
	refused := func(when string) {
		t.Helper()
		if err := h.submitErr(Submission{GroupKey: "k", Flags: ackReq, Payload: []byte("1")}); !errors.Is(err, ErrBoundsFull) {
			t.Fatalf("%s: err = %v, want ErrBoundsFull", when, err)
		}
	}
	refused("over the bound")
	h.restart()
	refused("after a restart")
	h.handle(h.outcomes[0].ID)
	h.submit(Submission{GroupKey: "k", Flags: ackReq, Payload: []byte("1")})
}
