package kvplan

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
)

type recorder struct{ ops []string }

func (r *recorder) Set(k, v []byte) error { r.ops = append(r.ops, "set "+string(k[:1])); return nil }
func (r *recorder) Delete(k []byte) error { r.ops = append(r.ops, "del "+string(k[:1])); return nil }
func (r *recorder) DeleteRange(lo, _ []byte) error {
	r.ops = append(r.ops, "range "+string(lo[:1]))
	return nil
}

func TestTranslateWritesNothingForAnInvalidBatch(t *testing.T) {
	var w recorder
	batch := []group.Mutation{
		{Op: group.OpPut, Key: group.Key{Role: 1, GroupID: "g", Kind: 1}},
		{Op: group.OpPut, Key: group.Key{Role: 0, GroupID: "g", Kind: 1}},
	}
	err := Translate(batch, store.Limits{}, func([]byte) ([]byte, bool, error) { return nil, false, nil }, &w)
	if !errors.Is(err, store.ErrInvalid) || len(w.ops) != 0 {
		t.Fatalf("Translate = %v with ops %v; want ErrInvalid and no ops", err, w.ops)
	}
}

// TestTranslateDeadlineOps pins the engine operations of deadline changes:
// the old index key is deleted in the same batch, and a repeated setting
// writes nothing.
func TestTranslateDeadlineOps(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	k := group.Key{Role: 1, GroupID: "g", Generation: 1}
	u, _ := EncodeInstant(at)
	stored := map[string][]byte{string(DeadlineRevKey(1, group.ID{GroupID: "g", Generation: 1})): be(u)}
	read := func(key []byte) ([]byte, bool, error) { v, ok := stored[string(key)]; return v, ok, nil }
	cases := []struct {
		name  string
		batch []group.Mutation
		want  []string
	}{
		{"same", []group.Mutation{{Op: group.OpSetDeadline, Key: k, At: at}}, nil},
		{"replace", []group.Mutation{{Op: group.OpSetDeadline, Key: k, At: at.Add(1)}}, []string{"del d", "set d", "set e"}},
		{"clear", []group.Mutation{{Op: group.OpSetDeadline, Key: k}}, []string{"del d", "del e"}},
		{"delete generation", []group.Mutation{{Op: group.OpDeleteGeneration, Key: k}}, []string{"range r", "del d", "del e"}},
		{"twice in a batch", []group.Mutation{{Op: group.OpSetDeadline, Key: k, At: at.Add(1)}, {Op: group.OpSetDeadline, Key: k, At: at.Add(2)}},
			[]string{"del d", "set d", "set e", "del d", "set d", "set e"}},
	}
	for _, c := range cases {
		var w recorder
		if err := Translate(c.batch, store.Limits{}, read, &w); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(w.ops) != len(c.want) {
			t.Fatalf("%s: ops %v; want %v", c.name, w.ops, c.want)
		}
		for i := range w.ops {
			if w.ops[i] != c.want[i] {
				t.Fatalf("%s: ops %v; want %v", c.name, w.ops, c.want)
			}
		}
	}
	stored[string(DeadlineRevKey(1, group.ID{GroupID: "g", Generation: 1}))] = []byte{1, 2, 3}
	var w recorder
	if err := Translate(cases[1].batch, store.Limits{}, read, &w); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("corrupt reverse entry: %v; want ErrCorrupt", err)
	}
}

func be(u uint64) []byte {
	b := make([]byte, 8)
	for i := range 8 {
		b[7-i] = byte(u >> (8 * i))
	}
	return b
}

func TestLockKeysSortedUnique(t *testing.T) {
	m := func(op group.Op, gid string) group.Mutation {
		return group.Mutation{Op: op, Key: group.Key{Role: 1, GroupID: gid, Generation: 1, Kind: 1}}
	}
	keys := LockKeys([]group.Mutation{m(group.OpSetDeadline, "b"), m(group.OpPut, "c"), m(group.OpDeleteGeneration, "a"), m(group.OpSetDeadline, "b")})
	if len(keys) != 2 || keys[0] >= keys[1] {
		t.Fatalf("LockKeys = %q; want the keys of a and b, sorted", keys)
	}
}

func TestKeyLocksExclude(t *testing.T) {
	var l KeyLocks
	var wg sync.WaitGroup
	counter := 0 // guarded by the lock on "k"
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				keys := []string{"a", "k"}
				l.Lock(keys)
				counter++
				l.Unlock(keys)
			}
		})
	}
	wg.Wait()
	if counter != 8000 {
		t.Fatalf("counter = %d; want 8000 (lost updates)", counter)
	}
	if len(l.held) != 0 {
		t.Fatalf("%d locks left after use", len(l.held))
	}
}
