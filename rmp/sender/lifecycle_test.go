package sender

import (
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

var ordered = group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: true}

// D16 (2): a message of an ordered group reaches its ExpiryTime unacked:
// it fails Expired, every other unacked message GroupAborted, the group
// terminates under d16 and the key opens a new group once reported.
func TestOrderedExpiryAbortsGroup_D16(t *testing.T) {
	scenario(t, testConfig(), func(h *harness) {
		g := h.submit(Submission{GroupKey: "o", Flags: ordered, Expiry: t0.Add(100 * time.Second)}).GroupID
		h.submit(Submission{GroupKey: "o", Flags: ordered, Expiry: t0.Add(2 * time.Second)})
		h.submit(Submission{GroupKey: "o", Flags: ordered, Expiry: t0.Add(100 * time.Second)})
		h.reply(ack(g, 0, 0))
		h.run(2 * time.Second)
		eq(t, len(h.outcomesOf(g)), 1, "nothing before expiry")
		h.run(3 * time.Second)
		eq(t, h.outcomesOf(g), []outcomeLine{{0, Acknowledged, 0, ""}, {1, Failed, ReasonExpired, ""}, {2, Failed, ReasonGroupAborted, ""}}, "D16 outcomes")
		eq(t, h.events[0], Event{Kind: EventTerminated, GroupID: g, Rule: group.RuleSenderAbort, At: group.PassDeadline(t0.Add(2 * time.Second))}, "terminated d16")
		n := h.submit(Submission{GroupKey: "o", Flags: ordered})
		if n.GroupID == g {
			t.Fatal("no new message in an aborted group (D16)")
		}
		h.run(time.Hour)
		eq(t, len(h.sendsOf(g, 2)), 2, "message 2 was resent once before the abort, never after")
	})
}

// D16 (1): retries exhausted in an ordered group aborts it; the cause keeps
// its own reason. A terminal fault does the same.
func TestOrderedFailureAbortsGroup_D16(t *testing.T) {
	scenario(t, testConfig(), func(h *harness) {
		g := h.submit(Submission{GroupKey: "o", Flags: ordered}).GroupID
		h.submit(Submission{GroupKey: "o", Flags: ordered})
		h.at(500 * time.Millisecond)
		h.reply(ack(g, 1, 1))
		h.submit(Submission{GroupKey: "o", Flags: ordered})
		h.run(time.Minute)
		eq(t, h.outcomesOf(g), []outcomeLine{{1, Acknowledged, 0, ""}, {0, Failed, ReasonRetriesExhausted, ""}, {2, Failed, ReasonGroupAborted, ""}}, "retries exhausted")

		f := h.submit(Submission{GroupKey: "p", Flags: ordered}).GroupID
		h.submit(Submission{GroupKey: "p", Flags: ordered})
		h.reply(group.Reply{GroupID: f, Sequenced: true, Ranges: []group.ReplyRange{{From: 0, To: 0, Fault: faults.InvalidMessageParameters}}})
		eq(t, h.outcomesOf(f), []outcomeLine{{0, Failed, ReasonFaultReceived, "InvalidMessageParameters"}, {1, Failed, ReasonGroupAborted, ""}}, "terminal fault")
	})
}

// An unordered group survives one message's failure (D16 is for ordered
// groups only).
func TestUnorderedFailureKeepsGroup_D16(t *testing.T) {
	scenario(t, testConfig(), func(h *harness) {
		a := h.submit(Submission{GroupKey: "u", Flags: ackReq, Expiry: t0.Add(2 * time.Second)})
		h.submit(Submission{GroupKey: "u", Flags: ackReq})
		h.run(2500 * time.Millisecond)
		eq(t, h.outcomesOf(a.GroupID), []outcomeLine{{0, Failed, ReasonExpired, ""}}, "only the expired one")
		b := h.submit(Submission{GroupKey: "u", Flags: ackReq})
		eq(t, b, MessageRef{GroupID: a.GroupID, Number: 2}, "same group continues")
	})
}

// D20 t1: groupExpiryTime passes: terminate, remove once the late-fault
// window of the acked messages has passed (R94). Late-fault polls off: the
// window is then ExpiryTime + LateFaultGrace (late_test.go has them on).
func TestT1_D20(t *testing.T) {
	cfg := testConfig()
	cfg.NoLateFaultPolls = true
	scenario(t, cfg, func(h *harness) {
		ge := t0.Add(10 * time.Second)
		g := h.submit(Submission{GroupKey: "k", Flags: ackReq, Timing: group.Timing{Expiry: ge}, Expiry: ge}).GroupID
		h.reply(ack(g, 0, 0))
		h.run(time.Hour)
		eq(t, h.events, []Event{
			{Kind: EventTerminated, GroupID: g, Rule: group.RuleT1, At: group.PassDeadline(ge)},
			{Kind: EventRemoved, GroupID: g, Rule: group.RuleT1, At: group.PassDeadline(ge.Add(time.Minute))},
		}, "t1")
		n := h.submit(Submission{GroupKey: "k", Flags: ackReq, Timing: group.Timing{Expiry: t0.Add(2 * time.Hour)}})
		if n.GroupID == g {
			t.Fatal("R34: terminated group reused")
		}
	})
}

// D21 t2, R35: idle is measured from the last send, resends included.
func TestT2IdleFromLastSend_D21_R35(t *testing.T) {
	scenario(t, testConfig(), func(h *harness) {
		idle := group.Timing{HasMaxIdle: true, MaxIdle: group.Fixed(5 * time.Second)}
		g := h.submit(Submission{GroupKey: "k", Flags: ackReq, Timing: idle}).GroupID
		// Sends at 0,1,3,7; fails at 11; idle since 7 ends at 12 s + 1 ns.
		h.run(time.Hour)
		eq(t, h.outcomesOf(g), []outcomeLine{{0, Failed, ReasonRetriesExhausted, ""}}, "retries exhausted")
		eq(t, h.events[0], Event{Kind: EventTerminated, GroupID: g, Rule: group.RuleT2, At: group.PassDeadline(t0.Add(12 * time.Second))}, "t2 from the last resend")
	})
}

// D21: a group idle while a message still waits for its resend terminates
// and the message fails GroupAborted (no state is kept for it).
func TestT2WithPendingMessage_D21(t *testing.T) {
	cfg := testConfig()
	cfg.Retry = RetryPolicy{Interval: 10 * time.Second, Backoff: 1, MaxInterval: 10 * time.Second, MaxRetries: 3}
	scenario(t, cfg, func(h *harness) {
		idle := group.Timing{HasMaxIdle: true, MaxIdle: group.Fixed(2 * time.Second)}
		g := h.submit(Submission{GroupKey: "k", Flags: ackReq, Timing: idle}).GroupID
		h.run(time.Minute)
		eq(t, h.outcomesOf(g), []outcomeLine{{0, Failed, ReasonGroupAborted, ""}}, "pending message at t2")
		eq(t, h.events[0].Rule, group.RuleT2, "t2")
		eq(t, len(h.sent), 1, "no resend after termination")
	})
}

// D22 t3.1: last sent, the group has timing, everything acknowledged:
// terminated at once.
func TestT31_D22(t *testing.T) {
	scenario(t, testConfig(), func(h *harness) {
		idle := group.Timing{HasMaxIdle: true, MaxIdle: group.Fixed(time.Hour)}
		g := h.submit(Submission{GroupKey: "k", Flags: ackReq, Timing: idle}).GroupID
		h.submit(Submission{GroupKey: "k", Flags: ackReq, Timing: idle, Last: true})
		h.at(time.Second / 2)
		h.reply(ack(g, 0, 0))
		eq(t, len(h.events), 0, "incomplete: not yet")
		h.reply(ack(g, 1, 1))
		eq(t, h.events[0], Event{Kind: EventTerminated, GroupID: g, Rule: group.RuleT31, At: t0.Add(time.Second / 2)}, "t3.1")
	})
}

// t0: no timing, no last, all settled: the group ends when its max
// ExpiryTime passes (R58 counterpart on the sending side).
func TestT0_NoTimingNoLast(t *testing.T) {
	scenario(t, testConfig(), func(h *harness) {
		g := h.submit(Submission{GroupKey: "k", Flags: ackReq, Expiry: t0.Add(30 * time.Second)}).GroupID
		h.reply(ack(g, 0, 0))
		h.run(time.Hour)
		eq(t, h.events[0], Event{Kind: EventTerminated, GroupID: g, Rule: group.RuleT0, At: group.PassDeadline(t0.Add(30 * time.Second))}, "t0")
		eq(t, h.events[1].Kind, EventRemoved, "removed")
	})
}

// Operator delete: unacked messages fail GroupAborted, the group
// terminates; its state stays while its acknowledged message can still get
// a late fault (D13, late_test.go); the key is blocked until the outcomes
// are handled.
func TestOperatorAbort(t *testing.T) {
	scenario(t, testConfig(), func(h *harness) {
		g := h.submit(Submission{GroupKey: "k", Flags: ackReq}).GroupID
		h.submit(Submission{GroupKey: "k", Flags: ackReq})
		h.reply(ack(g, 0, 0))
		h.hold = true
		h.step()
		h.apply(h.s.Abort(h.now, g))
		eq(t, h.outcomesOf(g), []outcomeLine{{0, Acknowledged, 0, ""}, {1, Failed, ReasonGroupAborted, ""}}, "abort outcomes")
		eq(t, h.events, []Event{{Kind: EventTerminated, GroupID: g, Rule: group.RuleDeleted, At: t0}}, "events")
		gi, ok := h.s.Group(g)
		eq(t, ok && gi.Terminated && gi.Rule == group.RuleDeleted, true, "kept, terminated: %+v", gi)
		eq(t, gi.Acked, []group.Range{{From: 0, To: 0}}, "acked number kept for a late fault")
		if err := h.submitErr(Submission{GroupKey: "k", Flags: ackReq}); !isAborted(err) {
			t.Fatalf("blocked key: %v", err)
		}
		h.hold = false
		h.handle(h.outcomes[1].ID)
		if r := h.submit(Submission{GroupKey: "k", Flags: ackReq}); r.GroupID == g {
			t.Fatal("reopened into the deleted group")
		}
	})
}

// D27: outcomes the producer has not handled survive a restart and are
// re-emitted once by the next Ready; handled ones never come back.
func TestOutboxReplay_D27(t *testing.T) {
	h := newHarness(t, testConfig())
	h.hold = true
	a := h.submit(Submission{Flags: ackReq})
	b := h.submit(Submission{Flags: ackReq})
	h.reply(group.Reply{GroupID: a.GroupID}, group.Reply{GroupID: b.GroupID})
	eq(t, len(h.outcomes), 2, "two outcomes")
	eq(t, h.s.Stats().Groups, 2, "acked singletons wait for late faults")
	h.hold = false
	h.handle(h.outcomes[0].ID)
	h.restart()
	rd := h.s.Tick(h.now)
	eq(t, len(rd.Notify), 1, "unhandled outcome replayed")
	eq(t, rd.Notify[0], h.outcomes[1], "same outcome, same id")
	rd2 := h.s.Tick(h.now)
	eq(t, len(rd2.Notify), 0, "replayed once per recovery")
	h.st.apply(rd.Persist)
	h.handle(rd.Notify[0].ID)
	h.restart()
	eq(t, len(h.s.Tick(h.now).Notify), 0, "nothing left after handling")
	// Counters survive: the next ids are fresh (R05, D27).
	c := h.submit(Submission{Flags: ackReq})
	eq(t, c.GroupID, "mid:2.test@wsrkit", "group counter persisted")
}

// R34: a submit after the key's group ended by time, before any Tick
// applied it, opens a new group; the old one still terminates under its own
// rule and never takes the key back, across restarts too.
func TestKeyMovesOnBeforeTick_R34(t *testing.T) {
	scenario(t, testConfig(), func(h *harness) {
		idle := group.Timing{HasMaxIdle: true, MaxIdle: group.Fixed(time.Second)}
		old := h.submit(Submission{GroupKey: "k", Flags: ackReq, Timing: idle}).GroupID
		h.reply(ack(old, 0, 0))
		h.now = t0.Add(2 * time.Second) // no Tick in between
		n := h.submit(Submission{GroupKey: "k", Flags: ackReq, Timing: idle})
		if n.GroupID == old || n.Number != 0 {
			t.Fatalf("idle group reused: %+v", n)
		}
		h.at(2 * time.Second)
		eq(t, eventsOf(h.events, old)[0].Rule, group.RuleT2, "old group ends by t2")
		m := h.submit(Submission{GroupKey: "k", Flags: ackReq, Timing: idle})
		eq(t, m, MessageRef{GroupID: n.GroupID, Number: 1}, "key stays with the new group")
	})
}
