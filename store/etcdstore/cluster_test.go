package etcdstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store/etcdstore"
)

// TestShardClaims: one owner (one lease) claims names under several shard
// prefixes with In; each shard's fenced store compares its own claim;
// Holders reads every shard's holder; Stamped logs the holding of each
// commit; ending the lease frees every shard and its announcement.
func TestShardClaims(t *testing.T) {
	prefix := newPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	base := open(t, etcdstore.Options{Prefix: prefix})
	defer base.Close()
	shard := func(i int) *etcdstore.Store {
		s, err := etcdstore.Open(etcdstore.Options{Client: base.Client(), Prefix: fmt.Sprintf("%sshard/%d/", prefix, i)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	shards := []*etcdstore.Store{shard(0), shard(1), shard(2)}
	a, b := newOwner(t, base, "a", 10*time.Second), newOwner(t, base, "b", 10*time.Second)
	defer b.Close()

	c0, err := a.In(shards[0]).TryAcquire(ctx, "shard")
	if err != nil {
		t.Fatal(err)
	}
	c2, err := b.In(shards[2]).TryAcquire(ctx, "shard")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.In(shards[0]).TryAcquire(ctx, "shard"); !errors.Is(err, etcdstore.ErrOwned) {
		t.Fatalf("b claims a's shard 0: %v; want ErrOwned", err)
	}
	hs, err := etcdstore.Holders(ctx, shards, "shard")
	if err != nil {
		t.Fatal(err)
	}
	want := []etcdstore.Holder{{Node: "a", Revision: c0.Revision}, {}, {Node: "b", Revision: c2.Revision}}
	if fmt.Sprint(hs) != fmt.Sprint(want) {
		t.Fatalf("Holders = %+v; want %+v", hs, want)
	}
	// The claim lives under the shard's prefix, where the fence looks.
	if err := shards[0].Stamped(c0).Apply([]group.Mutation{meta("g", "a1")}); err != nil {
		t.Fatalf("a's fenced commit on shard 0: %v", err)
	}
	if err := shards[2].Fenced(c0).Apply([]group.Mutation{meta("g", "x")}); !errors.Is(err, etcdstore.ErrFenced) {
		t.Fatalf("shard 0's claim on shard 2 = %v; want ErrFenced", err)
	}
	st, err := base.Client().Get(ctx, prefix+"shard/0/"+etcdstore.StampKey)
	if err != nil || len(st.Kvs) != 1 || string(st.Kvs[0].Value) != fmt.Sprintf("a %d", c0.Revision) {
		t.Fatalf("stamp = %v, %v; want \"a %d\"", st, err, c0.Revision)
	}

	if err := a.Announce(ctx, "a", "http://a"); err != nil {
		t.Fatal(err)
	}
	if err := b.Announce(ctx, "b", "http://b"); err != nil {
		t.Fatal(err)
	}
	ann, err := base.Announced(ctx)
	if err != nil || fmt.Sprint(ann) != "[{a http://a} {b http://b}]" {
		t.Fatalf("Announced = %v, %v", ann, err)
	}
	if err := a.Close(); err != nil { // revokes the one lease behind every view
		t.Fatal(err)
	}
	if ann, err := base.Announced(ctx); err != nil || fmt.Sprint(ann) != "[{b http://b}]" {
		t.Fatalf("Announced after a's lease ended = %v, %v", ann, err)
	}
	if hs, err := etcdstore.Holders(ctx, shards, "shard"); err != nil || hs[0].Node != "" || hs[2].Node != "b" {
		t.Fatalf("Holders after a's lease ended = %+v, %v", hs, err)
	}
	if err := shards[0].Stamped(c0).Apply([]group.Mutation{meta("g", "a2")}); !errors.Is(err, etcdstore.ErrFenced) {
		t.Fatalf("a's commit after its lease ended = %v; want ErrFenced", err)
	}
	// Stores on another client cannot be read in one request.
	other := open(t, etcdstore.Options{Prefix: prefix})
	defer other.Close()
	if _, err := etcdstore.Holders(ctx, []*etcdstore.Store{shards[0], other}, "shard"); err == nil {
		t.Fatal("Holders across clients: no error")
	}
}

// TestSetting: the first value written wins; later writers read it.
func TestSetting(t *testing.T) {
	s := open(t, etcdstore.Options{Prefix: newPrefix(t)})
	defer s.Close()
	ctx := context.Background()
	got, err := s.Setting(ctx, "shards", []byte("16"))
	if err != nil || string(got) != "16" {
		t.Fatalf("first Setting = %q, %v", got, err)
	}
	got, err = s.Setting(ctx, "shards", []byte("8"))
	if err != nil || string(got) != "16" {
		t.Fatalf("second Setting = %q, %v; want the first value 16", got, err)
	}
	if _, err := s.Setting(ctx, "", []byte("x")); err == nil {
		t.Fatal("empty key: no error")
	}
}
