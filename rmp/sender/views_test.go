package sender

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// Groups lists every group sorted by id with its acknowledged ranges,
// pending count and last number (gateway GET /v1/groups?role=sender).
func TestGroups(t *testing.T) {
	h := newHarness(t, testConfig())
	a := h.submit(Submission{GroupKey: "a", Flags: ackReq}).GroupID
	h.submit(Submission{GroupKey: "a", Flags: ackReq})
	h.submit(Submission{GroupKey: "a", Flags: ackReq, Last: true})
	b := h.submit(Submission{Flags: ackReq}).GroupID
	h.reply(ack(a, 0, 0), ack(a, 2, 2))
	gs := h.s.Groups()
	if len(gs) != 2 || gs[0].GroupID > gs[1].GroupID {
		t.Fatalf("groups = %+v", gs)
	}
	ga, ok := h.s.Group(a)
	eq(t, ok, true, "group a known")
	eq(t, ga.Acked, []group.Range{{From: 0, To: 0}, {From: 2, To: 2}}, "acked ranges")
	eq(t, ga.Pending, 1, "pending")
	eq(t, [2]any{ga.HasLast, ga.LastNumber}, [2]any{true, uint64(2)}, "last")
	eq(t, ga.Terminated, false, "open until the group terminates (D22)")
	gb, _ := h.s.Group(b)
	eq(t, [3]any{gb.Singleton, gb.HasLast, gb.Pending}, [3]any{true, false, 1}, "singleton")
	ga.Acked[0].To = 7
	if again, _ := h.s.Group(a); again.Acked[0].To != 0 {
		t.Fatal("GroupInfo.Acked aliases the sender's state")
	}
	if _, ok := h.s.Group("mid:nope"); ok {
		t.Fatal("unknown group found")
	}
}

// Message reports pending (with attempts), acknowledged and failed messages
// while the Sender knows them (gateway GET /v1/messages/{id}).
func TestMessageStatus(t *testing.T) {
	h := newHarness(t, testConfig())
	h.hold = true
	r0 := h.submit(Submission{GroupKey: "k", Flags: ackReq})
	r1 := h.submit(Submission{GroupKey: "k", Flags: ackReq})
	r2 := h.submit(Submission{GroupKey: "k", Flags: ackReq})
	h.at(time.Second) // first resends (D26)
	want := func(ref MessageRef, mi MessageInfo, what string) {
		t.Helper()
		got, ok := h.s.Message(ref)
		if !ok || !reflect.DeepEqual(got, mi) {
			t.Fatalf("%s: %+v %v, want %+v", what, got, ok, mi)
		}
	}
	want(r0, MessageInfo{State: MessagePending, Attempts: 2}, "pending after one resend")
	h.reply(ack(r0.GroupID, 0, 0))
	h.reply(group.Reply{GroupID: r1.GroupID, Sequenced: true, Ranges: []group.ReplyRange{{From: 1, To: 1, Fault: faults.InvalidMessageParameters}}})
	want(r0, MessageInfo{State: MessageAcknowledged, Attempts: 2}, "acknowledged, outcome unhandled")
	want(r1, MessageInfo{State: MessageFailed, Reason: ReasonFaultReceived, Fault: faults.InvalidMessageParameters, Attempts: 2}, "failed, outcome unhandled")
	h.restart()
	want(r1, MessageInfo{State: MessageFailed, Reason: ReasonFaultReceived, Fault: faults.InvalidMessageParameters, Attempts: 2}, "outbox survives a restart (D27)")
	for _, o := range h.outcomes {
		h.handle(o.ID)
	}
	want(r0, MessageInfo{State: MessageAcknowledged}, "acknowledged, outcome handled: kept for late faults")
	if _, ok := h.s.Message(r1); ok {
		t.Fatal("a failed message whose outcome was handled is the producer's record")
	}
	// D12, D13: a fault after the ack fails it again.
	h.reply(group.Reply{GroupID: r0.GroupID, Sequenced: true, Ranges: []group.ReplyRange{{From: 0, To: 0, Fault: faults.MessageExpired}}})
	want(r0, MessageInfo{State: MessageFailed, Reason: ReasonFaultReceived, Fault: faults.MessageExpired}, "late fault, unhandled")
	h.handle(h.outcomes[len(h.outcomes)-1].ID)
	want(r0, MessageInfo{State: MessageFailed, Reason: ReasonFaultReceived}, "late fault, handled")
	want(r2, MessageInfo{State: MessagePending, Attempts: 2}, "still pending")
	if _, ok := h.s.Message(MessageRef{GroupID: r2.GroupID, Number: 2, Singleton: true}); ok {
		t.Fatal("a sequenced message found by a singleton ref")
	}
}

// A resend persists only the retry-state record (tens of bytes), never the
// payload again; the ack deletes both records.
func TestResendWritesRetryStateOnly(t *testing.T) {
	h := newHarness(t, testConfig())
	payload := bytes.Repeat([]byte("x"), 4096)
	var batches [][]group.Mutation
	ref := h.submit(Submission{GroupKey: "k", Flags: ackReq, Payload: payload})
	for range 2 {
		next, _ := h.s.NextDeadline()
		h.now = next
		rd := h.s.Tick(h.now)
		batches = append(batches, rd.Persist)
		h.apply(rd)
	}
	eq(t, len(h.sendsOf(ref.GroupID, 0)), 3, "first transmission + 2 resends")
	for i, ms := range batches {
		for _, m := range ms {
			if m.Op != group.OpPut || m.Key.Kind != group.KindOutbound {
				continue
			}
			if m.Key.Number != retryKeyBit|ref.Number || len(m.Value) > 32 {
				t.Fatalf("resend %d wrote %d bytes under number %#x", i+1, len(m.Value), m.Key.Number)
			}
		}
	}
	// The recovered message carries the latest retry state.
	before := *h.s.group(ref.GroupID).pending[0]
	h.restart()
	after := h.s.group(ref.GroupID).pending[0]
	eq(t, [3]any{after.attempts, after.nextAt, after.untilExpiry}, [3]any{before.attempts, before.nextAt, before.untilExpiry}, "recovered retry state")
	eq(t, after.payload, payload, "payload")
	h.reply(ack(ref.GroupID, 0, 0))
	for k := range h.st.recs {
		if k.Kind == group.KindOutbound {
			t.Fatalf("record %+v left after the ack", k)
		}
	}
}

// A retry-state record without its message is a corrupt store.
func TestRecoverRejectsOrphanRetryState(t *testing.T) {
	h := newHarness(t, testConfig())
	ref := h.submit(Submission{GroupKey: "k", Flags: ackReq})
	h.at(time.Second)
	delete(h.st.recs, groupKey(ref.GroupID, group.KindOutbound, 0))
	if _, err := Recover(h.cfg, h.st.scan()); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
	for i := range len(encodeRetry(nil, &message{attempts: 3, nextAt: t0})) {
		if err := decodeRetry(encodeRetry(nil, &message{attempts: 3, nextAt: t0})[:i], &message{}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated at %d: %v", i, err)
		}
	}
}

// A groupExpiryTime past 2262 is indexed at group.MaxIndexedDeadline(): the store
// refuses instants outside int64 nanoseconds; the timer keeps the instant.
func TestFarFutureDeadlineClamped(t *testing.T) {
	far := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	h := newHarness(t, testConfig())
	_, rd, err := h.s.Submit(h.now, Submission{To: "http://r/", GroupKey: "k", Expiry: far, Timing: group.Timing{Expiry: far}})
	noErr(t, err)
	var set []time.Time
	for _, m := range rd.Persist {
		if m.Op == group.OpSetDeadline {
			set = append(set, m.At)
		}
	}
	eq(t, set, []time.Time{group.MaxIndexedDeadline()}, "indexed deadline")
	gi, _ := h.s.Group(rd.Send[0].Ref.GroupID)
	eq(t, gi.Deadline, group.PassDeadline(far), "in-memory deadline (D20 t1)")
}

// PendingMessages lists a group's unacknowledged messages by number with
// their attempts and last error; Destinations sums them per destination,
// the resent ones as the retry backlog (gateway console, GET /v1/peers).
func TestPendingMessagesAndDestinations(t *testing.T) {
	h := newHarness(t, testConfig())
	r0 := h.submit(Submission{GroupKey: "k", Flags: ackReq})
	h.submit(Submission{GroupKey: "k", Flags: ackReq})
	h.submit(Submission{GroupKey: "k", Flags: ackReq})
	h.submit(Submission{To: "http://b.example/rmp", Flags: ackReq})
	h.apply(h.s.Sent(h.now, r0, TransportResult{Kind: TransportSent, Status: 200, Detail: "HTTP 200 without wsrm:Response"}))
	h.at(time.Second) // first resends (D26)
	h.reply(ack(r0.GroupID, 1, 1))

	ps, total := h.s.PendingMessages(r0.GroupID, 1)
	eq(t, total, 2, "pending in all")
	eq(t, len(ps), 1, "bounded by limit")
	eq(t, ps[0].Number, uint64(0), "lowest number first")
	eq(t, ps[0].Attempts, 2, "attempts")
	eq(t, ps[0].LastError, "HTTP 200 without wsrm:Response", "last error")
	ps, _ = h.s.PendingMessages(r0.GroupID, 10)
	eq(t, []uint64{ps[0].Number, ps[1].Number}, []uint64{0, 2}, "numbers")
	if ps, n := h.s.PendingMessages("mid:nope", 10); ps != nil || n != 0 {
		t.Fatalf("unknown group: %+v %d", ps, n)
	}

	ds := h.s.Destinations()
	eq(t, len(ds), 2, "destinations")
	eq(t, ds[0], DestinationInfo{To: "http://b.example/rmp", Groups: 1, Pending: 1, Resending: 1}, "b")
	eq(t, ds[1], DestinationInfo{To: "http://r.example/rmp", Groups: 1, Pending: 2, Resending: 2, LastError: "HTTP 200 without wsrm:Response"}, "r")
}
