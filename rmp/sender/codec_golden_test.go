package sender

import (
	"encoding/hex"
	"math"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// metaGolden is a group meta record as written before the lifecycle codec
// moved to group (#20): the stored format must not change.
const metaGolden = "010e6d69643a352e78407773726b697405016b0009687474703a2f2f722f07020a687474703a2f2f63622f01c099a29a0d000000000000000c01000180a9a19a0d0001b0fda19a0d00ac0201010182a9a19a0d000401a0e1a19a0d0001f8a9a19a0d000203ffffffffffffffffff01 010e6d69643a362e78407773726b697406000009687474703a2f2f722f0003000001000203068090d8c69e050000000180a9a19a0d00000000000000000000"

func TestMetaGolden(t *testing.T) {
	g := &groupState{
		seq: 5, key: "k", to: "http://r/", flags: ordered, pattern: group.ReplyCallback,
		next: 12, bits: gClosed, ackedMaxExpiry: t0.Add(time.Minute),
		x: &gextra{replyTo: "http://cb/", removeAt: t0.Add(time.Hour), lateFailed: map[uint64]struct{}{3: {}, math.MaxUint64: {}}},
	}
	g.life = group.Lifecycle{
		Timing:       group.Timing{Expiry: t0.Add(2 * time.Hour)},
		Ordered:      true,
		LastActivity: t0, MaxExpiry: t0.Add(90 * time.Minute), Last: 300, HasLast: true,
		Terminated: true, TerminatedAt: t0.Add(time.Second), Rule: group.RuleT32, RemoveAt: g.x.removeAt,
	}
	idle := &groupState{seq: 6, to: "http://r/", pattern: group.ReplyPoll}
	idle.life.Timing = group.Timing{HasMaxIdle: true, MaxIdle: group.Duration{Years: 1, Months: -2, Days: 3, Clock: 90 * time.Second}}
	idle.life.LastActivity = t0
	got := hex.EncodeToString(encodeMeta(nil, g, "mid:5.x@wsrkit")) + " " + hex.EncodeToString(encodeMeta(nil, idle, "mid:6.x@wsrkit"))
	if got != metaGolden {
		t.Fatalf("meta records changed:\n got %s\nwant %s", got, metaGolden)
	}
	for i, v := range []*groupState{g, idle} {
		back, _, err := decodeMeta(encodeMeta(nil, v, "x"))
		noErr(t, err)
		eq(t, back.life, v.life, "lifecycle "+string(rune('0'+i)))
	}
}
