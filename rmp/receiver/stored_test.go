package receiver

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// The receiver's scenarios are text files run in three store modes
// (conformance/testdata/recv_*.txt); these tests look at what they cannot
// print: the records a Receiver stores and recovers.

// R92: the attempt count and the retry instant of a refused hand-off come
// back from the store; the retry record goes once the message is taken.
func TestHandoffRetryStored_R92(t *testing.T) {
	h := newHarness(t, Config{DeliveryRetry: Backoff{Initial: 2 * sec, Factor: 2, Max: 10 * sec}})
	h.failTake = true
	h.msg(seq("g", 0, exp(hr)))
	h.restart()
	at, ok := h.r.NextDeadline()
	if !ok || !at.Equal(t0.Add(2*sec)) {
		t.Fatalf("recovered deadline %v %v, want the stored retry at 2 s", at, ok)
	}
	var attempts []int
	h.onReady = func(rd Ready) {
		for _, d := range rd.Deliver {
			attempts = append(attempts, d.Attempt)
		}
	}
	h.failTake = false
	h.at(2 * sec)
	h.tick()
	if len(attempts) != 1 || attempts[0] != 2 {
		t.Fatalf("attempts after restart %v, want [2]", attempts)
	}
	for k := range h.st.recs {
		if k.Kind == kindHandoffRetry || k.Kind == group.KindDelivery {
			t.Fatalf("record %+v left after Taken", k)
		}
	}
}

// R75: a URL's back-off record is stored on failure and deleted on success.
func TestCallbackBackoffStored_R75(t *testing.T) {
	h := newHarness(t, Config{CallbackRetry: Backoff{Initial: 4 * sec, Factor: 2, Max: 10 * sec}})
	h.cbFail = true
	h.msg(seq("g", 0, cb("http://a/cb"), exp(hr)))
	urlRecs := func() int {
		n := 0
		for k := range h.st.recs {
			if k.GroupID == "" && k.Kind == group.KindMeta {
				n++
			}
		}
		return n
	}
	if urlRecs() != 1 {
		t.Fatalf("%d URL back-off records after a failure, want 1", urlRecs())
	}
	h.restart()
	if at, ok := h.r.NextDeadline(); !ok || !at.Equal(t0.Add(4*sec)) {
		t.Fatalf("recovered deadline %v %v, want the back-off at 4 s", at, ok)
	}
	h.cbFail = false
	h.at(4 * sec)
	h.tick()
	if urlRecs() != 0 {
		t.Fatalf("%d URL back-off records after a success, want 0", urlRecs())
	}
	if h.r.Stats().PendingCallbacks != 0 {
		t.Fatalf("callbacks still pending: %+v", h.r.Stats())
	}
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
