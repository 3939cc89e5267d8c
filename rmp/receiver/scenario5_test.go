package receiver

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Regressions found by the simulation (rmp/sim); each is also replayed with
// a restart at every checkpoint (TestScenarios), which Recover must pass.
func init() {
	scenarios = append(scenarios, simRegressionScenarios...)
}

// heldOne holds one early message in the whole receiver (D15).
var heldOne = Config{MaxHeldPerGroup: 1, MaxHeldTotal: 1}

var simRegressionScenarios = []scenario{
	{
		// D15, R94 (sim seeds 7, 43, 58): a message that would open a new
		// group and is refused by the ordering bounds opens nothing: no
		// state, no record without a reply pattern for Recover to reject.
		// Once the buffer frees, the same message opens generation 1.
		name: "refused-first-message-opens-nothing", ids: "D15 D24 R94",
		cfg:  heldOne,
		run: func(h *harness) {
			h.msg(seq("a", 1, ordered))
			h.cp()
			h.msg(seq("b", 1, ordered))
			h.cp()
			h.msg(seq("a", 0, ordered))
			h.cp()
			h.msg(seq("b", 1, ordered))
		},
		want: `
reply a[1]
held a#1/1
reply b[1!MessageStoreOverflow]
refused b#0/1 MessageStoreOverflow receiver.held-overflow-total
deliver a#1/0
reply a[0]
deliver a#1/1
reply b[1]
held b#1/1`,
	},
	{
		// D14, D15, D24: the refused message would reuse a terminated
		// GroupId; the refusal opens no generation 2, and the next
		// accepted message of that GroupId is generation 2, before and
		// after a restart.
		name: "refused-reuse-opens-nothing", ids: "D14 D15 D24 R94",
		cfg:  heldOne,
		run: func(h *harness) {
			h.msg(seq("o", 0, ordered))
			h.msg(seq("o", 2, ordered, exp(sec)))
			h.cp()
			h.at(2 * sec)
			h.tick()
			h.msg(seq("p", 1, ordered))
			h.cp()
			h.msg(seq("o", 3, ordered))
			h.cp()
			h.msg(seq("p", 0, ordered))
			h.cp()
			h.msg(seq("o", 3, ordered))
		},
		want: `
deliver o#1/0
reply o[0]
reply o[2]
held o#1/2
terminated o#1 d14
discarded o#1/2 MessageExpired receiver.order-abort
reply p[1]
held p#1/1
reply o[2!MessageExpired 3!MessageStoreOverflow]
refused o#0/3 MessageStoreOverflow receiver.held-overflow-total
deliver p#1/0
reply p[0]
deliver p#1/1
reply o[3]
generation o#2
held o#2/3`,
	},
}

// TestRefusedOpenRecovers is the sim's minimal reproduction of bug 1: the
// stored records of a receiver that refused a new group's first message
// recover, and list only the group that holds something (D15, R91, R94).
func TestRefusedOpenRecovers(t *testing.T) {
	h := newHarness(t, heldOne)
	h.msg(seq("a", 1, ordered))
	h.msg(seq("b", 1, ordered))
	require.Len(t, h.r.Groups(), 1)
	r, err := Recover(heldOne, h.st.scan())
	require.NoError(t, err)
	gs := r.Groups()
	require.Len(t, gs, 1)
	require.Equal(t, "a", gs[0].GroupID)
	require.Equal(t, 1, r.Stats().HeldMessages)
}
