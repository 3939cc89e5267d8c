package receiver

import (
	"github.com/wsrkit/wsrkit/rmp/group"
)

// pollScenarios are the Poll pattern's checks that soap.Parse makes
// unreachable from the wire: an empty PollRequest and a reversed range
// never get past the parser, but a Receiver refuses them on its own too
// (R79, A14). The rest of the topic is text scenarios in
// conformance/testdata/recv_poll.txt.
var pollScenarios = []scenario{
	{
		name: "poll-refusals-behind-the-parser", ids: "R79 A14",
		run: func(h *harness) {
			h.msg(seq("g", 0, pollP))
			h.poll(PollRequest{})
			h.poll(PollRequest{Refs: []group.PollRef{{GroupID: "g", Ranges: []group.Range{{From: 2, To: 1}}}}})
		},
		want: `
deliver g#1/0
soapfault InvalidPollRequest receiver.poll-empty
refused #0 InvalidPollRequest receiver.poll-empty
soapfault InvalidPollRequest receiver.poll-range-reversed
refused #0 InvalidPollRequest receiver.poll-range-reversed`,
	},
}
