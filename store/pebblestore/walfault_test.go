package pebblestore

import (
	"errors"
	"testing"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
)

// TestMemFSFailNextWALWrite: an armed WAL fault fails the next commit with
// store.ErrFailed and stops the store; the fault is consumed once; a crash
// clone recovers every acknowledged batch.
func TestMemFSFailNextWALWrite(t *testing.T) {
	fs := NewMemFS()
	st, err := fs.Open("db", Options{})
	if err != nil {
		t.Fatal(err)
	}
	key := func(n uint64) group.Key {
		return group.Key{Role: group.RoleReceiver, GroupID: "g", Generation: 1, Kind: group.KindMeta, Number: n}
	}
	put := func(n uint64) error {
		return st.Apply([]group.Mutation{{Op: group.OpPut, Key: key(n), Value: []byte("v")}})
	}
	if err := put(1); err != nil {
		t.Fatal(err)
	}
	if fs.FailNextWALWrite(nil) {
		t.Fatal("nothing was armed")
	}
	boom := errors.New("disk on fire")
	fs.FailNextWALWrite(boom)
	if err := put(2); !errors.Is(err, store.ErrFailed) {
		t.Fatalf("commit under a WAL fault: %v, want store.ErrFailed", err)
	}
	if fs.FailNextWALWrite(nil) {
		t.Fatal("the fault was not consumed by the failed commit")
	}
	if err := put(3); !errors.Is(err, store.ErrFailed) {
		t.Fatalf("after the fault the store must stay stopped, got %v", err)
	}
	clone := fs.CrashClone(0, 1)
	_ = st.Close()
	st2, err := clone.Open("db", Options{})
	if err != nil {
		t.Fatalf("reopen after the fault: %v", err)
	}
	defer st2.Close()
	if _, ok, err := st2.Get(key(1)); err != nil || !ok {
		t.Fatalf("acknowledged batch lost: %v %v", ok, err)
	}
	if err := st2.Apply([]group.Mutation{{Op: group.OpPut, Key: key(4), Value: []byte("v")}}); err != nil {
		t.Fatalf("the recovered store takes writes: %v", err)
	}
}
