package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.etcd.io/etcd/client/v3/namespace"
)

var (
	// ErrFenced is wrapped by Apply's error on a fenced store whose claim
	// is no longer held (its lease expired, it was released, or another
	// node holds the name now); nothing of the batch was applied.
	ErrFenced = errors.New("etcdstore: fenced: ownership claim no longer held")
	// ErrOwned is wrapped by TryAcquire's error when another lease holds
	// the name.
	ErrOwned = errors.New("etcdstore: owned by another node")
)

// ownerSpace is the first byte of ownership keys, apart from the store's
// record ('r') and deadline ('d', 'e') keys under the same Prefix.
const ownerSpace = "o"

// Owner claims names (a group, or a shard of groups) for one node with an
// etcd lease kept alive by a concurrency.Session: when the node dies or
// loses the cluster for the lease's TTL, its claims vanish and another
// node may acquire them. Safe for concurrent use.
type Owner struct {
	session *concurrency.Session
	kv      clientv3.KV
	watcher clientv3.Watcher
	node    string
	timeout time.Duration // one etcd request (the store's)
	live    *liveness
}

// Claim is a name held by an Owner. Revision (the ownership key's
// CreateRevision) identifies this holding: a later holder of the same name
// has a greater one, so a fenced store compares it.
type Claim struct {
	// Name is what is owned.
	Name string
	// Node is the holder's node id.
	Node string
	// Revision is the ownership key's CreateRevision.
	Revision int64
	// Lease is the holder's lease.
	Lease clientv3.LeaseID
}

// NewOwner starts a session for node on s's client, with a lease of ttl
// (rounded up to whole seconds, at least 1s), under s's Prefix.
func NewOwner(s *Store, node string, ttl time.Duration) (*Owner, error) {
	if node == "" {
		return nil, errors.New("etcdstore: owner: empty node id")
	}
	secs := int(math.Ceil(ttl.Seconds()))
	if secs < 1 {
		secs = 1
	}
	// Grant the lease within the store's request timeout: a session left to
	// grant it itself would wait forever on an unreachable cluster.
	ctx, cancel := s.ctx()
	grant, err := s.client.Grant(ctx, int64(secs))
	cancel()
	if err != nil {
		return nil, fmt.Errorf("etcdstore: owner %s: lease: %w", node, err)
	}
	sess, err := concurrency.NewSession(s.client, concurrency.WithTTL(secs), concurrency.WithLease(grant.ID))
	if err != nil {
		return nil, fmt.Errorf("etcdstore: owner %s: session: %w", node, err)
	}
	return &Owner{
		session: sess,
		kv:      namespace.NewKV(s.client.KV, s.prefix),
		watcher: namespace.NewWatcher(s.client.Watcher, s.prefix),
		node:    node,
		timeout: s.timeout,
		live:    &liveness{},
	}, nil
}

// Node returns the owner's node id.
func (o *Owner) Node() string { return o.node }

// Lease returns the owner's lease.
func (o *Owner) Lease() clientv3.LeaseID { return o.session.Lease() }

// Done is closed when the owner's lease is gone (expired or revoked): every
// claim is lost and the node must stop processing their groups.
func (o *Owner) Done() <-chan struct{} { return o.session.Done() }

// Close revokes the lease, releasing every claim at once.
func (o *Owner) Close() error { return o.session.Close() }

func ownerKey(name string) string { return ownerSpace + name }

// TryAcquire claims name unless another lease holds it (an error wrapping
// ErrOwned that names the holder). Claiming a name the owner holds returns
// the existing claim.
func (o *Owner) TryAcquire(ctx context.Context, name string) (Claim, error) {
	c, _, err := o.try(ctx, name)
	return c, err
}

// try is TryAcquire that also returns the revision at which a refusal was
// read.
func (o *Owner) try(ctx context.Context, name string) (Claim, int64, error) {
	k := ownerKey(name)
	lease := o.session.Lease()
	resp, err := o.kv.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
		Then(clientv3.OpPut(k, o.node, clientv3.WithLease(lease))).
		Else(clientv3.OpGet(k)).
		Commit()
	if err != nil {
		return Claim{}, 0, fmt.Errorf("etcdstore: acquire %q: %w", name, err)
	}
	if resp.Succeeded {
		return Claim{Name: name, Node: o.node, Revision: resp.Header.Revision, Lease: lease}, 0, nil
	}
	kvs := resp.Responses[0].GetResponseRange().GetKvs()
	if len(kvs) == 0 { // released between the compare and the get: cannot happen in one txn
		return Claim{}, 0, fmt.Errorf("etcdstore: acquire %q: ownership key vanished inside a transaction", name)
	}
	if clientv3.LeaseID(kvs[0].Lease) == lease {
		return Claim{Name: name, Node: o.node, Revision: kvs[0].CreateRevision, Lease: lease}, 0, nil
	}
	return Claim{}, resp.Header.Revision, fmt.Errorf("%w: %q is held by node %q (lease %x) since revision %d",
		ErrOwned, name, kvs[0].Value, kvs[0].Lease, kvs[0].CreateRevision)
}

// Acquire claims name, waiting while another lease holds it (until that
// holder releases it or its lease expires) or until ctx is done.
func (o *Owner) Acquire(ctx context.Context, name string) (Claim, error) {
	for {
		c, rev, err := o.try(ctx, name)
		if !errors.Is(err, ErrOwned) {
			return c, err
		}
		if err := o.waitDeleted(ctx, ownerKey(name), rev+1); err != nil {
			return Claim{}, fmt.Errorf("etcdstore: acquire %q: %w", name, err)
		}
	}
}

// waitDeleted waits for a deletion of key at or after revision rev.
func (o *Owner) waitDeleted(ctx context.Context, key string, rev int64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for wr := range o.watcher.Watch(ctx, key, clientv3.WithRev(rev), clientv3.WithFilterPut()) {
		if err := wr.Err(); err != nil {
			return err
		}
		if len(wr.Events) > 0 {
			return nil
		}
	}
	return ctx.Err()
}

// Release gives up c if it is still held by this owner's lease; releasing
// a lost claim is harmless.
func (o *Owner) Release(ctx context.Context, c Claim) error {
	k := ownerKey(c.Name)
	_, err := o.kv.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(k), "=", c.Revision)).
		Then(clientv3.OpDelete(k)).
		Commit()
	if err != nil {
		return fmt.Errorf("etcdstore: release %q: %w", c.Name, err)
	}
	return nil
}

// Fenced returns a view of s whose Apply commits only while c is held: each
// transaction compares the ownership key's CreateRevision with c.Revision,
// so a stale owner's write (its lease expired and another node took the
// name) fails with an error wrapping ErrFenced, with nothing applied. The
// view shares s's connection, locks and lifecycle: closing either closes
// both.
func (s *Store) Fenced(c Claim) *Store {
	v := *s
	v.fence = &fence{claim: c, key: ownerKey(c.Name)}
	return &v
}

// fence is a claim as a fenced store compares it.
type fence struct {
	claim Claim
	key   string
	stamp string // Stamped: the value put at StampKey by every commit
}

func (f *fence) cmp() clientv3.Cmp {
	return clientv3.Compare(clientv3.CreateRevision(f.key), "=", f.claim.Revision)
}

// check explains a failed fenced transaction, whose Else branch read the
// ownership key: an error wrapping ErrFenced when the claim is not held,
// nil when it is (another comparison failed).
func (f *fence) check(resp *clientv3.TxnResponse) error {
	kvs := resp.Responses[0].GetResponseRange().GetKvs()
	switch {
	case len(kvs) == 0:
		return fmt.Errorf("%w: %q (revision %d) is not held by anyone: its lease expired or it was released", ErrFenced, f.claim.Name, f.claim.Revision)
	case kvs[0].CreateRevision != f.claim.Revision:
		return fmt.Errorf("%w: %q (revision %d) is now held by node %q since revision %d", ErrFenced, f.claim.Name, f.claim.Revision, kvs[0].Value, kvs[0].CreateRevision)
	}
	return nil
}
