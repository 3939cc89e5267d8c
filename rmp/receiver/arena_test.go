package receiver

import (
	"bytes"
	"fmt"
	"testing"
)

// TestPersistValuesOutliveTheCall keeps the Persist values of many calls as
// they are, without a copy, as the engine does, and checks that later calls
// never rewrite them (package doc: Persist values are never written again).
func TestPersistValuesOutliveTheCall(t *testing.T) {
	r, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	var kept, want [][]byte
	keep := func(rd Ready) Ready {
		for _, m := range rd.Persist {
			if m.Value != nil {
				kept = append(kept, m.Value)
				want = append(want, bytes.Clone(m.Value))
			}
		}
		return rd
	}
	for i := range uint64(400) {
		gid := fmt.Sprintf("g%d", i%7)
		long := func(m *Message) { m.Payload = bytes.Repeat([]byte{byte(i)}, 40+int(i)) }
		rd := keep(r.Message(t0, seq(gid, i/7, long)))
		for _, d := range rd.Deliver {
			keep(r.Taken(t0, d.Ref))
		}
	}
	if len(kept) < 800 {
		t.Fatalf("only %d values kept", len(kept))
	}
	for i := range kept {
		if !bytes.Equal(kept[i], want[i]) {
			t.Fatalf("value %d of %d was rewritten", i, len(kept))
		}
	}
}
