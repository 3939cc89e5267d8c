package receiver

import (
	"encoding/hex"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// metaGolden is a group meta record as written before the lifecycle codec
// moved to group (#20): the stored format must not change.
const metaGolden = "010005020b687474703a2f2f612f6362000101c0a9aaf70c0000000000000001c2c8a8f70c0001e080a9f70c0001ac020101c4c8a8f70c000201a0f1a9f70c000701 0101000100000000010100000480e0ba84bf0301c0c8a8f70c00000000000000000001"

func TestMetaGolden(t *testing.T) {
	g := &gstate{flags: group.Flags{AckRequested: true, MessageOrder: true}, pattern: group.ReplyCallback, bits: plainZeroBit}
	g.buf.reset(7, false)
	g.setReplyTo("http://a/cb")
	g.lc = group.Lifecycle{Timing: group.Timing{Expiry: t0.Add(4 * time.Hour)}, Ordered: true,
		LastActivity: t0.Add(time.Second), MaxExpiry: t0.Add(time.Hour), HasLast: true, Last: 300,
		Terminated: true, TerminatedAt: t0.Add(2 * time.Second), Rule: group.RuleT2, RemoveAt: t0.Add(3 * time.Hour)}
	idle := &gstate{singleton: true, pattern: group.ReplyResponse}
	idle.lc.Timing = group.Timing{HasMaxIdle: true, MaxIdle: group.Duration{Negative: true, Days: 2, Clock: time.Minute}}
	idle.lc.LastActivity = t0
	got := hex.EncodeToString(encodeMeta(nil, g)) + " " + hex.EncodeToString(encodeMeta(nil, idle))
	if got != metaGolden {
		t.Fatalf("meta records changed:\n got %s\nwant %s", got, metaGolden)
	}
	for _, v := range []*gstate{g, idle} {
		var back gstate
		if err := decodeMeta(encodeMeta(nil, v), &back); err != nil {
			t.Fatal(err)
		}
		if back.lc != v.lc {
			t.Fatalf("lifecycle:\n%+v\n%+v", back.lc, v.lc)
		}
	}
}
