package etcdstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/store/etcdstore"
)

// TestAliveSeesTheLeaseEnd: Alive is nil while the owner's lease is
// granted, and once the lease is gone (revoked here, as its expiry would
// end it) it answers ErrLeaseEnded within the cached half-TTL, without
// waiting for a commit to be fenced.
func TestAliveSeesTheLeaseEnd(t *testing.T) {
	s := open(t, etcdstore.Options{Prefix: newPrefix(t)})
	defer s.Close()
	o := newOwner(t, s, "a", 2*time.Second)
	defer o.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for range 3 {
		if err := o.Alive(ctx); err != nil {
			t.Fatalf("Alive with the lease granted: %v", err)
		}
	}
	if _, err := s.Client().Revoke(ctx, o.Lease()); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	for {
		err := o.Alive(ctx)
		if errors.Is(err, etcdstore.ErrLeaseEnded) {
			break
		}
		if err != nil {
			t.Fatalf("Alive after the revoke = %v; want ErrLeaseEnded", err)
		}
		if time.Since(revoked) > 5*time.Second {
			t.Fatal("Alive still nil 5s after the lease was revoked (TTL 2s)")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
