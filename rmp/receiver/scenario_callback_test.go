package receiver

import (
	"testing"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// callbackScenarios are the scenarios of one topic: the Callback pattern:
// batched RM-Replies, their retries and expiry (R74–R76, R93, A17). Each is
// also replayed with a restart at every checkpoint (TestScenarios).
var callbackScenarios = []scenario{
	{
		name: "callbacks-batched-retried-restart", ids: "R74 R75 R76 R93 A17",
		run: func(h *harness) {
			h.cbFail = true
			h.msg(seq("g", 0, cb("http://a/cb"), exp(hr)))
			h.msg(seq("g", 1, cb("http://a/cb"), exp(hr)))
			h.msg(seq("h", 0, cb("http://b/cb"), noAck, gexp(sec), exp(2*sec)))
			h.cp()
			h.cbFail = false
			h.at(5 * sec)
			h.tick() // retry after CallbackRetry.Initial
			h.cp()
			h.at(10 * sec)
			h.tick()
		},
		want: `
deliver g#1/0
callback http://a/cb g[0]
deliver g#1/1
callback http://b/cb h[0!InvalidExpiryTime]
refused h#0/0 InvalidExpiryTime receiver.expiry-after-group-expiry
callback http://a/cb g[0-1]
callback http://b/cb h[0!InvalidExpiryTime]`,
	},
	{
		name: "callback-until-expiry", ids: "R75",
		run: func(h *harness) {
			h.cbFail = true
			h.msg(seq("g", 0, cb("http://a/cb"), exp(3*sec)))
			h.at(5 * sec)
			h.tick()
		},
		want: `
deliver g#1/0
callback http://a/cb g[0]
terminated g#1 t0
removed g#1 t0
callback-dropped g#0/0 receiver.callback-expired`,
	},
	{
		// R75: a failed callback URL is retried after its stored back-off
		// after a restart, not at once.
		name: "callback-backoff-schedule", ids: "R75 R93",
		cfg: Config{CallbackRetry: Backoff{Initial: 4 * sec, Factor: 2, Max: 10 * sec}},
		run: func(h *harness) {
			h.cbFail = true
			h.msg(seq("g", 0, cb("http://a/cb"), exp(hr)))
			h.cp()
			h.at(3 * sec)
			h.tick()
			h.cp()
			h.msg(seq("g", 1, cb("http://a/cb"), exp(hr))) // queued behind the back-off
			h.cp()
			h.cbFail = false
			h.at(4 * sec)
			h.tick()
		},
		want: `
deliver g#1/0
callback http://a/cb g[0]
deliver g#1/1
callback http://a/cb g[0-1]`,
	},
	{
		// lateFaultScenario is sim seed 201976 (bug 2): a callback batch must not
		// lose a fault by merging it with another fault about the same number.
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
	},
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

const cbURLs = "http://s/cb"
