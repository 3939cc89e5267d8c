package receiver

import ()

// terminationScenarios are the scenarios of one topic: group termination
// t1–t4 and t0, and the singleton window (D17, D20–D23, R51–R59). Each is
// also replayed with a restart at every checkpoint (TestScenarios).
var terminationScenarios = []scenario{
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
}
