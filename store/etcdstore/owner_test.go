package etcdstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/etcdstore"
)

func meta(gid, v string) group.Mutation {
	return group.Mutation{Op: group.OpPut, Key: group.Key{Role: group.RoleReceiver, GroupID: gid, Generation: 1, Kind: group.KindMeta}, Value: []byte(v)}
}

func newOwner(t *testing.T, s *etcdstore.Store, node string, ttl time.Duration) *etcdstore.Owner {
	t.Helper()
	o, err := etcdstore.NewOwner(s, node, ttl)
	if err != nil {
		t.Fatalf("NewOwner(%s): %v", node, err)
	}
	return o
}

// TestFencedTakeover: node a owns shard s0 and writes through its fenced
// store; a crashes (its keep-alive stops, the lease is not revoked); b waits
// in Acquire, gets s0 once a's lease expires, resumes from a's state, and
// a's late write is rejected with ErrFenced and applies nothing.
func TestFencedTakeover(t *testing.T) {
	prefix := newPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// a's lease lives on its own client, which the crash closes; a's writes
	// go through another client that stays up (a stale node still talking).
	aLease := open(t, etcdstore.Options{Prefix: prefix})
	aStore := open(t, etcdstore.Options{Prefix: prefix})
	defer aStore.Close()
	b := open(t, etcdstore.Options{Prefix: prefix})
	defer b.Close()

	ownerA := newOwner(t, aLease, "a", time.Second) // the lease the crash lets expire
	claimA, err := ownerA.TryAcquire(ctx, "s0")
	if err != nil {
		t.Fatalf("a acquires s0: %v", err)
	}
	if again, err := ownerA.TryAcquire(ctx, "s0"); err != nil || again != claimA {
		t.Fatalf("a acquires s0 again = %+v, %v; want its claim %+v", again, err, claimA)
	}
	fencedA := aStore.Fenced(claimA)
	if err := fencedA.Apply([]group.Mutation{meta("g", "a1")}); err != nil {
		t.Fatalf("owner's Apply: %v", err)
	}

	ownerB := newOwner(t, b, "b", 10*time.Second) // must outlive a busy machine's pauses
	defer ownerB.Close()
	if _, err := ownerB.TryAcquire(ctx, "s0"); !errors.Is(err, etcdstore.ErrOwned) {
		t.Fatalf("b TryAcquire of a held name = %v; want ErrOwned", err)
	}

	acquired := make(chan etcdstore.Claim, 1)
	errc := make(chan error, 1)
	go func() {
		c, err := ownerB.Acquire(ctx, "s0")
		if err != nil {
			errc <- err
			return
		}
		acquired <- c
	}()
	select {
	case c := <-acquired:
		t.Fatalf("b acquired s0 while a holds it: %+v", c)
	case <-time.After(300 * time.Millisecond):
	}

	crashed := time.Now()
	if err := aLease.Close(); err != nil { // a's keep-alives stop
		t.Fatalf("close a's lease client: %v", err)
	}
	var claimB etcdstore.Claim
	select {
	case claimB = <-acquired:
	case err := <-errc:
		ttl, terr := b.Client().TimeToLive(context.Background(), ownerB.Lease())
		t.Fatalf("b Acquire: %v (b lease %x ttl %+v %v; a lease %x)", err, ownerB.Lease(), ttl, terr, ownerA.Lease())
	case <-ctx.Done():
		t.Fatal("b did not take s0 over after a's lease expired")
	}
	if claimB.Revision <= claimA.Revision || claimB.Node != "b" {
		t.Fatalf("b's claim %+v; want a later revision than a's %+v", claimB, claimA)
	}
	t.Logf("takeover %v after the crash (lease TTL 1s, rounded up by etcd)", time.Since(crashed).Round(100*time.Millisecond))

	// b resumes from a's state.
	fencedB := b.Fenced(claimB)
	v, ok, err := fencedB.Get(meta("g", "").Key)
	if err != nil || !ok || string(v) != "a1" {
		t.Fatalf("b reads a's state: %q, %v, %v", v, ok, err)
	}
	if err := fencedB.Apply([]group.Mutation{meta("g", "b1")}); err != nil {
		t.Fatalf("new owner's Apply: %v", err)
	}

	// a's late write is fenced off.
	err = fencedA.Apply([]group.Mutation{meta("g", "a2"), meta("h", "a2")})
	if !errors.Is(err, etcdstore.ErrFenced) {
		t.Fatalf("stale owner's Apply = %v; want ErrFenced", err)
	}
	if v, _, _ := b.Get(meta("g", "").Key); string(v) != "b1" {
		t.Fatalf("after the stale write g = %q; want b1", v)
	}
	if _, ok, _ := b.Get(meta("h", "").Key); ok {
		t.Fatal("the stale write's second record landed")
	}
	// The unfenced store of a is not stopped by the refusal.
	if _, _, err := fencedA.Get(meta("g", "").Key); err != nil {
		t.Fatalf("stale owner's Get after ErrFenced: %v", err)
	}
}

// TestReleaseHandsOver: a released claim is free at once, and its fenced
// store is refused; releasing a lost claim is harmless.
func TestReleaseHandsOver(t *testing.T) {
	prefix := newPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := open(t, etcdstore.Options{Prefix: prefix})
	defer s.Close()
	a, b := newOwner(t, s, "a", 10*time.Second), newOwner(t, s, "b", 10*time.Second)
	defer a.Close()
	defer b.Close()
	ca, err := a.TryAcquire(ctx, "group-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, ca); err != nil {
		t.Fatal(err)
	}
	cb, err := b.TryAcquire(ctx, "group-1")
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	if err := a.Release(ctx, ca); err != nil {
		t.Fatalf("releasing a lost claim: %v", err)
	}
	if _, err := b.TryAcquire(ctx, "group-1"); err != nil {
		t.Fatalf("a's late Release freed b's claim: %v", err)
	}
	if err := s.Fenced(ca).Apply([]group.Mutation{meta("g", "x")}); !errors.Is(err, etcdstore.ErrFenced) {
		t.Fatalf("Apply under a released claim = %v; want ErrFenced", err)
	}
	if err := s.Fenced(cb).Apply([]group.Mutation{meta("g", "y")}); err != nil {
		t.Fatalf("Apply under the holder's claim: %v", err)
	}
	// Closing an owner revokes its lease: the claim is gone at once.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.TryAcquire(ctx, "group-1"); err != nil {
		t.Fatalf("acquire after the holder closed: %v", err)
	}
	if err := s.Fenced(cb).Apply([]group.Mutation{meta("g", "z")}); !errors.Is(err, etcdstore.ErrFenced) {
		t.Fatalf("Apply under a revoked claim = %v; want ErrFenced", err)
	}
	var n int
	for r, err := range s.Scan(store.GroupPrefix(group.RoleReceiver, "g")) {
		if err != nil || string(r.Value) != "y" {
			t.Fatalf("record %q, %v; want only y", r.Value, err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("%d records; want 1", n)
	}
}
