package receiver

// runScenarios are an ordered group's delivery runs (Config.MaxDeliveryRun,
// #22): consecutive deliverable numbers handed out at once, never one after
// a hand-off that was not taken (D14, R47, R49, R92).
var runScenarios = []scenario{
	{
		name: "ordered-run-hand-off", ids: "D14 R47 R49 R92",
		cfg: Config{MaxDeliveryRun: 3},
		run: func(h *harness) {
			h.holdTake = true
			h.msg(seq("o", 0, ordered))
			for n := range uint64(4) {
				h.msg(seq("o", n+1, ordered)) // wait: 0 is outstanding
			}
			h.holdTake = false
			h.takeAll() // 0 taken: 1..3 go out as one run, then 4
		},
		want: `
deliver o#1/0
reply o[0]
reply o[1]
reply o[2]
reply o[3]
reply o[4]
deliver o#1/1
deliver o#1/2 run
deliver o#1/3 run
deliver o#1/4`,
	},
	{
		name: "ordered-run-waits-behind-deferred-handoff", ids: "D14 R49 R92",
		cfg: Config{MaxDeliveryRun: 3},
		run: func(h *harness) {
			h.holdTake = true
			h.msg(seq("o", 0, ordered))
			for n := range uint64(4) {
				h.msg(seq("o", n+1, ordered))
			}
			h.takeAll() // 0 taken, 1 deferred: 2 and 3 are handed back
			h.holdTake = false
			h.takeAll() // 1 taken: 2..4 go out as one run
		},
		want: `
deliver o#1/0
reply o[0]
reply o[1]
reply o[2]
reply o[3]
reply o[4]
deliver o#1/1
deliver o#1/2 run
deliver o#1/3 run
returned o#1/2
returned o#1/3
deliver o#1/2
deliver o#1/3 run
deliver o#1/4 run`,
	},
	{
		name: "ordered-run-stops-at-failed-handoff", ids: "D14 R49",
		cfg: Config{MaxDeliveryRun: 3, DeliveryRetry: Backoff{Initial: sec, Max: sec}},
		run: func(h *harness) {
			h.holdTake = true
			h.msg(seq("o", 0, ordered))
			h.msg(seq("o", 1, ordered))
			h.msg(seq("o", 2, ordered))
			h.msg(seq("o", 3, ordered))
			h.holdTake, h.failTake = false, true
			h.takeAll() // 1 fails: 2 and 3 are handed back unseen
			h.failTake = false
			h.at(sec)
			h.tick() // 1's retry is due: the run again
		},
		want: `
deliver o#1/0
reply o[0]
reply o[1]
reply o[2]
reply o[3]
deliver o#1/1
deliver o#1/2 run
deliver o#1/3 run
returned o#1/2
returned o#1/3
deliver o#1/1
deliver o#1/2 run
deliver o#1/3 run`,
	},
}
