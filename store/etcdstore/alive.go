package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrLeaseEnded is wrapped by Alive's error when the owner's lease is gone:
// every claim it held may belong to another node now.
var ErrLeaseEnded = errors.New("etcdstore: owner's lease has ended")

// liveness caches the last proof that an Owner's lease was granted; the
// Owner views made by In share it.
type liveness struct {
	mu sync.Mutex
	// until is the instant (monotonic clock) up to which the lease is known
	// to be granted: half the remaining TTL etcd reported, counted from
	// before the question was asked.
	until time.Time
}

// Alive returns nil when the owner's lease is known to be granted now, and
// otherwise asks etcd (TimeToLive, within the store's request timeout).
// The fence guards commits only; a node about to act outside etcd (a
// delivery POST to a consumer) checks Alive first, so an instance that was
// paused past its lease learns it before acting instead of at its next
// commit. A pause between Alive and the act itself stays possible.
func (o *Owner) Alive(ctx context.Context) error {
	o.live.mu.Lock()
	known := time.Now().Before(o.live.until)
	o.live.mu.Unlock()
	if known {
		return nil
	}
	select {
	case <-o.session.Done():
		return fmt.Errorf("%w (node %s)", ErrLeaseEnded, o.node)
	default:
	}
	asked := time.Now()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	resp, err := o.session.Client().TimeToLive(ctx, o.session.Lease())
	if err != nil {
		return fmt.Errorf("etcdstore: owner %s: checking its lease: %w", o.node, err)
	}
	if resp.TTL <= 0 {
		return fmt.Errorf("%w (node %s)", ErrLeaseEnded, o.node)
	}
	o.live.mu.Lock()
	if u := asked.Add(time.Duration(resp.TTL) * time.Second / 2); u.After(o.live.until) {
		o.live.until = u
	}
	o.live.mu.Unlock()
	return nil
}
