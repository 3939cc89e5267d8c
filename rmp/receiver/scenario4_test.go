package receiver

import (
	"testing"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// Scenarios of the D13/Poll follow-up and of the stored schedules; each is
// also replayed with a restart at every checkpoint (TestScenarios).
func init() {
	scenarios = append(scenarios, pollFaultScenarios...)
}

var pollFaultScenarios = []scenario{
	{
		// D13, D24: a resend after the d14 termination opens generation 2;
		// the poll answer still carries generation 1's fault about the
		// message acknowledged while held, and its ack of 0.
		name: "poll-every-generation", ids: "D13 D24 R77 R81",
		run: func(h *harness) {
			h.msg(seq("o", 0, pollP, ordered, exp(hr)))
			h.msg(seq("o", 2, pollP, ordered, exp(sec)))
			h.cp()
			h.at(2 * sec)
			h.tick()
			h.cp()
			h.msg(seq("o", 1, pollP, ordered, exp(hr)))
			h.cp()
			h.poll(PollRequest{Refs: []group.PollRef{{GroupID: "o", Ranges: []group.Range{{From: 0, To: 2}}}}})
			h.poll(PollRequest{Refs: []group.PollRef{{GroupID: "o"}}}) // A13: all of it, every generation
		},
		want: `
deliver o#1/0
held o#1/2
terminated o#1 d14
discarded o#1/2 MessageExpired receiver.order-abort
generation o#2
held o#2/1
poll o[0-1 2!MessageExpired]
poll o[0-1 2!MessageExpired]`,
	},
	{
		// D13: a Poll fault about the message with the group's latest
		// ExpiryTime would go with the group at that instant; it stays
		// answerable FaultRetention (1 h) longer, then the state goes.
		name: "poll-fault-retained", ids: "D13 R81",
		run: func(h *harness) {
			h.msg(seq("o", 0, pollP, ordered, exp(sec)))
			h.msg(seq("o", 2, pollP, ordered, exp(2*sec)))
			h.failTake = true // the consumer refuses it until it expires (D12)
			h.msg(single("s", pollP, exp(sec)))
			h.failTake = false
			h.cp()
			h.at(3 * sec)
			h.tick()
			h.cp()
			h.at(hr)
			h.poll(PollRequest{Refs: []group.PollRef{{GroupID: "o", Ranges: []group.Range{{From: 0, To: 2}}}, {GroupID: "s"}}})
			h.cp()
			h.at(hr + 3*sec)
			h.tick()
			h.poll(PollRequest{Refs: []group.PollRef{{GroupID: "o", Ranges: []group.Range{{From: 0, To: 2}}}, {GroupID: "s"}}})
		},
		want: `
deliver o#1/0
held o#1/2
deliver s#1
terminated o#1 d14
discarded o#1/2 MessageExpired receiver.order-abort
discarded s#1 MessageExpired receiver.expired-awaiting-delivery
poll o[0 2!MessageExpired] s!MessageExpired
removed o#1 d14
removed s#1 singleton
poll -`,
	},
	{
		// R92: a refused hand-off is retried at its stored instant after a
		// restart, not at once; Attempt keeps counting.
		name: "handoff-retry-schedule", ids: "R92 R47",
		cfg: Config{DeliveryRetry: Backoff{Initial: 2 * sec, Factor: 2, Max: 10 * sec}},
		run: func(h *harness) {
			h.failTake = true
			h.msg(seq("g", 0, exp(hr)))
			h.cp()
			h.at(sec)
			h.tick() // not due yet
			h.cp()
			h.at(2 * sec)
			h.tick() // second attempt, refused: next at 2 s + 4 s
			h.cp()
			h.failTake = false
			h.at(5 * sec)
			h.tick()
			h.cp()
			h.at(6 * sec)
			h.tick()
		},
		want: `
deliver g#1/0
reply g[0]
deliver g#1/0
deliver g#1/0`,
	},
	{
		// R75: a failed callback URL is retried after its stored back-off
		// after a restart, not at once.
		name: "callback-backoff-schedule", ids: "R75 R93",
		cfg: Config{CallbackRetry: Backoff{Initial: 4 * sec, Factor: 2, Max: 10 * sec}},
		run: func(h *harness) {
			h.cbFail = true
			h.msg(seq("g", 0, cb("http://a/cb"), exp(hr)))
			h.cp()
			h.at(3 * sec)
			h.tick()
			h.cp()
			h.msg(seq("g", 1, cb("http://a/cb"), exp(hr))) // queued behind the back-off
			h.cp()
			h.cbFail = false
			h.at(4 * sec)
			h.tick()
		},
		want: `
deliver g#1/0
callback http://a/cb g[0]
deliver g#1/1
callback http://a/cb g[0-1]`,
	},
}

// R92: the attempt count and the retry instant of a refused hand-off come
// back from the store; the retry record goes once the message is taken.
func TestHandoffRetryStored_R92(t *testing.T) {
	h := newHarness(t, Config{DeliveryRetry: Backoff{Initial: 2 * sec, Factor: 2, Max: 10 * sec}})
	h.failTake = true
	h.msg(seq("g", 0, exp(hr)))
	h.restart()
	at, ok := h.r.NextDeadline()
	if !ok || !at.Equal(t0.Add(2*sec)) {
		t.Fatalf("recovered deadline %v %v, want the stored retry at 2 s", at, ok)
	}
	var attempts []int
	h.onReady = func(rd Ready) {
		for _, d := range rd.Deliver {
			attempts = append(attempts, d.Attempt)
		}
	}
	h.failTake = false
	h.at(2 * sec)
	h.tick()
	if len(attempts) != 1 || attempts[0] != 2 {
		t.Fatalf("attempts after restart %v, want [2]", attempts)
	}
	for k := range h.st.recs {
		if k.Kind == kindHandoffRetry || k.Kind == group.KindDelivery {
			t.Fatalf("record %+v left after Taken", k)
		}
	}
}

// R75: a URL's back-off record is stored on failure and deleted on success.
func TestCallbackBackoffStored_R75(t *testing.T) {
	h := newHarness(t, Config{CallbackRetry: Backoff{Initial: 4 * sec, Factor: 2, Max: 10 * sec}})
	h.cbFail = true
	h.msg(seq("g", 0, cb("http://a/cb"), exp(hr)))
	urlRecs := func() int {
		n := 0
		for k := range h.st.recs {
			if k.GroupID == "" && k.Kind == group.KindMeta {
				n++
			}
		}
		return n
	}
	if urlRecs() != 1 {
		t.Fatalf("%d URL back-off records after a failure, want 1", urlRecs())
	}
	h.restart()
	if at, ok := h.r.NextDeadline(); !ok || !at.Equal(t0.Add(4*sec)) {
		t.Fatalf("recovered deadline %v %v, want the back-off at 4 s", at, ok)
	}
	h.cbFail = false
	h.at(4 * sec)
	h.tick()
	if urlRecs() != 0 {
		t.Fatalf("%d URL back-off records after a success, want 0", urlRecs())
	}
	if h.r.Stats().PendingCallbacks != 0 {
		t.Fatalf("callbacks still pending: %+v", h.r.Stats())
	}
}
