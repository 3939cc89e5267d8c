package receiver

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// FuzzReceiver feeds random message / poll / tick / restart sequences for
// a few groups and checks the invariants: never a panic; nothing handed out
// after its ExpiryTime (D9); no second delivery of a number with
// DuplicateElimination (R42) or in an ordered group (D19); ordered groups
// deliver 0,1,2,… without gaps (R47); held counts within limits (D15);
// no generation without an accepted number (R94: a refused first message
// opens none), so every restart recovers.
func FuzzReceiver(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{0x10, 0x22, 0x13, 0x41, 0x90, 0x15, 0xa0, 0x33, 0x30, 0xff})
	f.Add([]byte{0x08, 0x0a, 0x09, 0x0b, 0x88, 0x18, 0x1a, 0xc0, 0x19})
	f.Add([]byte{0x00, 0x05, 0x00, 0x0d, 0x06, 0x81, 0x05, 0x01, 0x07, 0x00, 0x00, 0x05, 0x04, 0xff, 0x04, 0xff})
	// b holds 1..3, filling MaxHeldTotal; d's first message is refused
	// (D15) and must open nothing, then a restart (sim bug 1).
	f.Add([]byte{0x00, 0x05, 0x00, 0x09, 0x00, 0x0d, 0x00, 0x07, 0x07, 0x00})
	f.Fuzz(func(t *testing.T, prog []byte) {
		fuzzOne(t, prog, 1)
		fuzzOne(t, prog, 3) // ordered groups hand out runs (#22)
	})
}

// fuzzOne runs one FuzzReceiver program, ordered groups handing out runs
// of up to run messages.
func fuzzOne(t *testing.T, prog []byte, run int) {
	{
		// MaxHeldTotal is what one group may hold: a second ordered
		// group's first early message can be refused by it (D15).
		cfg := Config{MaxHeldPerGroup: 3, MaxHeldTotal: 3, MaxRangesPerGroup: 4, MaxGroups: 4, MaxDeliveryRun: run}
		h := newHarness(t, cfg)
		type gk struct {
			id group.ID
			n  uint64
		}
		seen := map[gk]int{}
		next := map[group.ID]uint64{}
		expiries := map[string]time.Time{}
		gids := []string{"a", "b", "c", "d"}
		aborted := map[string]bool{}
		h.onReady = func(rd Ready) {
			taken := false // as the harness will decide (process)
			for _, d := range rd.Deliver {
				if d.InRun && !taken {
					continue // handed back, never seen by the consumer
				}
				taken = !h.holdTake && !h.failTake
				if group.Passed(d.Expiry, h.now) {
					t.Fatalf("delivered %s after its expiry", refStr(d.Ref))
				}
				k := gk{d.Ref.Group, d.Ref.Number}
				seen[k]++
				ord := d.Ref.Group.GroupID == "b" || d.Ref.Group.GroupID == "d"
				if ord && d.Ref.HasNumber {
					if d.Ref.Number > next[d.Ref.Group] || d.Ref.Number+1 < next[d.Ref.Group] {
						t.Fatalf("ordered %s delivered out of order, want %d", refStr(d.Ref), next[d.Ref.Group])
					}
					if d.Ref.Number == next[d.Ref.Group] {
						next[d.Ref.Group]++
					}
				}
			}
		}
		for i := 0; i+1 < len(prog); i += 2 {
			op, arg := prog[i], prog[i+1]
			gid := gids[arg&3]
			n := uint64(arg>>2) & 7
			var rd Ready
			switch op & 7 {
			case 0, 1, 2, 3:
				m := seq(gid, n)
				if gid == "b" || gid == "d" {
					ordered(&m)
				}
				if gid == "c" {
					noDE(&m)
				}
				if op&8 != 0 {
					m.HasNumber = false
					m.Flags.MessageOrder = false
				}
				if op&0x10 != 0 {
					m.Pattern, m.ReplyTo = group.ReplyCallback, "http://x/cb"
				}
				e, ok := expiries[fmt.Sprint(gid, n)]
				if !ok {
					e = h.now.Add(time.Duration(arg%50+1) * time.Second)
					expiries[fmt.Sprint(gid, n)] = e
				}
				m.Expiry = e
				rd = h.r.Message(h.now, m)
			case 4:
				h.now = h.now.Add(time.Duration(arg) * 100 * time.Millisecond)
				rd = h.r.Tick(h.now)
			case 5:
				rd = h.r.Poll(h.now, PollRequest{Refs: []group.PollRef{{GroupID: gid, Ranges: []group.Range{{From: 0, To: n}}}}})
			case 6:
				if arg&0x80 != 0 {
					// Operator delete: its ids may be delivered again after it.
					aborted[gid] = true
					for id := range next {
						if id.GroupID == gid {
							delete(next, id)
						}
					}
					rd = h.r.Abort(h.now, gid)
					break
				}
				h.failTake = arg&1 == 1
				continue
			case 7:
				h.restart()
				continue
			}
			h.process(rd)
			if h.r.heldCount > cfg.MaxHeldTotal || h.r.heldCount < 0 {
				t.Fatalf("held %d over the limit", h.r.heldCount)
			}
			for _, fam := range h.r.groups {
				for _, g := range fam.gens {
					if g.buf.Len() > cfg.MaxHeldPerGroup {
						t.Fatalf("group held %d over the limit", g.buf.Len())
					}
					if !g.singleton && g.received.Empty() {
						t.Fatalf("generation %v without an accepted number (R94)", g.id)
					}
				}
			}
		}
		// A number is handed out again only after a failed or lost hand-off,
		// or without DuplicateElimination in an unordered group (R46).
		for k, c := range seen {
			if c > 1 && k.id.GroupID != "c" && !aborted[k.id.GroupID] && h.taken[DeliveryRef{Group: k.id, HasNumber: true, Number: k.n}] > 1 {
				t.Fatalf("%v/%d taken %d times", k.id, k.n, c)
			}
		}
		if at, ok := h.r.NextDeadline(); ok && at.Before(h.now.Add(-time.Hour*24*365)) && !at.IsZero() {
			t.Fatalf("deadline %v far in the past", at)
		}
	}
}

// FuzzDecode: stored values never make a decoder panic, and what Recover
// refuses it refuses with an error.
func FuzzDecode(f *testing.F) {
	g := &gstate{}
	f.Add(encodeMeta(nil, g))
	f.Add(encodeMsg(nil, t0, content{payload: []byte("x")}))
	f.Add(encodeMsg(nil, t0, content{payload: []byte("x"), action: "urn:a"}))
	f.Add(encodeEntry(nil, &cbEntry{url: "http://a", groupID: "g", to: 3}))
	f.Add([]byte{1, 0xff, 0xff})
	f.Add([]byte{1, 2, 1, 0x80, 0x01, 0})                      // a hand-off retry record
	f.Add(append([]byte{1, 8}, []byte("http://a\x02\x00")...)) // a URL back-off record
	f.Fuzz(func(t *testing.T, v []byte) {
		var s gstate
		_ = decodeMeta(v, &s)
		_, _, _ = decodeMsg(v)
		_, _ = decodeSeg(v)
		_, _ = decodeFault(v)
		_, _ = decodeBody(v)
		var e cbEntry
		_ = decodeEntry(v, &e)
		_, _, _ = decodeHandoffRetry(v)
		_, _, _, _ = decodeURLState(v)
		outbox := func(yield func(group.Key, []byte) bool) {
			yield(urlKey(3), v) // a callback URL's back-off record
		}
		if _, err := Recover(Config{}, outbox); err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, errRecord) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		for _, kind := range []group.Kind{group.KindMeta, group.KindReceived, group.KindHeld, group.KindDelivery,
			group.KindReply, group.KindResponse, kindHandoffRetry} {
			recs := func(yield func(group.Key, []byte) bool) {
				meta := encodeMeta(nil, &gstate{pattern: group.ReplyResponse, flags: group.Flags{MessageOrder: true}})
				if !yield(group.Key{Role: group.RoleReceiver, GroupID: "g", Generation: 1, Kind: group.KindMeta}, meta) {
					return
				}
				yield(group.Key{Role: group.RoleReceiver, GroupID: "g", Generation: 1, Kind: kind, Number: 5}, v)
			}
			if _, err := Recover(Config{}, recs); err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, errRecord) {
				t.Fatalf("unexpected error kind: %v", err)
			}
		}
	})
}
