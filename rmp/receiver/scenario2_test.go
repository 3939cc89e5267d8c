package receiver

import (
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

func init() { scenarios = append(scenarios, scenarios2...) }

var scenarios2 = []scenario{
	{
		name: "t1-group-expiry", ids: "D20 R53 R51 R52",
		run: func(h *harness) {
			h.msg(seq("g", 0, ordered, gexp(10*sec), exp(10*sec)))
			h.msg(seq("g", 2, ordered, gexp(10*sec), exp(5*sec)))
			h.cp()
			h.at(5*sec + 1)
			h.tick() // D14 first: the held message expired
			h.at(10*sec + 1)
			h.tick() // max expiry passed, but the fault waits for a Response (D13)
			h.at(10*sec + 1 + hr)
			h.tick()
		},
		want: `
deliver g#1/0
reply g[0]
reply g[2]
held g#1/2
terminated g#1 d14
discarded g#1/2 MessageExpired receiver.order-abort
removed g#1 d14`,
	},
	{
		name: "t1-then-t3.2", ids: "D20 D22 R53",
		run: func(h *harness) {
			h.msg(seq("g", 0, gexp(10*sec), exp(10*sec)))
			h.msg(seq("g", 2, last, gexp(10*sec), exp(10*sec)))
			h.cp()
			h.at(10 * sec)
			h.tick()
			h.at(10*sec + 1)
			h.tick()
		},
		want: `
deliver g#1/0
reply g[0]
deliver g#1/2
reply g[2]
terminated g#1 t3.2
removed g#1 t3.2`,
	},
	{
		name: "t2-idle-keeps-duplicates-until-max-expiry", ids: "D21 D17 R54 R59",
		run: func(h *harness) {
			h.msg(seq("g", 0, idle(10*sec), exp(30*sec)))
			h.at(5 * sec)
			h.msg(seq("g", 0, idle(10*sec), exp(30*sec))) // a copy refreshes the idle clock
			h.cp()
			h.at(15 * sec)
			h.tick() // 10s after the copy: not yet passed
			h.at(15*sec + 1)
			h.tick()
			h.cp()
			h.at(20 * sec)
			h.msg(seq("g", 0, idle(10*sec), exp(30*sec))) // still a duplicate (D24)
			h.at(30*sec + 1)
			h.tick()
		},
		want: `
deliver g#1/0
reply g[0]
reply g[0]
duplicate g#1/0
terminated g#1 t2
reply g[0]
duplicate g#1/0
removed g#1 t2`,
	},
	{
		name: "t2-not-while-out-of-order", ids: "D21 D14",
		run: func(h *harness) {
			h.msg(seq("g", 1, ordered, idle(10*sec), exp(30*sec)))
			h.at(20 * sec)
			h.tick() // blocked: D14 governs, not t2
			h.at(30*sec + 1)
			h.tick()
			h.msg(seq("g", 2, ordered, idle(10*sec), exp(hr))) // the next Response carries the fault (D13)
			// g#1 keeps its fault FaultRetention after it could go: the
			// Response that carried it may be lost, and a poll may ask.
			h.at(hr + 31*sec)
			h.tick()
		},
		want: `
reply g[1]
held g#1/1
terminated g#1 d14
discarded g#1/1 MessageExpired receiver.order-abort
reply g[1!MessageExpired 2]
generation g#2
held g#2/2
removed g#1 d14
terminated g#2 d14
discarded g#2/2 MessageExpired receiver.order-abort`,
	},
	{
		name: "t3.1-complete-with-timing", ids: "D22 R55",
		run: func(h *harness) {
			h.msg(seq("g", 1, last, ordered, gexp(10*sec), exp(10*sec)))
			h.cp()
			h.msg(seq("g", 0, ordered, gexp(10*sec), exp(10*sec)))
			h.at(10*sec + 1)
			h.tick()
		},
		want: `
reply g[1]
held g#1/1
deliver g#1/0
reply g[0]
terminated g#1 t3.1
deliver g#1/1
removed g#1 t3.1`,
	},
	{
		name: "t4.1-and-t4.2-and-t0", ids: "D23 R58 R59",
		run: func(h *harness) {
			h.msg(seq("a", 0, last, exp(10*sec))) // t4.1
			h.msg(seq("b", 1, last, exp(10*sec))) // t4.2: incomplete
			h.msg(seq("c", 0, exp(20*sec)))       // t0
			h.cp()
			h.at(10*sec + 1)
			h.tick()
			h.at(20*sec + 1)
			h.tick()
		},
		want: `
deliver a#1/0
reply a[0]
terminated a#1 t4.1
deliver b#1/1
reply b[1]
deliver c#1/0
reply c[0]
removed a#1 t4.1
terminated b#1 t4.2
removed b#1 t4.2
terminated c#1 t0
removed c#1 t0`,
	},
	{
		name: "singleton-window", ids: "D17 R06 R43",
		run: func(h *harness) {
			h.msg(single("s", exp(10*sec)))
			h.cp()
			h.at(10 * sec)
			h.msg(single("s", exp(10*sec)))
			h.tick()
			h.at(10*sec + 1)
			h.tick()
		},
		want: `
deliver s#1
reply s
reply s
duplicate s#1
removed s#1 singleton`,
	},
	{
		name: "callbacks-batched-retried-restart", ids: "R74 R75 R76 R93 A17",
		run: func(h *harness) {
			h.cbFail = true
			h.msg(seq("g", 0, cb("http://a/cb"), exp(hr)))
			h.msg(seq("g", 1, cb("http://a/cb"), exp(hr)))
			h.msg(seq("h", 0, cb("http://b/cb"), noAck, gexp(sec), exp(2*sec)))
			h.cp()
			h.cbFail = false
			h.at(5 * sec)
			h.tick() // retry after CallbackRetry.Initial
			h.cp()
			h.at(10 * sec)
			h.tick()
		},
		want: `
deliver g#1/0
callback http://a/cb g[0]
deliver g#1/1
callback http://b/cb h[0!InvalidExpiryTime]
refused h#0/0 InvalidExpiryTime receiver.expiry-after-group-expiry
callback http://a/cb g[0-1]
callback http://b/cb h[0!InvalidExpiryTime]`,
	},
	{
		name: "callback-until-expiry", ids: "R75",
		run: func(h *harness) {
			h.cbFail = true
			h.msg(seq("g", 0, cb("http://a/cb"), exp(3*sec)))
			h.at(5 * sec)
			h.tick()
		},
		want: `
deliver g#1/0
callback http://a/cb g[0]
terminated g#1 t0
removed g#1 t0
callback-dropped g#0/0 receiver.callback-expired`,
	},
	{
		name: "poll", ids: "R77 R78 R79 R80 R81 A12 A13 A14 D13",
		run: func(h *harness) {
			h.msg(seq("g", 0, pollP))
			h.msg(seq("g", 1, pollP))
			h.msg(seq("g", 3, pollP))
			h.msg(single("s", pollP))
			h.msg(seq("o", 0, pollP, ordered))
			h.msg(seq("o", 2, pollP, ordered, exp(sec)))
			h.at(2 * sec)
			h.tick()
			h.cp()
			h.poll(PollRequest{Refs: []group.PollRef{
				{GroupID: "g", Ranges: []group.Range{{From: 0, To: 9}}},
				{GroupID: "s"}, {GroupID: "unknown"},
				{GroupID: "o", Ranges: []group.Range{{From: 0, To: 9}}},
			}})
			h.poll(PollRequest{Refs: []group.PollRef{{GroupID: "g"}}}) // A13
			h.poll(PollRequest{Refs: []group.PollRef{{GroupID: "unknown"}}})
			h.poll(PollRequest{})
			h.poll(PollRequest{Refs: []group.PollRef{{GroupID: "g", Ranges: []group.Range{{From: 2, To: 1}}}}})
			h.poll(PollRequest{Refs: []group.PollRef{{GroupID: "g"}}, ReplyTo: "mailto:x"})
			h.poll(PollRequest{Refs: []group.PollRef{{GroupID: "s"}}, ReplyTo: "https://p/acks"})
		},
		want: `
deliver g#1/0
deliver g#1/1
deliver g#1/3
deliver s#1
deliver o#1/0
held o#1/2
terminated o#1 d14
discarded o#1/2 MessageExpired receiver.order-abort
poll g[0-1 3] o[0 2!MessageExpired] s
poll g[0-1 3]
poll -
soapfault InvalidPollRequest receiver.poll-empty
refused #0 InvalidPollRequest receiver.poll-empty
soapfault InvalidPollRequest receiver.poll-range-reversed
refused #0 InvalidPollRequest receiver.poll-range-reversed
soapfault InvalidPollRequest receiver.poll-reply-to
refused #0 InvalidPollRequest receiver.poll-reply-to
callback https://p/acks s`,
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
		name: "group-and-range-limits", ids: "D15",
		cfg: Config{MaxGroups: 2, MaxRangesPerGroup: 2},
		run: func(h *harness) {
			h.msg(seq("a", 0))
			h.msg(seq("a", 2))
			h.msg(seq("a", 4)) // a third range
			h.msg(single("b"))
			h.msg(single("c")) // a third group
			h.cp()
			h.msg(seq("a", 1)) // merges two ranges
			h.msg(seq("a", 4))
		},
		want: `
deliver a#1/0
reply a[0]
deliver a#1/2
reply a[2]
reply a[4!MessageStoreOverflow]
refused a#1/4 MessageStoreOverflow receiver.too-many-ranges
deliver b#1
reply b
reply c!MessageStoreOverflow
refused c#0 MessageStoreOverflow receiver.too-many-groups
deliver a#1/1
reply a[1]
deliver a#1/4
reply a[4]`,
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
}

var _ = time.Second
