package sender

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// TestRecycleChangesOnlyMemory drives two Senders with the same inputs, one
// recycling every Ready as the engine does: their Readies are the same, and
// the bytes kept from the recycled ones (Persist values, payloads) are never
// rewritten by later inputs (Recycle, group.Arena).
func TestRecycleChangesOnlyMemory(t *testing.T) {
	cfg := testConfig()
	plain, err := New(cfg)
	noErr(t, err)
	recycled, err := New(cfg)
	noErr(t, err)
	var kept, want [][]byte
	now := t0
	step := func(in func(s *Sender) Ready) []Outcome {
		t.Helper()
		a, b := in(plain), in(recycled)
		if !reflect.DeepEqual(normal(a), normal(b)) {
			t.Fatalf("at %v the recycling Sender's Ready differs:\n%+v\n%+v", now, a, b)
		}
		for _, m := range b.Persist {
			kept, want = append(kept, m.Value), append(want, bytes.Clone(m.Value))
		}
		for _, tr := range b.Send {
			kept, want = append(kept, tr.Payload), append(want, bytes.Clone(tr.Payload))
		}
		notify := append([]Outcome(nil), b.Notify...)
		recycled.Recycle(b)
		return notify
	}
	for i := range 300 {
		gid := ""
		sub := Submission{To: "http://r.example/rmp", GroupKey: fmt.Sprintf("k%d", i%5),
			Flags:   group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: true},
			Payload: []byte(fmt.Sprintf("payload %d", i))}
		var refs []MessageRef
		step(func(s *Sender) Ready {
			ref, rd, err := s.Submit(now, sub)
			noErr(t, err)
			refs, gid = append(refs, ref), ref.GroupID
			return rd
		})
		now = now.Add(700 * time.Millisecond)
		step(func(s *Sender) Ready { return s.Tick(now) }) // resends
		if i%3 == 2 {
			for _, o := range step(func(s *Sender) Ready { return s.Replies(now, []group.Reply{ack(gid, 0, refs[0].Number)}) }) {
				step(func(s *Sender) Ready { return s.OutcomeHandled(now, o.ID) })
			}
		}
	}
	if len(kept) < 1000 {
		t.Fatalf("only %d values kept", len(kept))
	}
	for i := range kept {
		if !bytes.Equal(kept[i], want[i]) {
			t.Fatalf("kept bytes %d of %d were rewritten", i, len(kept))
		}
	}
}

// normal is rd with empty slices as nil: a recycled Ready's are empty.
func normal(rd Ready) Ready {
	return Ready{Persist: nilIfEmpty(rd.Persist), Send: nilIfEmpty(rd.Send), Polls: nilIfEmpty(rd.Polls),
		Notify: nilIfEmpty(rd.Notify), Events: nilIfEmpty(rd.Events)}
}

func nilIfEmpty[T any](x []T) []T {
	if len(x) == 0 {
		return nil
	}
	return x
}
