package sender

import (
	"testing"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// A grouped message without AckRequested is sent once and nothing of it is
// stored (SPEC-NOTES "No AckRequested"): a restart recovers its group and
// the key goes on numbering (sim: a stored outbound record of such a
// message made Recover fail with "outbound message outside its group").
func TestBestEffortGroupStoresNoMessage(t *testing.T) {
	h := newHarness(t, testConfig())
	var refs []MessageRef
	for range 2 {
		refs = append(refs, h.submit(Submission{GroupKey: "be", Flags: group.Flags{DuplicateElimination: true}}))
		for k := range h.st.recs {
			if k.Kind == group.KindOutbound {
				t.Fatalf("outbound record %+v stored for a message without AckRequested", k)
			}
		}
	}
	eq(t, h.s.Stats().Pending, 0, "nothing pending")
	h.restart()
	next := h.submit(Submission{GroupKey: "be", Flags: group.Flags{DuplicateElimination: true}})
	eq(t, next, MessageRef{GroupID: refs[0].GroupID, Number: 2}, "the recovered group numbers on")
}
