package receiver

import (
	"fmt"
	"strings"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// operatorScenarios are the operator delete (gateway DELETE
// /v1/groups/{id}) scenario that stays in Go (D13, D24): it holds a
// hand-off in flight (holdTake) and reports it taken after the delete,
// which a text scenario cannot show the same in its crash mode (a crash
// loses a hand-off in flight, and recovery hands it over again). The other
// operator scenarios are in conformance/testdata/recv_operator.txt. It is
// also replayed with a restart at every checkpoint (TestScenarios).
var operatorScenarios = []scenario{
	{
		name: "operator-delete", ids: "D13 D24 gateway-delete",
		run: func(h *harness) {
			h.msg(seq("o", 0, ordered, exp(10*sec)))
			h.msg(seq("o", 2, ordered, last, exp(20*sec)))
			h.holdTake = true
			h.msg(seq("u", 0, exp(30*sec)))
			h.holdTake = false
			h.groups()
			h.abort("o")
			h.abort("u") // its hand-off in flight is discarded too
			h.abort("nope")
			h.groups()  // gone from listings at once
			h.takeAll() // too late: ignored
			h.cp()
			h.poll(PollRequest{Refs: []group.PollRef{{GroupID: "o", Ranges: []group.Range{{From: 0, To: 5}}}}})
			h.msg(seq("o", 1, ordered)) // not recorded: a new generation, carrying the fault (D13, D24)
			h.groups()
			h.msg(seq("o", 2, ordered, last, exp(20*sec))) // recorded in the deleted generation: its fault again
			h.cp()
			// The deleted generations keep their faults FaultRetention past
			// their removal instant: under Response and Poll the sender
			// learns them only by asking (D13). By then o#2/1 has expired.
			h.at(hr + 20*sec + 1)
			h.tick()
			h.at(hr + 30*sec + 1)
			h.tick()
		},
		want: `
deliver o#1/0
reply o[0]
reply o[2]
held o#1/2
deliver u#1/0
reply u[0]
group o#1 open [0-0 2-2] held=1 last=2 deadline=20.000000001s
group u#1 open [0-0] held=1 deadline=30.000000001s
discarded o#1/2 GroupAborted receiver.group-deleted
terminated o#1 deleted
discarded u#1/0 GroupAborted receiver.group-deleted
terminated u#1 deleted
ignored nope#0 receiver.abort-unknown
groups -
ignored u#1/0 receiver.taken-unknown
poll o[0 2!GroupAborted]
reply o[1 2!GroupAborted]
generation o#2
held o#2/1
group o#2 open [1-1] held=1 deadline=1h0m0.000000001s
reply o[2!GroupAborted]
duplicate o#1/2
removed o#1 deleted
terminated o#2 d14
discarded o#2/1 MessageExpired receiver.order-abort
removed u#1 deleted`,
	},
}

// abort applies an operator delete (gateway DELETE /v1/groups/{id}).
func (h *harness) abort(id string) { h.process(h.r.Abort(h.now, id)) }

// groups logs the listing (gateway GET /v1/groups?role=receiver).
func (h *harness) groups() {
	gs := h.r.Groups()
	if len(gs) == 0 {
		h.log = append(h.log, "groups -")
	}
	for _, g := range gs {
		h.log = append(h.log, "group "+infoStr(g))
	}
}

func infoStr(g GroupInfo) string {
	state := "open"
	if g.Terminated {
		state = "terminated " + g.Rule.String()
	}
	var rs []string
	for _, r := range g.Ranges {
		rs = append(rs, fmt.Sprintf("%d-%d", r.From, r.To))
	}
	s := fmt.Sprintf("%s#%d %s [%s] held=%d", g.GroupID, g.Generation, state, strings.Join(rs, " "), g.Held)
	if g.Singleton {
		s += " singleton"
	}
	if g.HasLast {
		s += fmt.Sprintf(" last=%d", g.LastNumber)
	}
	if g.HasDeadline {
		s += " deadline=" + g.NextDeadline.Sub(t0).String()
	}
	return s
}
