package sender

import (
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

func pollSub(key, to string, flags group.Flags) Submission {
	return Submission{GroupKey: key, To: to, Flags: flags, Pattern: group.ReplyPoll, Expiry: t0.Add(time.Hour)}
}

// R32, R33, D13: every PollInterval a PollRequest per destination batches
// its Poll-pattern groups in id order: sequenced groups with the ranges of
// their unacknowledged numbers and, until ExpiryTime + LateFaultGrace, of
// their acknowledged ones (a fault may still follow the ack, D12, D13);
// singletons without ranges. Once every message is acknowledged and past
// that window, the destination is no longer polled. Late-fault polls off
// (late_test.go has them on).
func TestPollBatching_R32_R33(t *testing.T) {
	cfg := testConfig()
	cfg.NoLateFaultPolls = true
	cfg.Retry = RetryPolicy{Interval: time.Minute, Backoff: 1, MaxInterval: time.Minute, MaxRetries: 3}
	h := newHarness(t, cfg)
	short := func(key, to string) Submission {
		sub := pollSub(key, to, ackReq)
		sub.Expiry = t0.Add(20 * time.Second)
		return sub
	}
	a := h.submit(short("a", "d1")).GroupID
	h.submit(short("a", "d1"))
	h.submit(short("a", "d1"))
	s := h.submit(short("", "d1")).GroupID
	b := h.submit(pollSub("b", "d2", ackReq)).GroupID
	h.submit(Submission{GroupKey: "r", To: "d1", Flags: ackReq}) // Response pattern: never polled
	h.reply(ack(a, 1, 1))
	h.run(5 * time.Second)
	eq(t, h.polls, []Poll{
		{ID: 0, To: "d1", Refs: []group.PollRef{{GroupID: a, Ranges: []group.Range{{From: 0, To: 2}}}, {GroupID: s}}},
		{ID: 1, To: "d2", Refs: []group.PollRef{{GroupID: b, Ranges: []group.Range{{From: 0, To: 0}}}}},
	}, "polls at 5 s: acked 1 asked about too")
	h.reply(ack(a, 0, 2), group.Reply{GroupID: s})
	h.step()
	h.apply(h.s.PollResult(h.now, 0, true))
	h.run(10 * time.Second)
	eq(t, h.polls[2:], []Poll{
		{ID: 2, To: "d1", Refs: []group.PollRef{{GroupID: a, Ranges: []group.Range{{From: 0, To: 2}}}, {GroupID: s}}},
		{ID: 3, To: "d2", Refs: []group.PollRef{{GroupID: b, Ranges: []group.Range{{From: 0, To: 0}}}}},
	}, "acknowledged groups still polled within their window")
	h.reply(ack(b, 0, 0))
	to := func(dest string) int {
		n := 0
		for _, p := range h.polls {
			if p.To == dest {
				n++
			}
		}
		return n
	}
	h.run(80 * time.Second) // window of d1's messages: 20 s + 1 min
	eq(t, to("d1"), 16, "d1 polled every 5 s until its window ends")
	h.run(10 * time.Minute)
	eq(t, to("d1"), 16, "no poll of d1 after its window")
	eq(t, to("d2") > 100, true, "d2 still polled: its window is an hour")
	h.run(2 * time.Hour)
	_, ok := h.s.Group(s)
	eq(t, ok, false, "singleton removed")
}

// D13 under Poll: a message acknowledged while held at the receiver, whose
// MessageExpired fault comes later, is still asked about; the fault in the
// answer fails it again and aborts its ordered group (D16).
func TestPollLateFault_D13(t *testing.T) {
	for _, restarts := range []bool{false, true} {
		cfg := testConfig()
		cfg.PollInterval = 3 * time.Second
		cfg.Retry = RetryPolicy{Interval: time.Minute, Backoff: 1, MaxInterval: time.Minute, MaxRetries: 5}
		h := newHarness(t, cfg)
		h.restarts = restarts
		g := h.submit(pollSub("o", "d", ordered)).GroupID
		h.submit(pollSub("o", "d", ordered))
		sub := pollSub("o", "d", ordered)
		sub.Expiry = t0.Add(5 * time.Second)
		h.submit(sub)
		h.run(3 * time.Second)
		eq(t, h.polls[0].Refs, []group.PollRef{{GroupID: g, Ranges: []group.Range{{From: 0, To: 2}}}}, "first poll")
		h.reply(ack(g, 0, 0), ack(g, 2, 2))
		h.run(6 * time.Second)
		eq(t, h.polls[1].Refs, []group.PollRef{{GroupID: g, Ranges: []group.Range{{From: 0, To: 2}}}}, "acked 0 and 2 still asked about (restarts %v)", restarts)
		h.reply(group.Reply{GroupID: g, Sequenced: true, Ranges: []group.ReplyRange{{From: 0, To: 0}, {From: 2, To: 2, Fault: faults.MessageExpired}}})
		eq(t, h.outcomesOf(g), []outcomeLine{
			{0, Acknowledged, 0, ""}, {2, Acknowledged, 0, ""},
			{2, Failed, ReasonFaultReceived, "MessageExpired"}, {1, Failed, ReasonGroupAborted, ""},
		}, "late fault, then the ordered group aborted (restarts %v)", restarts)
	}
}

// R32 across restarts: a recovered Sender polls on the schedule of the old
// one (the next instant is stored per destination), not at once.
func TestPollScheduleSurvivesRestart_R32(t *testing.T) {
	times := func(restarts bool) []time.Duration {
		cfg := testConfig()
		cfg.PollInterval = 5 * time.Second
		cfg.Retry = RetryPolicy{Interval: time.Hour, Backoff: 1, MaxInterval: time.Hour, MaxRetries: 1}
		h := newHarness(t, cfg)
		h.restarts = restarts
		var at []time.Duration
		h.submit(pollSub("a", "d", ackReq))
		h.at(2 * time.Second)
		h.submit(pollSub("b", "d", ackReq))
		for i := 0; i < 5; i++ {
			n := len(h.polls)
			h.run(h.now.Sub(t0) + 3*time.Second)
			for range h.polls[n:] {
				at = append(at, h.now.Sub(t0))
			}
		}
		return at
	}
	mem := times(false)
	eq(t, mem, []time.Duration{5 * time.Second, 11 * time.Second, 17 * time.Second}, "polls every 5 s from the first submission (sampled every 3 s)")
	eq(t, times(true), mem, "same instants with a restart before every input")
}

// Limits.MaxPollRefs splits a destination's poll into several; a ref
// counts one plus its ranges, as the receiver counts them (R33).
func TestPollSplit(t *testing.T) {
	cfg := testConfig()
	cfg.Limits.MaxPollRefs = 4
	cfg.PollInterval = time.Second / 2
	h := newHarness(t, cfg)
	for _, k := range []string{"a", "b", "c"} {
		h.submit(pollSub(k, "d", ackReq))
	}
	h.at(time.Second / 2)
	eq(t, len(h.polls), 2, "two polls")
	eq(t, [2]int{len(h.polls[0].Refs), len(h.polls[1].Refs)}, [2]int{2, 1}, "refs per poll")
}

// D16 "with Poll, after a failed poll": once its retries are exhausted a
// Poll-pattern message is polled at once; if that poll fails (or answers
// without its ack) the message fails RetriesExhausted and, in an ordered
// group, the group is aborted. An ack in the poll answer saves it.
func TestPollFailureAfterRetries_D16(t *testing.T) {
	cfg := testConfig()
	cfg.PollInterval = time.Hour
	h := newHarness(t, cfg)
	g := h.submit(pollSub("o", "d", ordered)).GroupID
	h.submit(pollSub("o", "d", ordered))
	s := h.submit(pollSub("", "d", ackReq)).GroupID
	h.run(11 * time.Second) // resends at 1, 3, 7; retries exhausted at 11 s
	eq(t, len(h.outcomes), 0, "no failure before the final poll")
	eq(t, len(h.polls), 1, "final poll at once")
	eq(t, h.polls[0].Refs[0], group.PollRef{GroupID: g, Ranges: []group.Range{{From: 0, To: 1}}}, "poll refs")
	h.reply(group.Reply{GroupID: s}) // the answer acknowledges the singleton
	h.step()
	h.apply(h.s.PollResult(h.now, h.polls[0].ID, false))
	eq(t, h.outcomesOf(s), []outcomeLine{{0, Acknowledged, 0, ""}}, "acked by the answer")
	eq(t, h.outcomesOf(g), []outcomeLine{{0, Failed, ReasonRetriesExhausted, ""}, {1, Failed, ReasonGroupAborted, ""}}, "the first keeps its reason, the rest are aborted")
	eq(t, eventsOf(h.events, g)[0].Rule, group.RuleSenderAbort, "ordered group aborted (D16)")
	// Unknown poll ids are ignored.
	eq(t, h.s.PollResult(h.now, 99, false).Empty(), true, "unknown poll")
}

// R26 during the final poll: a retryable fault resumes resending.
func TestPollRetryableFaultResumes_R26(t *testing.T) {
	cfg := testConfig()
	cfg.PollInterval = time.Hour
	h := newHarness(t, cfg)
	s := h.submit(Submission{To: "d", Flags: ackReq, Pattern: group.ReplyPoll, Expiry: t0.Add(20 * time.Second)}).GroupID
	h.run(11 * time.Second)
	h.reply(group.Reply{GroupID: s, Fault: faults.MessageProcessingFailure})
	h.apply(h.s.PollResult(h.now, h.polls[0].ID, true))
	eq(t, len(h.outcomes), 0, "still trying")
	h.run(time.Minute)
	eq(t, len(h.sendsOf(s, 0)) > 4, true, "resent after the transient fault")
	eq(t, h.outcomesOf(s), []outcomeLine{{0, Failed, ReasonExpired, ""}}, "until expiry")
}

// Callback (R31 is the wire layer's): replies POSTed to ReplyTo feed the
// same Replies input; ReplyTo travels in every transmission's header.
func TestCallbackReplies_R18_R31(t *testing.T) {
	h := newHarness(t, testConfig())
	r := h.submit(Submission{GroupKey: "c", Flags: ackReq, Pattern: group.ReplyCallback, ReplyTo: "http://me/cb"})
	eq(t, h.sent[0].Header.ReplyTo, "http://me/cb", "ReplyTo in the header")
	eq(t, h.sent[0].Header.Pattern, group.ReplyCallback, "pattern in the header")
	h.reply(ack(r.GroupID, 0, 0))
	eq(t, h.outcomesOf(r.GroupID), []outcomeLine{{0, Acknowledged, 0, ""}}, "acked by callback")
}

// R36: a transmission without a readable ack is resent on schedule; Sent
// only records the transport result.
func TestSentNoAckResends_R36(t *testing.T) {
	h := newHarness(t, testConfig())
	r := h.submit(Submission{Flags: ackReq})
	rd := h.s.Sent(h.now, r, TransportResult{Kind: TransportHTTPError, Status: 503})
	eq(t, len(rd.Persist)+len(rd.Send)+len(rd.Notify), 0, "nothing to do")
	res, ok := h.s.LastResult(r)
	eq(t, ok, true, "recorded")
	eq(t, res.Status, 503, "status")
	h.at(time.Second)
	eq(t, len(h.sendsOf(r.GroupID, 0)), 2, "resent after the interval")
}

// A group whose acknowledged numbers are fragmented is split over refs of
// at most MaxPollRefs-1 ranges, each Poll within the bound the receiver
// enforces (R33, receiver.poll-too-large), every range asked once.
func TestPollSplitRanges_R33(t *testing.T) {
	cfg := lateConfig()
	cfg.Limits.MaxPollRefs = 4
	h := newHarness(t, cfg)
	var g string
	for range 10 {
		g = h.submit(Submission{GroupKey: "k", Flags: ackReq, Expiry: t0.Add(time.Hour)}).GroupID
	}
	var acks []group.Reply
	for n := uint64(0); n < 10; n += 2 {
		acks = append(acks, ack(g, n, n))
	}
	h.reply(acks...)
	h.run(5 * time.Second)
	var got []group.Range
	for _, p := range h.polls {
		entries := 0
		for _, r := range p.Refs {
			eq(t, r.GroupID, g, "one group")
			entries += 1 + len(r.Ranges)
			got = append(got, r.Ranges...)
		}
		if entries > 4 {
			t.Fatalf("poll with %d entries over the bound of 4: %+v", entries, p)
		}
	}
	eq(t, got, []group.Range{{From: 0, To: 0}, {From: 2, To: 2}, {From: 4, To: 4}, {From: 6, To: 6}, {From: 8, To: 8}}, "every acked number asked once")
	eq(t, len(h.polls), 2, "3 ranges, then 2")
}
