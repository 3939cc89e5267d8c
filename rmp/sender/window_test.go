package sender

import (
	"testing"
	"time"
)

// firstSends lists, in order, the numbers of gid's first transmissions.
func (h *harness) firstSends(gid string) []uint64 {
	var ns []uint64
	for _, tr := range h.sent {
		if tr.Ref.GroupID == gid && tr.Attempt == 0 {
			ns = append(ns, tr.Ref.Number)
		}
	}
	return ns
}

// #22, R21, R29: with Window 3, a group has at most three messages on the
// wire; the rest are stored and go out in number order as acks free
// places, one range ack freeing several at once; a waiting message's
// retries count from its first transmission (D26).
func TestWindowBoundsMessagesOnTheWire(t *testing.T) {
	cfg := testConfig()
	cfg.Window = 3
	scenario(t, cfg, func(h *harness) {
		var gid string
		for range 6 {
			gid = h.submit(Submission{GroupKey: "k", Flags: ordered, Payload: []byte("p"), Expiry: t0.Add(time.Hour)}).GroupID
		}
		eq(t, h.firstSends(gid), []uint64{0, 1, 2}, "the window's first transmissions")
		eq(t, h.s.Stats().Pending, 6, "every message stored and pending (R21)")
		h.now = t0.Add(500 * time.Millisecond)
		h.reply(ack(gid, 0, 1))
		eq(t, h.firstSends(gid), []uint64{0, 1, 2, 3, 4}, "two places freed by one range ack")
		h.run(time.Second)
		eq(t, sendTimes(h.sendsOf(gid, 2)), []int{0, 1}, "2, sent at 0, is resent at 1 s")
		eq(t, sendTimes(h.sendsOf(gid, 3)), []int{0}, "3, sent at 0.5 s, is not resent yet")
		h.run(1500 * time.Millisecond)
		eq(t, sendTimes(h.sendsOf(gid, 3)), []int{0, 1}, "3 is resent one interval after its first transmission")
		h.reply(ack(gid, 2, 4))
		eq(t, h.firstSends(gid), []uint64{0, 1, 2, 3, 4, 5}, "the last one goes out")
		h.reply(ack(gid, 5, 5))
		want := []outcomeLine{}
		for n := range uint64(6) {
			want = append(want, outcomeLine{Number: n, Kind: Acknowledged})
		}
		eq(t, h.outcomesOf(gid), want, "each acknowledged once, in order")
	})
}

// D10: a message waiting for the window whose ExpiryTime passes is never
// sent; it fails Expired with no transmission, and the window moves on.
func TestWindowWaitingMessageExpires(t *testing.T) {
	cfg := testConfig()
	cfg.Window = 1
	scenario(t, cfg, func(h *harness) {
		gid := h.submit(Submission{GroupKey: "k", Flags: ackReq, Payload: []byte("a"), Expiry: t0.Add(time.Hour)}).GroupID
		h.submit(Submission{GroupKey: "k", Flags: ackReq, Payload: []byte("b"), Expiry: t0.Add(2 * time.Second)})
		h.submit(Submission{GroupKey: "k", Flags: ackReq, Payload: []byte("c"), Expiry: t0.Add(time.Hour)})
		h.run(3 * time.Second)
		eq(t, len(h.sendsOf(gid, 1)), 0, "never sent after its ExpiryTime")
		eq(t, h.outcomesOf(gid), []outcomeLine{{Number: 1, Kind: Failed, Reason: ReasonExpired}}, "1 expired")
		h.reply(ack(gid, 0, 0))
		eq(t, h.firstSends(gid), []uint64{0, 2}, "2 goes out once 0 is acknowledged")
		h.reply(ack(gid, 2, 2))
		eq(t, len(h.outcomesOf(gid)), 3, "every message has its outcome")
	})
}

func TestWindowNegativeIsRefused(t *testing.T) {
	cfg := testConfig()
	cfg.Window = -1
	if _, err := New(cfg); err == nil {
		t.Fatal("a negative window was accepted")
	}
}
