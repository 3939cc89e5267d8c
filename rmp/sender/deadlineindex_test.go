package sender

import (
	"testing"
	"time"
)

// A busy group's deadline moves with every acknowledged message (its
// removal follows the latest ExpiryTime, t0), and it has none while a
// message is pending. The index is written when the deadline, rounded down
// to the grain, changes: not cleared while a message is pending, not
// rewritten for each message within the same second (SPEC-NOTES "deadline
// index"); checkDeadlineIndex holds it no later than the timer
// throughout. With a restart before every input the index is written
// again after each acknowledgement: a Sender recovered with a message
// pending does not know what the index holds, so it writes the next
// deadline it has (never a clear).
func TestDeadlineIndexOncePerGrain(t *testing.T) {
	for _, restarts := range []bool{false, true} {
		h := newHarness(t, testConfig())
		h.restarts = restarts
		var gid string
		for i := range 20 {
			h.now = t0.Add(time.Duration(i) * 10 * time.Millisecond) // 0 .. 190 ms
			ref := h.submit(Submission{GroupKey: "a", Flags: ackReq, Payload: []byte("x")})
			gid = ref.GroupID
			h.reply(ack(gid, ref.Number, ref.Number))
		}
		g := h.s.group(gid)
		due := h.s.timers.at(&g.tm)
		want := t0.Add(time.Hour).Truncate(time.Second) // every ExpiryTime within one second
		for _, at := range h.indexed {
			if !at.Equal(want) {
				t.Fatalf("restarts=%v: indexed %v, want only %v (timer at %v)", restarts, h.indexed, want, due)
			}
		}
		if n := len(h.indexed); n != 1 && !restarts || restarts && n != 20 {
			t.Fatalf("restarts=%v: %d index writes for 20 messages", restarts, n)
		}
		h.indexed = h.indexed[:1]
		// The next second: one more write, at the new whole second.
		h.now = t0.Add(1500 * time.Millisecond)
		ref := h.submit(Submission{GroupKey: "a", Flags: ackReq, Payload: []byte("x")})
		h.reply(ack(gid, ref.Number, ref.Number))
		if len(h.indexed) != 2 || !h.indexed[1].Equal(want.Add(time.Second)) {
			t.Fatalf("restarts=%v: indexed %v, want a second write at %v", restarts, h.indexed, want.Add(time.Second))
		}
	}
}
