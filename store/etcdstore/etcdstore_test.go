package etcdstore_test

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/etcdstore"
	"github.com/wsrkit/wsrkit/store/etcdstore/etcdtest"
	"github.com/wsrkit/wsrkit/store/storetest"
)

// cluster is the package's 3-member embedded cluster, started once by
// TestMain; every test works under its own Prefix.
var cluster *etcdtest.Cluster

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "etcdstore-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cluster, err = etcdtest.Start(dir, etcdtest.Options{Members: 3})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	cluster.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

var prefixes atomic.Int64

// newPrefix returns a namespace no other test uses.
func newPrefix(t testing.TB) string {
	return fmt.Sprintf("test/%s/%d/", t.Name(), prefixes.Add(1))
}

// open opens a store with its own client on the cluster.
func open(t testing.TB, opts etcdstore.Options) *etcdstore.Store {
	t.Helper()
	if opts.Client == nil {
		opts.Endpoints = cluster.Endpoints
	}
	s, err := etcdstore.Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, etcdstore.Options{Prefix: newPrefix(t)}) })
}

// TestContractReopen closes the store (and its client) and opens a new one
// over the same prefix before every final check: every Apply that returned
// is in etcd.
func TestContractReopen(t *testing.T) {
	storetest.RunHarness(t, storetest.Harness{
		Open: func(t *testing.T) store.Store {
			return open(t, etcdstore.Options{Prefix: newPrefix(t), PageSize: 3})
		},
		Reopen: func(t *testing.T, s store.Store) store.Store {
			p := s.(*etcdstore.Store).Prefix()
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			return open(t, etcdstore.Options{Prefix: p, PageSize: 3})
		},
	})
}
