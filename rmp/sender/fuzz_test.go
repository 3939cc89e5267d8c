package sender

import (
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// FuzzDecode: no stored record makes a decoder or Recover panic; whatever
// decodes survives an encode/decode round trip (varints may arrive padded,
// so the bytes themselves need not be canonical).
func FuzzDecode(f *testing.F) {
	f.Add(uint8(0), encodeOutbound(nil, &message{expiry: t0, payload: []byte("p")}))
	g := &groupState{x: &gextra{lateFailed: map[uint64]struct{}{1: {}}}, pattern: group.ReplyPoll}
	f.Add(uint8(1), encodeMeta(nil, g, "g"))
	f.Add(uint8(2), encodeOutcome(nil, &outboxEntry{o: Outcome{Kind: Acknowledged}}))
	f.Add(uint8(3), encodeRun(nil, group.Range{To: 5}))
	f.Add(uint8(4), []byte{1, 2, 3})
	f.Add(uint8(3), encodeRetry(nil, &message{attempts: 2, nextAt: t0, untilExpiry: true}))
	f.Add(uint8(3), encodePollRec("http://r/rmp", t0, 0))
	f.Add(uint8(3), encodePollRec("http://r/rmp", t0, 20*time.Second))
	g2 := &groupState{pattern: group.ReplyCallback, bits: gLateChecked | gCBSuspect}
	f.Add(uint8(1), encodeMeta(nil, g2, "g2"))
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		switch which % 5 {
		case 0:
			if m, err := decodeOutbound(b); err == nil {
				e := encodeOutbound(nil, m)
				m2, err := decodeOutbound(e)
				noErr(t, err)
				eq(t, encodeOutbound(nil, m2), e, "outbound round-trips")
			}
		case 1:
			if gs, id, err := decodeMeta(b); err == nil {
				e := encodeMeta(nil, gs, id)
				gs2, id2, err := decodeMeta(e)
				noErr(t, err)
				eq(t, encodeMeta(nil, gs2, id2), e, "meta round-trips")
			}
		case 2:
			if x, err := decodeOutcome(1, b); err == nil {
				e := encodeOutcome(nil, x)
				x2, err := decodeOutcome(1, e)
				noErr(t, err)
				eq(t, *x2, *x, "outcome round-trips")
			}
		case 3:
			_, _ = decodeRun(0, b)
			_, _ = decodeInstance(b)
			_ = decodeRetry(b, &message{})
			if r, err := decodePollRec(b); err == nil {
				e := encodePollRec(r.name, r.at, r.every)
				r2, err := decodePollRec(e)
				noErr(t, err)
				eq(t, encodePollRec(r2.name, r2.at, r2.every), e, "poll record round-trips")
			}
		default:
			recs := map[group.Key][]byte{
				instanceKey: b,
				{Role: group.RoleSender, GroupID: "g", Generation: 1, Kind: group.KindMeta}:     b,
				{Role: group.RoleSender, GroupID: "g", Generation: 1, Kind: group.KindOutbound}: b,
				{Role: group.RoleOutbox, Kind: group.KindOutcome, Number: 1}:                    b,
				pollRecKey(7): b,
				{Role: group.RoleSender, GroupID: "g", Generation: 1, Kind: group.KindReceived}:                      b,
				{Role: group.RoleSender, GroupID: "g", Generation: 1, Kind: group.KindOutbound, Number: retryKeyBit}: b,
			}
			st := &memStore{recs: recs}
			_, _ = Recover(testConfig(), st.scan())
		}
	})
}
