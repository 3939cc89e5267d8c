package pebblestore

import (
	"testing"

	"github.com/wsrkit/wsrkit/rmp/group"
)

func TestMemFSCrashCloneKeepsSyncedBatches(t *testing.T) {
	fs := NewMemFS()
	st, err := fs.Open("db", Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := group.Key{Role: group.RoleReceiver, GroupID: "g", Generation: 1, Kind: group.KindMeta}
	if err := st.Apply([]group.Mutation{{Op: group.OpPut, Key: k, Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	for _, pct := range []int{0, 50, 100} {
		clone := fs.CrashClone(pct, 7)
		st2, err := clone.Open("db", Options{})
		if err != nil {
			t.Fatalf("reopen after crash (%d%% unsynced kept): %v", pct, err)
		}
		v, ok, err := st2.Get(k)
		if err != nil || !ok || string(v) != "v" {
			t.Fatalf("after crash (%d%%): got %q %v %v, want the synced value", pct, v, ok, err)
		}
		st2.Close()
	}
	st.Close()
}
