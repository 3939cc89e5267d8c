package receiver

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// limitScenarios are the scenarios of one topic: validation and the limits
// of D15: refusals, overflow, nothing opened by a refused message (D1, D3,
// D7, D15, D25, R14, R38, R57, R60–R64, R94, A6). Each is also replayed with
// a restart at every checkpoint (TestScenarios).
var limitScenarios = []scenario{
	{
		name: "held-overflow", ids: "D15",
		cfg: Config{MaxHeldPerGroup: 2},
		run: func(h *harness) {
			h.msg(seq("o", 1, ordered))
			h.msg(seq("o", 2, ordered))
			h.cp()
			h.msg(seq("o", 3, ordered))
			h.msg(seq("o", 0, ordered))
			h.cp()
			h.msg(seq("o", 3, ordered))
		},
		want: `
reply o[1]
held o#1/1
reply o[2]
held o#1/2
reply o[3!MessageStoreOverflow]
refused o#1/3 MessageStoreOverflow receiver.held-overflow-group
deliver o#1/0
reply o[0]
deliver o#1/1
deliver o#1/2
deliver o#1/3
reply o[3]`,
	},
	{
		name: "validation", ids: "D3 D7 D25 R38 R57 R60 R61 R62 R63 R64 A6",
		cfg: Config{DisablePoll: true},
		run: func(h *harness) {
			h.msg(seq("", 0))
			h.msg(seq("g", 0, gexp(2*hr), exp(hr)))
			h.msg(seq("g", 2, last))
			h.msg(seq("g", 3))                // after last
			h.msg(seq("g", 1, last))          // last changed
			h.msg(seq("g", 1, noDE))          // flags changed
			h.msg(seq("g", 1, gexp(3*hr)))    // group expiry changed
			h.msg(seq("g", 1, exp(3*hr)))     // later than the group's groupExpiryTime (A6)
			h.msg(seq("g", 1, gexp(2*hr)))    // same value again: fine
			h.msg(single("x", ordered))       // R61
			h.msg(seq("y", 0, cb("ftp://a"))) // R63
			h.msg(seq("y", 0, pollP))         // R64
			h.msg(seq("z", 0, idle(-sec)))    // negative idle
			h.msg(seq("z", 1, exp(3*hr), gexp(2*hr)))
			h.msg(seq("p", 1))
			h.msg(seq("p", 0, gexp(2*hr))) // A6: the first may carry it alone
			h.msg(seq("q", 0))
			h.msg(seq("q", 1, gexp(2*hr))) // timing added after a plain first
			h.msg(single("g"))             // a terminated group's id: new generation (D24)
		},
		want: `
soapfault InvalidRequest receiver.no-group-id
refused #0 InvalidRequest receiver.no-group-id
deliver g#1/0
reply g[0]
deliver g#1/2
reply g[2]
reply g[3!InvalidMessageId]
refused g#1/3 InvalidMessageId receiver.number-after-last
reply g[1!InvalidMessageId]
refused g#1/1 InvalidMessageId receiver.last-changed
reply g[1!InvalidMessageParameters]
refused g#1/1 InvalidMessageParameters receiver.flags-changed
reply g[1!InvalidMessageParameters]
refused g#1/1 InvalidMessageParameters receiver.group-expiry-changed
reply g[1!InvalidExpiryTime]
refused g#1/1 InvalidExpiryTime receiver.expiry-after-group-expiry
deliver g#1/1
reply g[1]
terminated g#1 t3.1
reply x!InvalidMessageParameters
refused x#0 InvalidMessageParameters receiver.order-without-sequence
reply y[0!InvalidReplyPattern]
refused y#0/0 InvalidReplyPattern receiver.callback-without-reply-to
reply y[0!FeatureNotSupported]
refused y#0/0 FeatureNotSupported receiver.reply-pattern-not-supported
reply z[0!InvalidMessageParameters]
refused z#0/0 InvalidMessageParameters receiver.negative-max-idle
reply z[1!InvalidExpiryTime]
refused z#0/1 InvalidExpiryTime receiver.expiry-after-group-expiry
deliver p#1/1
reply p[1]
deliver p#1/0
reply p[0]
deliver q#1/0
reply q[0]
reply q[1!InvalidMessageParameters]
refused q#1/1 InvalidMessageParameters receiver.group-timing-added
deliver g#2
reply g
generation g#2`,
	},
	{
		name: "group-and-range-limits", ids: "D15",
		cfg: Config{MaxGroups: 2, MaxRangesPerGroup: 2},
		run: func(h *harness) {
			h.msg(seq("a", 0))
			h.msg(seq("a", 2))
			h.msg(seq("a", 4)) // a third range
			h.msg(single("b"))
			h.msg(single("c")) // a third group
			h.cp()
			h.msg(seq("a", 1)) // merges two ranges
			h.msg(seq("a", 4))
		},
		want: `
deliver a#1/0
reply a[0]
deliver a#1/2
reply a[2]
reply a[4!MessageStoreOverflow]
refused a#1/4 MessageStoreOverflow receiver.too-many-ranges
deliver b#1
reply b
reply c!MessageStoreOverflow
refused c#0 MessageStoreOverflow receiver.too-many-groups
deliver a#1/1
reply a[1]
deliver a#1/4
reply a[4]`,
	},
	{
		name: "validation-more", ids: "D1 D25 R14 R57 A6",
		run: func(h *harness) {
			h.msg(seq("g", 0))
			h.msg(seq("g", 5))
			h.msg(seq("g", 3, last)) // D25: 5 was received after it
			h.msg(seq("h", 0, idle(10*sec)))
			h.msg(seq("h", 1, idle(20*sec))) // D25, R14
			h.msg(seq("p", 1, gexp(2*hr)))
			h.msg(seq("p", 0)) // A6: the first message must carry the timing
			h.msg(single("s"))
			h.msg(seq("s", 0)) // D1: the id is a singleton's
		},
		want: `
deliver g#1/0
reply g[0]
deliver g#1/5
reply g[5]
reply g[3!InvalidMessageId]
refused g#1/3 InvalidMessageId receiver.last-below-received
deliver h#1/0
reply h[0]
reply h[1!InvalidMessageParameters]
refused h#1/1 InvalidMessageParameters receiver.group-max-idle-changed
deliver p#1/1
reply p[1]
reply p[0!InvalidMessageParameters]
refused p#1/0 InvalidMessageParameters receiver.group-timing-missing-on-first
deliver s#1
reply s
reply s[0!InvalidMessageId]
refused s#0/0 InvalidMessageId receiver.sequence-id-is-singleton`,
	},
	{
		name: "held-bytes-and-total-limits", ids: "D15",
		cfg: Config{MaxHeldBytesPerGroup: 6, MaxHeldTotal: 4, MaxHeldBytesTotal: 10},
		run: func(h *harness) {
			h.msg(seq("o", 1, ordered)) // 3 bytes
			h.msg(seq("o", 2, ordered))
			h.msg(seq("o", 3, ordered)) // group bytes 9 > 6
			h.msg(seq("p", 1, ordered))
			h.cp()
			h.msg(seq("p", 2, ordered)) // total bytes 12 > 10
			h.msg(seq("q", 1, ordered, payload("x")))
			h.msg(seq("q", 2, ordered, payload("y"))) // total count 5 > 4
			h.msg(seq("o", 0, ordered))               // releases o: room again
			h.cp()
			h.msg(seq("q", 2, ordered, payload("y")))
		},
		want: `
reply o[1]
held o#1/1
reply o[2]
held o#1/2
reply o[3!MessageStoreOverflow]
refused o#1/3 MessageStoreOverflow receiver.held-bytes-overflow-group
reply p[1]
held p#1/1
reply p[2!MessageStoreOverflow]
refused p#1/2 MessageStoreOverflow receiver.held-bytes-overflow-total
reply q[1]
held q#1/1
reply q[2!MessageStoreOverflow]
refused q#1/2 MessageStoreOverflow receiver.held-overflow-total
deliver o#1/0
reply o[0]
deliver o#1/1
deliver o#1/2
reply q[2]
held q#1/2`,
	},
	{
		name: "ordering-not-supported", ids: "R64",
		cfg: Config{DisableOrdering: true},
		run: func(h *harness) {
			h.msg(seq("o", 0, ordered))
			h.msg(seq("u", 0))
		},
		want: `
reply o[0!FeatureNotSupported]
refused o#0/0 FeatureNotSupported receiver.ordering-not-supported
deliver u#1/0
reply u[0]`,
	},
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

// heldOne holds one early message in the whole receiver (D15).
var heldOne = Config{MaxHeldPerGroup: 1, MaxHeldTotal: 1}

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
