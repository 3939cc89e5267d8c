package receiver

import (
	"github.com/wsrkit/wsrkit/rmp/group"
)

// pollScenarios are the scenarios of one topic: the Poll pattern: answers,
// every generation, retained faults (D13, D24, R77–R81, A12–A14). Each is
// also replayed with a restart at every checkpoint (TestScenarios).
var pollScenarios = []scenario{
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
}
