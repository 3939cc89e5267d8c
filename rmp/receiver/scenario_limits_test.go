package receiver

// limitScenarios are the receiver's own refusals that soap.Parse makes
// unreachable from the wire: a message without groupId, MessageOrder on a
// singleton and a negative groupMaxIdleDuration are refused by the parser
// with the same fault (the wire answers are in
// conformance/testdata/recv_limits.txt with the rest of the topic), but a
// Receiver refuses them on its own too.
var limitScenarios = []scenario{
	{
		name: "validation-behind-the-parser", ids: "D7 R38 R60 R61",
		run: func(h *harness) {
			h.msg(seq("", 0))
			h.msg(single("x", ordered))
			h.msg(seq("z", 0, idle(-sec)))
		},
		want: `
soapfault InvalidRequest receiver.no-group-id
refused #0 InvalidRequest receiver.no-group-id
reply x!InvalidMessageParameters
refused x#0 InvalidMessageParameters receiver.order-without-sequence
reply z[0!InvalidMessageParameters]
refused z#0/0 InvalidMessageParameters receiver.negative-max-idle`,
	},
}
