package receiver

import (
	"fmt"
	"strings"
)

// operatorScenarios are the part of the operator delete (gateway DELETE
// /v1/groups/{id}) that stays in Go: a hand-off in flight (holdTake) when
// its group is deleted, and the consumer's confirmation after it. A text
// scenario cannot show it the same in its crash mode (a crash loses a
// hand-off in flight and recovery hands it over again); the rest of the
// topic is conformance/testdata/recv_operator.txt. It is also replayed
// with a restart at every checkpoint (TestScenarios).
var operatorScenarios = []scenario{
	{
		name: "operator-delete-handoff-in-flight", ids: "D13 gateway-delete",
		run: func(h *harness) {
			h.holdTake = true
			h.msg(seq("u", 0, exp(30*sec)))
			h.holdTake = false
			h.groups()
			h.abort("u") // its hand-off in flight is discarded too
			h.abort("nope")
			h.groups()  // gone from listings at once
			h.takeAll() // too late: ignored
			h.cp()
			// The fault stays FaultRetention past the ExpiryTime (D13).
			h.at(hr + 30*sec)
			h.tick()
			h.at(hr + 30*sec + 1)
			h.tick()
		},
		want: `
deliver u#1/0
reply u[0]
group u#1 open [0-0] held=1 deadline=30.000000001s
discarded u#1/0 GroupAborted receiver.group-deleted
terminated u#1 deleted
ignored nope#0 receiver.abort-unknown
groups -
ignored u#1/0 receiver.taken-unknown
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
