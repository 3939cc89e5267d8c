package sender

import (
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// answerer is a receiving RMP's poll answers for late-fault tests: the
// entries to answer a Poll with, and whether the exchange succeeded.
type answerer func(p Poll) ([]group.Reply, bool)

// runPolls ticks at every deadline up to t0+d like run, answering each
// Poll at once (in the same step, so a restart never loses its id).
func (h *harness) runPolls(d time.Duration, answer answerer) {
	h.t.Helper()
	h.runThen(d, func(rd Ready) {
		for _, p := range rd.Polls {
			rs, ok := answer(p)
			if ok && len(rs) > 0 {
				h.apply(h.s.Replies(h.now, rs))
			}
			h.apply(h.s.PollResult(h.now, p.ID, ok))
		}
	})
}

// clean answers every poll with an ack of everything it asks about.
func clean(p Poll) ([]group.Reply, bool) {
	var rs []group.Reply
	for _, r := range p.Refs {
		if len(r.Ranges) == 0 {
			rs = append(rs, group.Reply{GroupID: r.GroupID})
			continue
		}
		e := group.Reply{GroupID: r.GroupID, Sequenced: true}
		for _, q := range r.Ranges {
			e.Ranges = append(e.Ranges, group.ReplyRange{From: q.From, To: q.To})
		}
		rs = append(rs, e)
	}
	return rs, true
}

func lateConfig() Config {
	cfg := testConfig()
	cfg.PollInterval = 5 * time.Second
	cfg.PollIntervalMax = 40 * time.Second
	cfg.LateFaultMargin = 30 * time.Second
	return cfg
}

// D8, D12, D13, R77: under the Response pattern a message acknowledged at
// accept and later discarded by the receiver (it expired behind a gap)
// reaches the producer as Failed with no further traffic from it: the
// sender polls the acknowledged numbers and the poll answer carries the
// fault. Also across a restart after every input.
func TestLateFaultPolledUnderResponse_D13_R77(t *testing.T) {
	scenario(t, lateConfig(), func(h *harness) {
		g := h.submit(Submission{GroupKey: "k", Flags: ackReq, Expiry: t0.Add(20 * time.Second)}).GroupID
		h.submit(Submission{GroupKey: "k", Flags: ackReq, Expiry: t0.Add(20 * time.Second)})
		h.reply(ack(g, 0, 1))
		discarded := false
		h.runPolls(time.Minute, func(p Poll) ([]group.Reply, bool) {
			eq(t, p.Refs, []group.PollRef{{GroupID: g, Ranges: []group.Range{{From: 0, To: 1}}}}, "acked numbers asked about")
			if h.now.Before(t0.Add(20 * time.Second)) {
				return clean(p)
			}
			discarded = true
			return []group.Reply{{GroupID: g, Sequenced: true, Ranges: []group.ReplyRange{{From: 0, To: 0}, {From: 1, To: 1, Fault: faults.MessageExpired}}}}, true
		})
		eq(t, discarded, true, "polled after the expiry")
		eq(t, h.outcomesOf(g), []outcomeLine{{0, Acknowledged, 0, ""}, {1, Acknowledged, 0, ""}, {1, Failed, ReasonFaultReceived, "MessageExpired"}}, "acked, then failed by the polled fault")
	})
}

// Bounded cost: one PollRequest per destination per interval with every
// group at risk; the interval doubles from PollInterval up to
// PollIntervalMax while answers are clean and a fault resets it; the last
// poll is the first one at or after ExpiryTime + LateFaultMargin; then the
// group is no longer asked about and, terminated, is removed.
func TestLateFaultPollBackoffAndWindow_D13(t *testing.T) {
	scenario(t, lateConfig(), func(h *harness) {
		exp := t0.Add(3 * time.Minute)
		a := h.submit(Submission{GroupKey: "a", Flags: ackReq, Expiry: exp, Last: true}).GroupID
		b := h.submit(Submission{GroupKey: "b", Flags: ackReq, Expiry: exp, Last: true}).GroupID
		s := h.submit(Submission{Flags: ackReq, Expiry: exp}).GroupID
		h.reply(ack(a, 0, 0), ack(b, 0, 0), group.Reply{GroupID: s})
		var at []time.Duration
		h.runPolls(time.Hour, func(p Poll) ([]group.Reply, bool) {
			eq(t, len(p.Refs), 3, "every group at risk in one poll: %+v", p)
			at = append(at, h.now.Sub(t0))
			return clean(p)
		})
		// 5 s, then +5 (the doubling takes effect one firing later), +10,
		// +20, +40 (cap) ... until the first poll at or after 3 m 30 s.
		want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second,
			120 * time.Second, 160 * time.Second, 200 * time.Second, 240 * time.Second}
		eq(t, at, want, "poll instants")
		for _, id := range []string{a, b, s} {
			if _, ok := h.s.Group(id); ok {
				t.Fatalf("group %s still held after its window was answered", id)
			}
		}
		eq(t, h.s.Stats().Timers, 0, "nothing left to do")
	})
}

// A fault in a poll answer resets the interval; a failed poll too.
func TestLateFaultPollBackoffReset_D13(t *testing.T) {
	h := newHarness(t, lateConfig())
	g := h.submit(Submission{GroupKey: "k", Flags: ackReq, Expiry: t0.Add(time.Hour)}).GroupID
	h.submit(Submission{GroupKey: "k", Flags: ackReq, Expiry: t0.Add(time.Hour)})
	h.reply(ack(g, 0, 1))
	var at []time.Duration
	h.runPolls(3*time.Minute, func(p Poll) ([]group.Reply, bool) {
		at = append(at, h.now.Sub(t0))
		switch h.now.Sub(t0) {
		case 40 * time.Second:
			return []group.Reply{{GroupID: g, Sequenced: true, Ranges: []group.ReplyRange{{From: 1, To: 1, Fault: faults.MessageExpired}}}}, true
		case 120 * time.Second:
			return nil, false
		}
		return clean(p)
	})
	// A doubling takes effect from the next firing; a reset at once.
	eq(t, at, []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 45 * time.Second, 50 * time.Second,
		60 * time.Second, 80 * time.Second, 120 * time.Second, 125 * time.Second, 130 * time.Second, 140 * time.Second, 160 * time.Second}, "poll instants")
	eq(t, h.outcomesOf(g)[2], outcomeLine{1, Failed, ReasonFaultReceived, "MessageExpired"}, "late fault")
}

// Nothing is polled for a destination whose receiver acks on delivery (D8),
// for best-effort messages, or for Callback groups whose callbacks came
// back in time; a Callback group that needed a resend is polled (its
// channel lost or delayed an answer). Late-fault polling off: a Response
// group is never polled.
func TestLateFaultPollScope_D8_D13(t *testing.T) {
	cfg := lateConfig()
	cfg.Destinations = map[string]Destination{"http://aod/rmp": {Retry: cfg.Retry, AckOnDelivery: true}}
	h := newHarness(t, cfg)
	aod := h.submit(Submission{GroupKey: "aod", To: "http://aod/rmp", Flags: ackReq}).GroupID
	h.submit(Submission{GroupKey: "be", Flags: group.Flags{}})
	cb := h.submit(Submission{GroupKey: "cb", Flags: ackReq, Pattern: group.ReplyCallback, ReplyTo: "http://s/cb"}).GroupID
	cb2 := h.submit(Submission{GroupKey: "cb2", Flags: ackReq, Pattern: group.ReplyCallback, ReplyTo: "http://s/cb"}).GroupID
	h.reply(ack(aod, 0, 0), ack(cb, 0, 0))
	h.run(1500 * time.Millisecond) // cb2 resent at 1 s: its callback did not come
	h.reply(ack(cb2, 0, 0))
	h.run(10 * time.Second)
	var refs []string
	for _, p := range h.polls {
		eq(t, p.To, "http://r.example/rmp", "no poll to the ack-on-delivery destination")
		for _, r := range p.Refs {
			refs = append(refs, r.GroupID)
		}
	}
	eq(t, refs, []string{cb2}, "only the suspect Callback group")

	off := lateConfig()
	off.NoLateFaultPolls = true
	h = newHarness(t, off)
	g := h.submit(Submission{GroupKey: "k", Flags: ackReq}).GroupID
	h.reply(ack(g, 0, 0))
	h.run(time.Minute)
	eq(t, len(h.polls), 0, "late-fault polls off: Response groups are not polled")
}

// The operator deletes a sending group after one of its messages was
// acknowledged: the group stays (terminated, rule deleted) and polled, so
// the receiver's later fault still fails the message (D13); it goes once
// its window is answered.
func TestLateFaultAfterOperatorDelete_D13(t *testing.T) {
	scenario(t, lateConfig(), func(h *harness) {
		g := h.submit(Submission{GroupKey: "k", Flags: ackReq, Expiry: t0.Add(20 * time.Second)}).GroupID
		h.submit(Submission{GroupKey: "k", Flags: ackReq, Expiry: t0.Add(20 * time.Second)})
		h.reply(ack(g, 0, 0))
		h.step()
		h.apply(h.s.Abort(h.now, g))
		h.runPolls(time.Hour, func(p Poll) ([]group.Reply, bool) {
			if h.now.Before(t0.Add(20 * time.Second)) {
				return clean(p)
			}
			return []group.Reply{{GroupID: g, Sequenced: true, Ranges: []group.ReplyRange{{From: 0, To: 0, Fault: faults.MessageExpired}}}}, true
		})
		eq(t, h.outcomesOf(g), []outcomeLine{{0, Acknowledged, 0, ""}, {1, Failed, ReasonGroupAborted, ""}, {0, Failed, ReasonFaultReceived, "MessageExpired"}}, "abort, then the late fault")
		_, ok := h.s.Group(g)
		eq(t, ok, false, "removed once its window passed")
	})
}

// Stored format: the meta record's late-fault flags and the poll record's
// interval are optional trailing fields; records written before them (as
// the old encoders wrote them) still decode, with both unset.
func TestLateFaultRecordsBackwardCompatible(t *testing.T) {
	g := &groupState{seq: 3, key: "k", to: "http://r/rmp", pattern: group.ReplyCallback, flags: ackReq}
	old := encodeMeta(nil, g, "g")
	g.set(gLateChecked|gCBSuspect, true)
	withFlags := encodeMeta(nil, g, "g")
	eq(t, len(withFlags), len(old)+1, "one trailing byte")
	d, _, err := decodeMeta(old)
	noErr(t, err)
	eq(t, d.has(gLateChecked) || d.has(gCBSuspect), false, "old record: flags unset")
	d, _, err = decodeMeta(withFlags)
	noErr(t, err)
	eq(t, d.has(gLateChecked) && d.has(gCBSuspect), true, "flags read back")
	if _, _, err := decodeMeta(append(old, 0)); err == nil {
		t.Fatal("a zero flags byte is never written: corrupt")
	}

	oldPoll := encodePollRec("http://r/rmp", t0, 0)
	r, err := decodePollRec(oldPoll)
	noErr(t, err)
	eq(t, r, storedPoll{name: "http://r/rmp", at: t0}, "old poll record")
	r, err = decodePollRec(encodePollRec("http://r/rmp", t0, 20*time.Second))
	noErr(t, err)
	eq(t, r.every, 20*time.Second, "interval read back")
}
