package memstore_test

import (
	"errors"
	"testing"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/memstore"
	"github.com/wsrkit/wsrkit/store/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return memstore.New(memstore.Options{}) })
}

// TestContractReopen restarts through Clone, as the conformance runner does.
func TestContractReopen(t *testing.T) {
	storetest.RunHarness(t, storetest.Harness{
		Open: func(*testing.T) store.Store { return memstore.New(memstore.Options{}) },
		Reopen: func(t *testing.T, s store.Store) store.Store {
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			return s.(*memstore.Store).Clone()
		},
	})
}

func TestFailApply(t *testing.T) {
	s := memstore.New(memstore.Options{})
	boom := errors.New("boom")
	k := group.Key{Role: group.RoleReceiver, GroupID: "g", Generation: 1, Kind: group.KindMeta}
	s.FailApply(2, boom)
	put := func(v string) error {
		return s.Apply([]group.Mutation{{Op: group.OpPut, Key: k, Value: []byte(v)}})
	}
	if err := put("one"); err != nil {
		t.Fatalf("first Apply: %v", err)
	}
	if err := put("two"); !errors.Is(err, boom) {
		t.Fatalf("second Apply = %v; want the injected error", err)
	}
	if v, _, _ := s.Get(k); string(v) != "one" {
		t.Fatalf("the failed Apply changed the store: %q", v)
	}
	if err := put("three"); err != nil {
		t.Fatalf("Apply after the failure: %v", err)
	}
	s.FailApply(1, boom)
	s.FailApply(0, nil) // disarmed
	if err := put("four"); err != nil {
		t.Fatalf("Apply after disarming: %v", err)
	}
}

func TestLimitsConfigurable(t *testing.T) {
	s := memstore.New(memstore.Options{Limits: store.Limits{MaxGroupIDBytes: 3, MaxValueBytes: 4, MaxBatchMutations: 2, MaxBatchBytes: 10}})
	k := group.Key{Role: group.RoleReceiver, GroupID: "abc", Generation: 1, Kind: group.KindMeta}
	ok := group.Mutation{Op: group.OpPut, Key: k, Value: []byte("1234")}
	if err := s.Apply([]group.Mutation{ok}); err != nil {
		t.Fatalf("at every limit: %v", err)
	}
	long := k
	long.GroupID = "abcd"
	cases := map[string][]group.Mutation{
		"groupId":   {{Op: group.OpPut, Key: long}},
		"value":     {{Op: group.OpPut, Key: k, Value: []byte("12345")}},
		"mutations": {ok, ok, ok},
		"bytes":     {ok, ok},
	}
	for name, batch := range cases {
		if err := s.Apply(batch); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s limit: Apply = %v; want ErrInvalid", name, err)
		}
	}
}
