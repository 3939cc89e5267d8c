package receiver

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

var printTraces = flag.Bool("print", false, "print scenario traces")

// scenario is a sequence of inputs and the expected trace of effects. Each
// runs once straight through and once per checkpoint with a restart there
// (Recover from the persisted records); every run must give the same trace.
type scenario struct {
	name string
	// ids are the D-/R-ids the scenario pins.
	ids  string
	cfg  Config
	run  func(h *harness)
	want string
}

func runScenario(t *testing.T, sc scenario, restartAt int) (*harness, string) {
	h := newHarness(t, sc.cfg)
	h.restartAt = restartAt
	sc.run(h)
	return h, strings.Join(h.log, "\n")
}

func TestScenarios(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			h, got := runScenario(t, sc, -1)
			if *printTraces {
				fmt.Printf("=== %s (%s)\n%s\n", sc.name, sc.ids, got)
			}
			want := strings.TrimSpace(sc.want)
			if got != want {
				t.Fatalf("%s\ngot:\n%s\nwant:\n%s", sc.ids, got, want)
			}
			for k := 0; k < h.cps; k++ {
				_, again := runScenario(t, sc, k)
				if again != got {
					t.Errorf("restart at checkpoint %d changed the outcome (R91, R93):\n%s\nwant:\n%s", k, again, got)
				}
			}
		})
	}
}

const (
	sec = time.Second
	hr  = time.Hour
)

var scenarios = []scenario{
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
		name: "held-overflow", ids: "D15",
		cfg: Config{MaxHeldPerGroup: 2},
		run: func(h *harness) {
			h.msg(seq("o", 1, ordered))
			h.msg(seq("o", 2, ordered))
			h.cp()
			h.msg(seq("o", 3, ordered))
			h.msg(seq("o", 0, ordered))
			h.cp()
			h.msg(seq("o", 3, ordered))
		},
		want: `
reply o[1]
held o#1/1
reply o[2]
held o#1/2
reply o[3!MessageStoreOverflow]
refused o#1/3 MessageStoreOverflow receiver.held-overflow-group
deliver o#1/0
reply o[0]
deliver o#1/1
deliver o#1/2
deliver o#1/3
reply o[3]`,
	},
	{
		name: "validation", ids: "D3 D7 D25 R38 R57 R60 R61 R62 R63 R64 A6",
		cfg: Config{DisablePoll: true},
		run: func(h *harness) {
			h.msg(seq("", 0))
			h.msg(seq("g", 0, gexp(2*hr), exp(hr)))
			h.msg(seq("g", 2, last))
			h.msg(seq("g", 3))                // after last
			h.msg(seq("g", 1, last))          // last changed
			h.msg(seq("g", 1, noDE))          // flags changed
			h.msg(seq("g", 1, gexp(3*hr)))    // group expiry changed
			h.msg(seq("g", 1, exp(3*hr)))     // later than the group's groupExpiryTime (A6)
			h.msg(seq("g", 1, gexp(2*hr)))    // same value again: fine
			h.msg(single("x", ordered))       // R61
			h.msg(seq("y", 0, cb("ftp://a"))) // R63
			h.msg(seq("y", 0, pollP))         // R64
			h.msg(seq("z", 0, idle(-sec)))    // negative idle
			h.msg(seq("z", 1, exp(3*hr), gexp(2*hr)))
			h.msg(seq("p", 1))
			h.msg(seq("p", 0, gexp(2*hr))) // A6: the first may carry it alone
			h.msg(seq("q", 0))
			h.msg(seq("q", 1, gexp(2*hr))) // timing added after a plain first
			h.msg(single("g"))             // a terminated group's id: new generation (D24)
		},
		want: `
soapfault InvalidRequest receiver.no-group-id
refused #0 InvalidRequest receiver.no-group-id
deliver g#1/0
reply g[0]
deliver g#1/2
reply g[2]
reply g[3!InvalidMessageId]
refused g#1/3 InvalidMessageId receiver.number-after-last
reply g[1!InvalidMessageId]
refused g#1/1 InvalidMessageId receiver.last-changed
reply g[1!InvalidMessageParameters]
refused g#1/1 InvalidMessageParameters receiver.flags-changed
reply g[1!InvalidMessageParameters]
refused g#1/1 InvalidMessageParameters receiver.group-expiry-changed
reply g[1!InvalidExpiryTime]
refused g#1/1 InvalidExpiryTime receiver.expiry-after-group-expiry
deliver g#1/1
reply g[1]
terminated g#1 t3.1
reply x!InvalidMessageParameters
refused x#0 InvalidMessageParameters receiver.order-without-sequence
reply y[0!InvalidReplyPattern]
refused y#0/0 InvalidReplyPattern receiver.callback-without-reply-to
reply y[0!FeatureNotSupported]
refused y#0/0 FeatureNotSupported receiver.reply-pattern-not-supported
reply z[0!InvalidMessageParameters]
refused z#0/0 InvalidMessageParameters receiver.negative-max-idle
reply z[1!InvalidExpiryTime]
refused z#0/1 InvalidExpiryTime receiver.expiry-after-group-expiry
deliver p#1/1
reply p[1]
deliver p#1/0
reply p[0]
deliver q#1/0
reply q[0]
reply q[1!InvalidMessageParameters]
refused q#1/1 InvalidMessageParameters receiver.group-timing-added
deliver g#2
reply g
generation g#2`,
	},
}

var _ = faults.GroupAborted
