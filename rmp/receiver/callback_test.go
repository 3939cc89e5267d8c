package receiver

import (
	"slices"
	"strings"
	"testing"
)

// R74: at most one callback POST is in flight per ReplyTo URL, so a later
// POST to a URL never overtakes an earlier one: a status queued meanwhile
// goes in the next POST, formed when the first one's result comes (after
// the back-off when it failed). Other URLs are not held back, and a URL
// waiting on its POST does not wake Tick.
func TestCallbackOnePostInFlightPerURL_R74(t *testing.T) {
	h := newHarness(t, Config{CallbackRetry: Backoff{Initial: 4 * sec, Factor: 2, Max: 10 * sec}})
	h.holdCB = true
	callbacks := func() []string {
		var out []string
		for _, l := range h.log {
			if strings.HasPrefix(l, "callback ") {
				out = append(out, l)
			}
		}
		h.log = nil
		return out
	}
	h.msg(seq("g", 0, cb("http://a/cb"), exp(hr)))
	h.msg(seq("g", 1, cb("http://a/cb"), exp(hr)))
	h.msg(seq("k", 0, cb("http://b/cb"), exp(hr)))
	wantLines(t, callbacks(), []string{"callback http://a/cb g[0]", "callback http://b/cb k[0]"}, "first POSTs")
	if at, ok := h.r.NextDeadline(); ok && !at.After(h.now) {
		t.Fatalf("deadline %v while the queued URL waits on its POST", at)
	}
	h.answerCB(false) // a's POST failed: g 0 and 1 wait for the back-off together
	wantLines(t, callbacks(), []string(nil), "nothing before the back-off")
	h.answerCB(true) // b's POST
	h.at(4 * sec)
	h.tick()
	wantLines(t, callbacks(), []string{"callback http://a/cb g[0-1]"}, "retry with the queued status")
	h.msg(seq("g", 2, cb("http://a/cb"), exp(hr)))
	wantLines(t, callbacks(), []string(nil), "held behind the retry")
	h.answerCB(true)
	wantLines(t, callbacks(), []string{"callback http://a/cb g[2]"}, "next POST with the result")
	h.answerCB(true)
	if n := h.r.Stats().PendingCallbacks; n != 0 {
		t.Fatalf("%d callbacks pending at the end", n)
	}
}

func wantLines(t *testing.T, got, want []string, what string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}

// TestDeleteFaultPushedPastExpiry_D13: an operator deletes an ordered group
// under Callback a moment before its held message expires while the URL
// waits on an earlier POST. The GroupAborted fault goes out once that POST
// is answered, after the ExpiryTime, because a fault is pushed for
// FaultRetention like every other (sim seed 3012187 lost it: the delete
// kept it only until the ExpiryTime).
func TestDeleteFaultPushedPastExpiry_D13(t *testing.T) {
	h := newHarness(t, Config{FaultRetention: hr})
	h.holdCB = true
	h.msg(seq("g", 1, ordered, cb("http://a/cb"), exp(10*sec))) // held: 0 is missing
	h.log = nil
	h.at(9 * sec)
	h.process(h.r.Abort(h.now, "g"))
	h.at(11 * sec) // the message's ExpiryTime has passed
	h.answerCB(true)
	var got []string
	for _, l := range h.log {
		if strings.HasPrefix(l, "callback ") {
			got = append(got, l)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0], "GroupAborted") {
		t.Fatalf("callbacks after the in-flight POST was answered past the expiry: %q; want the GroupAborted fault", got)
	}
}
