package kvplan

import (
	"errors"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
)

// TestTranslateFinal: the finals name every generation whose deadline the
// batch reads, once, in the order the batch first names it, with the value
// the batch leaves (an unchanged one as read); each entry is read once.
func TestTranslateFinal(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	u, _ := EncodeInstant(at)
	id := func(g string) group.ID { return group.ID{GroupID: g, Generation: 1} }
	key := func(g string) group.Key { return group.Key{Role: 1, GroupID: g, Generation: 1, Kind: group.KindMeta} }
	rev := func(g string) string { return string(DeadlineRevKey(1, id(g))) }
	stored := map[string][]byte{rev("same"): be(u), rev("cleared"): be(u), rev("dropped"): be(u)}
	reads := map[string]int{}
	read := func(k []byte) ([]byte, bool, error) {
		reads[string(k)]++
		v, ok := stored[string(k)]
		return v, ok, nil
	}
	batch := []group.Mutation{
		{Op: group.OpSetDeadline, Key: key("new"), At: at.Add(1)},
		{Op: group.OpPut, Key: key("put"), Value: []byte("v")},
		{Op: group.OpSetDeadline, Key: key("same"), At: at},
		{Op: group.OpSetDeadline, Key: key("cleared")},
		{Op: group.OpDeleteGeneration, Key: key("dropped")},
		{Op: group.OpSetDeadline, Key: key("new"), At: at.Add(2)},
		{Op: group.OpSetDeadline, Key: key("same"), At: at},
	}
	var w recorder
	got, err := TranslateFinal(batch, store.Limits{}, read, &w)
	if err != nil {
		t.Fatal(err)
	}
	want := []Final{
		{Rev: rev("new"), At: u + 2, Has: true},
		{Rev: rev("same"), At: u, Has: true},
		{Rev: rev("cleared")},
		{Rev: rev("dropped")},
	}
	if len(got) != len(want) {
		t.Fatalf("finals %+v; want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("final %d = %+v; want %+v", i, got[i], want[i])
		}
	}
	for k, n := range reads {
		if n != 1 {
			t.Fatalf("entry %x read %d times; want once", k, n)
		}
	}
	if len(reads) != 4 {
		t.Fatalf("%d entries read; want 4", len(reads))
	}
}

// TestTranslateFinalErrors: an invalid batch or a failing read gives no
// finals.
func TestTranslateFinalErrors(t *testing.T) {
	none := func([]byte) ([]byte, bool, error) { return nil, false, nil }
	bad := []group.Mutation{{Op: group.OpSetDeadline, Key: group.Key{GroupID: "g"}}}
	if f, err := TranslateFinal(bad, store.Limits{}, none, &recorder{}); !errors.Is(err, store.ErrInvalid) || f != nil {
		t.Fatalf("invalid batch: %v, %v; want ErrInvalid and no finals", f, err)
	}
	boom := errors.New("boom")
	failing := func([]byte) ([]byte, bool, error) { return nil, false, boom }
	ok := []group.Mutation{{Op: group.OpSetDeadline, Key: group.Key{Role: 1, GroupID: "g", Generation: 1}}}
	if f, err := TranslateFinal(ok, store.Limits{}, failing, &recorder{}); !errors.Is(err, boom) || f != nil {
		t.Fatalf("failing read: %v, %v; want the read's error and no finals", f, err)
	}
}
