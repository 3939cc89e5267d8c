package pebblestore_test

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/pebblestore"
	"github.com/wsrkit/wsrkit/store/storetest"
)

func openMem(t *testing.T, fs vfs.FS) *pebblestore.Store {
	t.Helper()
	s, err := pebblestore.Open(pebblestore.Options{Dir: "db", FS: fs})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openMem(t, vfs.NewMem()) })
}

// TestContractReopen runs the kit with a Close and Open on the same
// filesystem before every final check: everything applied survives.
func TestContractReopen(t *testing.T) {
	fss := map[store.Store]vfs.FS{}
	storetest.RunHarness(t, storetest.Harness{
		Open: func(t *testing.T) store.Store {
			fs := vfs.NewMem()
			s := openMem(t, fs)
			fss[s] = fs
			return s
		},
		Reopen: func(t *testing.T, s store.Store) store.Store {
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			fs := fss[s]
			n := openMem(t, fs)
			fss[n] = fs
			return n
		},
	})
}

// TestContractDisk runs the kit on a real directory.
func TestContractDisk(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := pebblestore.Open(pebblestore.Options{Dir: t.TempDir()})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return s
	})
}

func TestLimitsConfigurable(t *testing.T) {
	s, err := pebblestore.Open(pebblestore.Options{Dir: "db", FS: vfs.NewMem(), Limits: store.Limits{MaxValueBytes: 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k := group.Key{Role: group.RoleReceiver, GroupID: "g", Generation: 1, Kind: group.KindMeta}
	if err := s.Apply([]group.Mutation{{Op: group.OpPut, Key: k, Value: []byte("1234")}}); err != nil {
		t.Fatalf("value at the limit: %v", err)
	}
	if err := s.Apply([]group.Mutation{{Op: group.OpPut, Key: k, Value: []byte("12345")}}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("value over the limit: %v; want ErrInvalid", err)
	}
}
