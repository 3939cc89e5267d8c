package receiver

import (
	"testing"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// deliveryScenarios are the scenarios of one topic: delivery, duplicates,
// ordering, acknowledgements and hand-off retries (D8, D9, D12, D14,
// D17–D19, R39–R50, R65, R82, R92). Each is also replayed with a restart at
// every checkpoint (TestScenarios).
var deliveryScenarios = []scenario{
	{
		name: "in-order-unordered-group", ids: "D8 R40 R41 R72",
		run: func(h *harness) {
			h.msg(seq("g", 0))
			h.cp()
			h.msg(seq("g", 1))
			h.cp()
			h.msg(seq("n", 0, noAck)) // A16/R82: no ack
		},
		want: `
deliver g#1/0
reply g[0]
deliver g#1/1
reply g[1]
deliver n#1/0`,
	},
	{
		name: "expired-on-arrival-boundary", ids: "D9 D11 R39 R82",
		run: func(h *harness) {
			h.at(10 * sec)
			h.msg(seq("g", 0, exp(10*sec))) // exactly at ExpiryTime: still valid
			h.at(10*sec + 1)
			h.msg(seq("g", 1, exp(10*sec))) // +1ns: expired
			h.msg(seq("g", 2, exp(10*sec), noAck))
			h.msg(single("s", exp(10*sec)))
		},
		want: `
deliver g#1/0
reply g[0]
reply g[1!MessageExpired]
refused g#0/1 MessageExpired receiver.expired-on-arrival
refused g#0/2 MessageExpired receiver.expired-on-arrival
reply s!MessageExpired
refused s#0 MessageExpired receiver.expired-on-arrival`,
	},
	{
		name: "duplicates", ids: "D17 D18 R42 R43 R44 R45 R46 D19 A10",
		run: func(h *harness) {
			h.msg(seq("de", 0))
			h.cp()
			h.msg(seq("de", 0)) // re-acked, not redelivered
			h.msg(seq("nde", 0, noDE))
			h.cp()
			h.msg(seq("nde", 0, noDE)) // R46: delivered again
			h.msg(seq("ord", 0, noDE, ordered))
			h.cp()
			h.msg(seq("ord", 0, noDE, ordered)) // D19: never again in order
			h.msg(single("s"))
			h.process(h.r.Respond(h.now, DeliveryRef{Group: group.ID{GroupID: "s", Generation: 1}}, []byte("<quote/>")))
			h.cp()
			h.msg(single("s")) // D18: cached business response
		},
		want: `
deliver de#1/0
reply de[0]
reply de[0]
duplicate de#1/0
deliver nde#1/0
reply nde[0]
deliver nde#1/0
reply nde[0]
duplicate nde#1/0
deliver ord#1/0
reply ord[0]
reply ord[0]
duplicate ord#1/0
deliver s#1
reply s
reply s
response <quote/>
duplicate s#1`,
	},
	{
		name: "ordering-holds-and-releases", ids: "D8 D14 R47 R48 R49 R50",
		run: func(h *harness) {
			h.msg(seq("o", 0, ordered))
			h.msg(seq("o", 2, ordered))
			h.cp()
			h.msg(seq("o", 3, ordered))
			h.cp()
			h.msg(seq("o", 1, ordered))
		},
		want: `
deliver o#1/0
reply o[0]
reply o[2]
held o#1/2
reply o[3]
held o#1/3
deliver o#1/1
reply o[1]
deliver o#1/2
deliver o#1/3`,
	},
	{
		name: "ack-on-delivery", ids: "D8 D13 R41 R50",
		cfg: Config{AckOnDelivery: true},
		run: func(h *harness) {
			h.msg(seq("o", 1, ordered)) // held: answered at once without a Response header
			h.cp()
			h.msg(seq("o", 1, ordered)) // duplicate of a held message: still no ack
			h.msg(seq("o", 0, ordered)) // taken after its exchange: the acks wait
			h.cp()
			h.poll(PollRequest{Refs: []group.PollRef{{GroupID: "o", Ranges: []group.Range{{From: 0, To: 5}}}}})
			h.msg(seq("o", 2, ordered)) // the next Response of the group carries them
			h.cp()
			h.msg(seq("o", 1, ordered)) // R44: acked again, with 2's waiting ack
			h.msg(seq("o", 3, ordered)) // nothing waits any more
		},
		want: `
held o#1/1
duplicate o#1/1
deliver o#1/0
deliver o#1/1
poll o[0-1]
deliver o#1/2
reply o[0-1]
reply o[1-2]
duplicate o#1/1
deliver o#1/3`,
	},
	{
		name: "order-abort-on-held-expiry", ids: "D14 D24 R51 R52 R56 D13",
		run: func(h *harness) {
			h.msg(seq("o", 0, ordered))
			h.msg(seq("o", 2, ordered, exp(10*sec)))
			h.msg(seq("o", 3, ordered))
			h.cp()
			at, _ := h.r.NextDeadline()
			h.log = append(h.log, "deadline "+at.Sub(t0).String())
			h.at(10 * sec)
			h.tick() // exactly at ExpiryTime: nothing
			h.at(10*sec + 1)
			h.tick()
			h.cp()
			h.msg(seq("o", 3, ordered)) // recorded: duplicate with its fault (D24)
			h.msg(seq("o", 5, ordered)) // new generation, waits for 0 (D24)
			h.msg(seq("o", 0, ordered)) // recorded in generation 1: duplicate (D24)
		},
		want: `
deliver o#1/0
reply o[0]
reply o[2]
held o#1/2
reply o[3]
held o#1/3
deadline 10.000000001s
terminated o#1 d14
discarded o#1/2 MessageExpired receiver.order-abort
discarded o#1/3 GroupAborted receiver.order-abort
reply o[2!MessageExpired 3!GroupAborted]
duplicate o#1/3
reply o[5]
generation o#2
held o#2/5
reply o[0]
duplicate o#1/0`,
	},
	{
		name: "delivery-retry-then-expiry", ids: "D12 D13 R65",
		run: func(h *harness) {
			h.failTake = true
			h.msg(seq("u", 0, exp(3*sec)))
			h.at(1 * sec)
			h.tick() // retry due at 1s
			h.failTake = false
			h.at(4 * sec)
			h.tick() // expired while awaiting hand-off
			h.msg(seq("u", 1))
		},
		want: `
deliver u#1/0
reply u[0]
deliver u#1/0
discarded u#1/0 MessageExpired receiver.expired-awaiting-delivery
terminated u#1 t0
deliver u#2/1
reply u[0!MessageExpired 1]
generation u#2`,
	},
	{
		name: "ordered-waits-behind-failed-handoff", ids: "D14 R49",
		cfg: Config{DeliveryRetry: Backoff{Initial: sec, Max: sec}},
		run: func(h *harness) {
			h.failTake = true
			h.msg(seq("o", 0, ordered))
			h.failTake = false
			h.msg(seq("o", 1, ordered)) // waits: 0 is not taken yet
			h.at(sec)
			h.tick()
		},
		want: `
deliver o#1/0
reply o[0]
reply o[1]
deliver o#1/0
deliver o#1/1`,
	},
	{
		name: "ordered-pending-expiry-aborts-after-gap", ids: "D12 D14",
		cfg: Config{DeliveryRetry: Backoff{Initial: 10 * sec, Max: 10 * sec}},
		run: func(h *harness) {
			h.failTake = true
			h.msg(seq("o", 0, ordered, exp(5*sec)))
			h.failTake = false
			h.msg(seq("o", 1, ordered))
			h.cp()
			h.at(5*sec + 1)
			h.tick()
			h.msg(seq("o", 2, ordered)) // the aborted generation's successor
		},
		want: `
deliver o#1/0
reply o[0]
reply o[1]
terminated o#1 d14
discarded o#1/0 MessageExpired receiver.order-abort
discarded o#1/1 GroupAborted receiver.order-abort
reply o[0!MessageExpired 1!GroupAborted 2]
generation o#2
held o#2/2`,
	},
	{
		name: "no-ack-requested-still-faults", ids: "R82 A16 D12",
		run: func(h *harness) {
			h.msg(seq("o", 1, ordered, noAck, exp(sec)))
			h.msg(seq("o", 2, ordered, noAck, noDE)) // flags changed: the fault is sent anyway
			h.at(2 * sec)
			h.tick() // no AckRequested: discarded silently
		},
		want: `
held o#1/1
reply o[2!InvalidMessageParameters]
refused o#1/2 InvalidMessageParameters receiver.flags-changed
terminated o#1 d14
discarded o#1/1 MessageExpired receiver.order-abort
removed o#1 d14`,
	},
	{
		name: "strict-dialect", ids: "D6",
		cfg: Config{Dialect: faults.Strict11, MaxHeldPerGroup: 1},
		run: func(h *harness) {
			h.msg(seq("o", 1, ordered))
			h.msg(seq("o", 2, ordered))
			h.at(2 * hr)
			h.msg(seq("o", 3, ordered, exp(hr)))
		},
		want: `
reply o[1]
held o#1/1
reply o[2!MessageProcessingFailure]
refused o#1/2 MessageStoreOverflow receiver.held-overflow-group
reply o[3!PermanentProcessingFailure]
refused o#0/3 MessageExpired receiver.expired-on-arrival`,
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
