package sender

import (
	"bytes"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// scenario runs f twice, straight and with a Recover before every input,
// and requires the same transmissions, outcomes and events: nothing lost,
// nothing reported twice (R89, R90, D27).
func scenario(t *testing.T, cfg Config, f func(h *harness)) {
	t.Helper()
	var runs [2]*harness
	for i, restarts := range []bool{false, true} {
		h := newHarness(t, cfg)
		h.restarts = restarts
		f(h)
		if !restarts {
			for id, n := range h.notified {
				if n != 1 {
					t.Fatalf("outcome %d notified %d times without a restart", id, n)
				}
			}
		}
		runs[i] = h
	}
	a, b := runs[0], runs[1]
	eq(t, b.outcomes, a.outcomes, "outcomes with restarts")
	eq(t, len(b.sent), len(a.sent), "transmission count with restarts")
	for i := range a.sent {
		x, y := a.sent[i], b.sent[i]
		if x.Ref != y.Ref || x.Attempt != y.Attempt || x.Header != y.Header || !bytes.Equal(x.Payload, y.Payload) {
			t.Fatalf("transmission %d differs with restarts:\n%+v\n%+v", i, x, y)
		}
	}
	eq(t, b.events, a.events, "events with restarts")
}

// D26, R22, R23, R10: resends at 1 s, +2 s, +4 s (capped), then failure
// RetriesExhausted one more interval after the last; every resend carries
// the same header and payload.
func TestRetrySchedule_D26_R22_R23_R10(t *testing.T) {
	scenario(t, testConfig(), func(h *harness) {
		ref := h.submit(Submission{GroupKey: "k", Flags: ackReq, Payload: []byte("p"), Expiry: t0.Add(time.Hour)})
		var times []time.Duration
		for len(h.outcomes) == 0 {
			next, ok := h.s.NextDeadline()
			if !ok {
				t.Fatal("no deadline while pending")
			}
			h.at(next.Sub(t0))
			times = append(times, h.now.Sub(t0))
		}
		eq(t, times, []time.Duration{time.Second, 3 * time.Second, 7 * time.Second, 11 * time.Second}, "tick instants")
		trs := h.sendsOf(ref.GroupID, 0)
		eq(t, sendTimes(trs), []int{0, 1, 2, 3}, "first transmission + MaxRetries resends")
		for _, tr := range trs[1:] {
			if tr.Header != trs[0].Header || !bytes.Equal(tr.Payload, trs[0].Payload) {
				t.Fatalf("resend differs (R10): %+v vs %+v", tr, trs[0])
			}
		}
		eq(t, h.outcomesOf(ref.GroupID), []outcomeLine{{0, Failed, ReasonRetriesExhausted, ""}}, "outcome")
	})
}

// D26: jitter comes from the seed, stays within ±Jitter, and is the same for
// the same seed.
func TestJitterSeeded_D26(t *testing.T) {
	p := RetryPolicy{Interval: 10 * time.Second, Backoff: 1, MaxInterval: 10 * time.Second, Jitter: 0.1, MaxRetries: 5}
	distinct := map[time.Duration]bool{}
	for k := 1; k <= 50; k++ {
		d := retryInterval(p, 7, "mid:1.x@wsrkit", 3, k)
		if d < 9*time.Second || d > 11*time.Second {
			t.Fatalf("k=%d: %v outside ±10%%", k, d)
		}
		eq(t, retryInterval(p, 7, "mid:1.x@wsrkit", 3, k), d, "same seed, same draw")
		distinct[d] = true
	}
	if len(distinct) < 40 {
		t.Fatalf("jitter barely varies: %d distinct of 50", len(distinct))
	}
	if retryInterval(p, 8, "mid:1.x@wsrkit", 3, 1) == retryInterval(p, 7, "mid:1.x@wsrkit", 3, 1) {
		t.Fatal("seed has no effect")
	}
	big := RetryPolicy{Interval: time.Second, Backoff: 1e6, MaxInterval: 5 * time.Minute, MaxRetries: 1000}
	eq(t, retryInterval(big, 0, "g", 0, 1000), 5*time.Minute, "cap holds at high attempts")
}

// D10, R24: no resend after ExpiryTime; a resend due exactly at ExpiryTime
// still goes; the message fails Expired just after it.
func TestExpiryStopsResends_D10_R24(t *testing.T) {
	scenario(t, testConfig(), func(h *harness) {
		ref := h.submit(Submission{GroupKey: "k", Flags: ackReq, Expiry: t0.Add(3 * time.Second)})
		h.run(time.Hour)
		trs := h.sendsOf(ref.GroupID, 0)
		eq(t, sendTimes(trs), []int{0, 1, 2}, "the resend at exactly ExpiryTime (3 s) is allowed")
		eq(t, h.outcomesOf(ref.GroupID), []outcomeLine{{0, Failed, ReasonExpired, ""}}, "expired")
		eq(t, h.outcomes[0].At, group.PassDeadline(t0.Add(3*time.Second)), "failed as soon as expiry passed")
		_, ok := h.s.NextDeadline()
		eq(t, ok, false, "nothing left")
		eq(t, h.s.Stats().Groups, 0, "state removed (R94)")
	})
}

// R29, R30: a fault-less range acknowledges every pending number in it;
// repeats, unknown groups, unknown numbers and inverted ranges are ignored.
func TestAcks_R29_R30(t *testing.T) {
	scenario(t, testConfig(), func(h *harness) {
		var gid string
		for i := 0; i < 5; i++ {
			gid = h.submit(Submission{GroupKey: "k", Flags: ackReq}).GroupID
		}
		h.at(500 * time.Millisecond)
		h.reply(ack(gid, 1, 3), ack("mid:99.test@wsrkit", 0, 9), group.Reply{GroupID: gid, Sequenced: true, Ranges: []group.ReplyRange{{From: 4, To: 0}}})
		h.reply(ack(gid, 0, 2), ack(gid, 100, 200))
		eq(t, h.outcomesOf(gid), []outcomeLine{{1, Acknowledged, 0, ""}, {2, Acknowledged, 0, ""}, {3, Acknowledged, 0, ""}, {0, Acknowledged, 0, ""}}, "acks")
		h.at(1500 * time.Millisecond)
		eq(t, len(h.sent), 6, "only number 4 is resent")
		eq(t, h.sent[5].Ref.Number, uint64(4), "resent number")
		gi, _ := h.s.Group(gid)
		eq(t, gi.Acked, []group.Range{{From: 0, To: 3}}, "acked ranges")
		// NonSequenceReply for a sequenced group is ignored.
		h.reply(group.Reply{GroupID: gid})
		eq(t, len(h.outcomes), 4, "ignored")
	})
}

// R26, D15: MessageProcessingFailure / MessageStoreOverflow keep resending
// past MaxRetries until ExpiryTime. R27: other faults end the message.
func TestFaults_R26_R27_D15(t *testing.T) {
	scenario(t, testConfig(), func(h *harness) {
		a := h.submit(Submission{Flags: ackReq, Expiry: t0.Add(20 * time.Second)})
		b := h.submit(Submission{Flags: ackReq, Expiry: t0.Add(20 * time.Second)})
		c := h.submit(Submission{Flags: ackReq, Expiry: t0.Add(20 * time.Second)})
		h.at(100 * time.Millisecond)
		h.reply(group.Reply{GroupID: a.GroupID, Fault: faults.MessageProcessingFailure},
			group.Reply{GroupID: b.GroupID, Fault: faults.MessageStoreOverflow},
			group.Reply{GroupID: c.GroupID, Fault: faults.PermanentProcessingFailure})
		eq(t, h.outcomesOf(c.GroupID), []outcomeLine{{0, Failed, ReasonFaultReceived, "PermanentProcessingFailure"}}, "R27")
		h.run(time.Minute)
		// 0,1,3,7,11,15,19 s: 6 resends, beyond MaxRetries=3.
		eq(t, sendTimes(h.sendsOf(a.GroupID, 0)), []int{0, 1, 2, 3, 4, 5, 6}, "resends until expiry")
		eq(t, len(h.sendsOf(c.GroupID, 0)), 1, "no resend after a terminal fault")
		eq(t, h.outcomesOf(a.GroupID), []outcomeLine{{0, Failed, ReasonExpired, ""}}, "expired in the end")
		eq(t, h.outcomesOf(b.GroupID), []outcomeLine{{0, Failed, ReasonExpired, ""}}, "overflow is transient")
	})
}

// D12, D13, D27: a fault after an ack fails the message again (a new
// outcome, the final one); a repeat of that fault is ignored; the identity
// is kept until ExpiryTime + LateFaultGrace, then the group is removed
// (late-fault polls off; late_test.go has them on).
func TestLateFaultAfterAck_D12_D13_D27(t *testing.T) {
	cfg := testConfig()
	cfg.NoLateFaultPolls = true
	scenario(t, cfg, func(h *harness) {
		r := h.submit(Submission{GroupKey: "k", Flags: ackReq, Expiry: t0.Add(10 * time.Second), Last: true})
		h.reply(ack(r.GroupID, 0, 0))
		h.at(11 * time.Second)
		fault := group.Reply{GroupID: r.GroupID, Sequenced: true, Ranges: []group.ReplyRange{{From: 0, To: 0, Fault: faults.MessageExpired}}}
		h.reply(fault)
		h.reply(fault)
		eq(t, h.outcomesOf(r.GroupID), []outcomeLine{{0, Acknowledged, 0, ""}, {0, Failed, ReasonFaultReceived, "MessageExpired"}}, "ack then failed")
		// t4.1 (last, no timing, complete) at the ack; removal after 10 s + 1 min.
		h.run(time.Hour)
		eq(t, h.events, []Event{
			{Kind: EventTerminated, GroupID: r.GroupID, Rule: group.RuleT41, At: t0},
			{Kind: EventRemoved, GroupID: r.GroupID, Rule: group.RuleT41, At: group.PassDeadline(t0.Add(70 * time.Second))},
		}, "events")
		h.reply(fault)
		eq(t, len(h.outcomes), 2, "unknown after removal")
		eq(t, len(h.st.recs) > 0, true, "counters remain")
		for k := range h.st.recs {
			if k.GroupID == r.GroupID {
				t.Fatalf("record of a removed group left: %+v", k)
			}
		}
	})
}

// R28: GroupAborted stops the whole group: the faulted numbers fail with
// FaultReceived(GroupAborted), every other unacked one with GroupAborted;
// the key is refused while the abort's outcomes are unhandled, then opens a
// new group.
func TestGroupAbortedFault_R28(t *testing.T) {
	scenario(t, testConfig(), func(h *harness) {
		var gid string
		for i := 0; i < 4; i++ {
			gid = h.submit(Submission{GroupKey: "k", Flags: ackReq}).GroupID
		}
		h.reply(ack(gid, 0, 0))
		h.hold = true
		h.reply(group.Reply{GroupID: gid, Sequenced: true, Ranges: []group.ReplyRange{{From: 2, To: 2, Fault: faults.GroupAborted}}})
		eq(t, h.outcomesOf(gid), []outcomeLine{
			{0, Acknowledged, 0, ""}, {2, Failed, ReasonFaultReceived, "GroupAborted"},
			{1, Failed, ReasonGroupAborted, ""}, {3, Failed, ReasonGroupAborted, ""},
		}, "R28 outcomes")
		err := h.submitErr(Submission{GroupKey: "k", Flags: ackReq})
		if err == nil || !isAborted(err) {
			t.Fatalf("key must be blocked while the abort is under way: %v", err)
		}
		h.hold = false
		for _, o := range h.outcomes[1:] {
			h.step()
			h.handle(o.ID)
		}
		n := h.submit(Submission{GroupKey: "k", Flags: ackReq})
		if n.GroupID == gid || n.Number != 0 {
			t.Fatalf("after the abort is reported the key opens a new group: %+v", n)
		}
		h.at(time.Hour)
		eq(t, len(h.sendsOf(gid, 1)), 1, "no resend in an aborted group")
	})
}

func isAborted(err error) bool { return err != nil && errorsIs(err, ErrGroupAborted) }
