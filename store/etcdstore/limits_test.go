package etcdstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/etcdstore"
)

func puts(gid string, n, valueBytes int) []group.Mutation {
	var b []group.Mutation
	for i := range n {
		b = append(b, group.Mutation{Op: group.OpPut,
			Key:   group.Key{Role: group.RoleReceiver, GroupID: gid, Generation: 1, Kind: group.KindDelivery, Number: uint64(i)},
			Value: bytes.Repeat([]byte{'v'}, valueBytes)})
	}
	return b
}

func count(t *testing.T, s store.Store, gid string) int {
	t.Helper()
	n := 0
	for _, err := range s.Scan(store.GroupPrefix(group.RoleReceiver, gid)) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// TestMaxTxnOpsRefusesBeforeSending: a batch over Options.MaxTxnOps is
// refused whole with an error naming the limit, and the store stays usable.
func TestMaxTxnOpsRefusesBeforeSending(t *testing.T) {
	s := open(t, etcdstore.Options{Prefix: newPrefix(t), MaxTxnOps: 4})
	defer s.Close()
	if err := s.Apply(puts("at", 4, 1)); err != nil {
		t.Fatalf("batch of exactly MaxTxnOps operations: %v", err)
	}
	err := s.Apply(puts("over", 5, 1))
	if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "MaxTxnOps 4") || !strings.Contains(err.Error(), "--max-txn-ops") {
		t.Fatalf("batch over MaxTxnOps: %v; want ErrInvalid naming MaxTxnOps 4 and --max-txn-ops", err)
	}
	if n := count(t, s, "over"); n != 0 {
		t.Fatalf("refused batch left %d records", n)
	}
	if n := count(t, s, "at"); n != 4 {
		t.Fatalf("accepted batch has %d records; want 4", n)
	}
}

// TestClusterRefusalIsDefinite: when MaxTxnOps / MaxRequestBytes are set
// above the cluster's flags, etcd refuses before proposing; the refusal is
// ErrInvalid (nothing applied) and does not stop the store.
func TestClusterRefusalIsDefinite(t *testing.T) {
	s := open(t, etcdstore.Options{Prefix: newPrefix(t), MaxTxnOps: 1000, MaxRequestBytes: 8 << 20})
	defer s.Close()
	cases := []struct {
		name  string
		batch []group.Mutation
	}{
		{"too many ops", puts("ops", 200, 1)},    // cluster --max-txn-ops 128
		{"too large", puts("big", 1, 1800*1024)}, // cluster --max-request-bytes 1.5 MiB
	}
	for _, c := range cases {
		if err := s.Apply(c.batch); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("%s: Apply = %v; want ErrInvalid", c.name, err)
		}
	}
	deadlines := make([]group.Mutation, 200) // 200 deadline reads: one over the cluster's limit
	for i := range deadlines {
		deadlines[i] = group.Mutation{Op: group.OpSetDeadline, At: time.Unix(1, 0),
			Key: group.Key{Role: group.RoleReceiver, GroupID: "dl", Generation: uint64(i + 1)}}
	}
	if err := s.Apply(deadlines); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("200 deadline reads: Apply = %v; want ErrInvalid", err)
	}
	if n := count(t, s, "ops") + count(t, s, "big"); n != 0 {
		t.Fatalf("refused batches left %d records", n)
	}
	if err := s.Apply(puts("after", 3, 10)); err != nil {
		t.Fatalf("Apply after a definite refusal: %v", err)
	}
}

// TestMaxRequestBytes: the estimate refuses a large batch before sending,
// naming the limit; a value that fits is stored whole.
func TestMaxRequestBytes(t *testing.T) {
	s := open(t, etcdstore.Options{Prefix: newPrefix(t)})
	defer s.Close()
	if err := s.Apply(puts("fits", 1, 1<<20)); err != nil {
		t.Fatalf("1 MiB value: %v", err)
	}
	v, ok, err := s.Get(group.Key{Role: group.RoleReceiver, GroupID: "fits", Generation: 1, Kind: group.KindDelivery})
	if err != nil || !ok || len(v) != 1<<20 {
		t.Fatalf("Get of the 1 MiB value: %d bytes, %v, %v", len(v), ok, err)
	}
	err = s.Apply(puts("over", 2, 800*1024))
	if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), fmt.Sprintf("MaxRequestBytes %d", etcdstore.DefaultMaxRequestBytes)) {
		t.Fatalf("1.6 MiB batch: %v; want ErrInvalid naming MaxRequestBytes", err)
	}
	if n := count(t, s, "over"); n != 0 {
		t.Fatalf("refused batch left %d records", n)
	}
}

// TestRewritesInOneBatch: etcd refuses a transaction that writes a key
// twice or writes inside a range it deletes; the store folds such a batch
// into its net effect (D24 generation deletion followed by new records).
func TestRewritesInOneBatch(t *testing.T) {
	s := open(t, etcdstore.Options{Prefix: newPrefix(t)})
	defer s.Close()
	k := func(kind group.Kind, n uint64) group.Key {
		return group.Key{Role: group.RoleSender, GroupID: "g", Generation: 1, Kind: kind, Number: n}
	}
	p := func(key group.Key, v string) group.Mutation {
		return group.Mutation{Op: group.OpPut, Key: key, Value: []byte(v)}
	}
	if err := s.Apply([]group.Mutation{p(k(group.KindMeta, 0), "m0"), p(k(group.KindOutbound, 1), "o1"), p(k(group.KindOutbound, 2), "o2")}); err != nil {
		t.Fatal(err)
	}
	err := s.Apply([]group.Mutation{
		p(k(group.KindOutbound, 1), "a"),
		{Op: group.OpDelete, Key: k(group.KindOutbound, 1)},
		p(k(group.KindOutbound, 1), "b"),
		{Op: group.OpDeleteGeneration, Key: k(0, 0)},
		p(k(group.KindMeta, 0), "m1"),
		p(k(group.KindOutbound, 3), "o3"),
		{Op: group.OpDelete, Key: k(group.KindOutbound, 2)},
		p(k(group.KindOutbound, 3), "o3'"),
	})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	var got []string
	for r, err := range s.Scan(store.GenerationPrefix(group.RoleSender, group.ID{GroupID: "g", Generation: 1})) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%v/%d=%s", r.Key.Kind, r.Key.Number, r.Value))
	}
	want := fmt.Sprintf("[%v/0=m1 %v/3=o3']", group.KindMeta, group.KindOutbound)
	if fmt.Sprint(got) != want {
		t.Fatalf("records = %v; want %v", got, want)
	}
}
