package sim

import (
	"strings"
	"testing"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// TestAnsweredChecksTheResponse feeds the producer's check answers that
// carry a message's own response, another message's, and one it was never
// given: only the first passes.
func TestAnsweredChecksTheResponse(t *testing.T) {
	wd := &world{res: newResult(), now: epoch}
	wd.w.groups = []planGroup{{pattern: group.ReplyResponse}, {pattern: group.ReplyCallback}}
	wd.w.msgs = []planMsg{{id: 0, g: 0}, {id: 1, g: 0}, {id: 2, g: 1}}
	wd.m = newModel(wd)
	refs := []sender.MessageRef{{GroupID: "a", Number: 0}, {GroupID: "a", Number: 1}, {GroupID: "b", Number: 0}}
	for id, ref := range refs {
		wd.m.byRef[ref] = id
		wd.m.recs[id].submitted, wd.m.recs[id].ref = true, ref
	}
	wd.m.recs[1].responded = true
	env := func(id int) []byte {
		return []byte("<Envelope><Body>" + string(businessResponse(id)) + "</Body></Envelope>")
	}
	out := func(id int) rmp.OutboundRef { return rmp.OutboundRef{Kind: rmp.OutMessage, Message: refs[id]} }

	wd.m.answered(out(1), env(1))
	wd.m.answered(out(1), []byte("<Envelope/>")) // an ack without a response
	if len(wd.res.Violations) != 0 || wd.res.ResponsesSeen != 1 {
		t.Fatalf("its own response: violations %q, seen %d", wd.res.Violations, wd.res.ResponsesSeen)
	}
	for _, c := range []struct {
		to, carries int
		why         string
	}{{1, 2, "another message's response"}, {2, 2, "a response under the Callback pattern"}} {
		before := len(wd.res.Violations)
		wd.m.answered(out(c.to), env(c.carries))
		if len(wd.res.Violations) != before+1 || !strings.Contains(wd.res.Violations[before], "R73") {
			t.Errorf("%s: violations %q", c.why, wd.res.Violations[before:])
		}
	}
	wd.m.recs[1].responded = false
	before := len(wd.res.Violations)
	wd.m.answered(out(1), env(1))
	if len(wd.res.Violations) != before+1 {
		t.Errorf("a response the consumer never gave passed")
	}
}
