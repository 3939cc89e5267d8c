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
		cfg: heldOne,
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
		cfg: heldOne,
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

// lateFaultScenario is sim seed 201976 (bug 2): a callback batch must not
// lose a fault by merging it with another fault about the same number.
var lateFaultScenario = scenario{
	// D13, R74, R75: number 2 is refused (MessageStoreOverflow), then
	// accepted in generation 2 and acknowledged, then discarded with
	// GroupAborted (D14). While the URL fails, all three wait in the
	// callback queue; once it answers, every fault reaches the sender, in
	// the order recorded: one SequenceReplies cannot carry two faults for
	// one number, so the later one goes in the next POST.
	name: "callback-faults-same-number", ids: "D13 D14 D15 D24 R74 R75",
	cfg: Config{MaxHeldPerGroup: 2},
	run: func(h *harness) {
		h.cbFail = true
		h.msg(seq("o", 1, ordered, cb(cbURLs), exp(sec)))
		h.msg(seq("o", 3, ordered, cb(cbURLs)))
		h.msg(seq("o", 2, ordered, cb(cbURLs)))
		h.cp()
		h.at(2 * sec)
		h.tick()
		h.msg(seq("o", 2, ordered, cb(cbURLs)))
		h.msg(seq("o", 4, ordered, cb(cbURLs), exp(3*sec)))
		h.cp()
		h.at(4 * sec)
		h.tick()
		h.cp()
		h.cbFail = false
		h.at(hr / 2)
		h.tick()
	},
	want: `
callback http://s/cb o[1]
held o#1/1
held o#1/3
refused o#1/2 MessageStoreOverflow receiver.held-overflow-group
terminated o#1 d14
discarded o#1/1 MessageExpired receiver.order-abort
discarded o#1/3 GroupAborted receiver.order-abort
generation o#2
held o#2/2
held o#2/4
terminated o#2 d14
discarded o#2/2 GroupAborted receiver.order-abort
discarded o#2/4 MessageExpired receiver.order-abort
callback http://s/cb o[1!MessageExpired 2!MessageStoreOverflow 3!GroupAborted 4!MessageExpired]
callback-dropped o#0/1 receiver.callback-expired
callback-dropped o#0/4 receiver.callback-expired
callback http://s/cb o[2!GroupAborted]`,
}

const cbURLs = "http://s/cb"

func init() { scenarios = append(scenarios, lateFaultScenario) }
