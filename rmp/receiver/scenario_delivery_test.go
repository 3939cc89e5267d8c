package receiver

import (
	"testing"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// The delivery scenarios (duplicates, ordering, acknowledgements, hand-off
// retries) are text scenarios: conformance/testdata/recv_delivery.txt.

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
