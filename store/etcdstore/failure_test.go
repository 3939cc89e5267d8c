package etcdstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/etcdstore"
	"github.com/wsrkit/wsrkit/store/etcdstore/etcdtest"
)

// TestLostClusterStopsTheStore: a commit that fails after it may have been
// sent has an unknown outcome, so the store stops with ErrFailed (the
// contract's "an error means nothing applied" cannot be promised) and every
// later call returns it.
func TestLostClusterStopsTheStore(t *testing.T) {
	c := etcdtest.StartTB(t, etcdtest.Options{Members: 1})
	opts := etcdstore.Options{Endpoints: c.Endpoints, Prefix: "p/", RequestTimeout: time.Second}
	s, err := etcdstore.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Apply(puts("g", 2, 8)); err != nil {
		t.Fatalf("Apply with the cluster up: %v", err)
	}
	if err := c.Stop(0); err != nil {
		t.Fatal(err)
	}
	err = s.Apply(puts("g", 3, 8))
	if !errors.Is(err, store.ErrFailed) {
		t.Fatalf("Apply with the cluster down = %v; want ErrFailed", err)
	}
	if _, _, err := s.Get(puts("g", 1, 0)[0].Key); !errors.Is(err, store.ErrFailed) {
		t.Fatalf("Get after the failure = %v; want ErrFailed", err)
	}
	if err := s.Apply(puts("h", 1, 8)); !errors.Is(err, store.ErrFailed) {
		t.Fatalf("Apply after the failure = %v; want ErrFailed", err)
	}
}
