package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
)

// Key spaces beside the store's records ('r', 'd', 'e') and ownership keys
// ('o') under one Prefix: lease-bound announcements (membership), settings
// written once, and the stamp of a Stamped store's last commit.
const (
	announceSpace = "m"
	settingSpace  = "x"
	// StampKey is the key (under a Stamped store's Prefix) that every commit
	// of a Stamped store overwrites with "<node> <claim revision>", so the
	// key's history is a log of which holding made each commit.
	StampKey = "w"
)

// In returns a view of o that claims names under s's Prefix instead of its
// own, so that s.Fenced compares them. The view shares o's session: its
// claims end with o's lease, and Close on either revokes that lease.
func (o *Owner) In(s *Store) *Owner {
	v := *o
	v.kv = namespace.NewKV(s.client.KV, s.prefix)
	v.watcher = namespace.NewWatcher(s.client.Watcher, s.prefix)
	return &v
}

// ClaimKey is the etcd key (with its Prefix) of name claimed under prefix:
// its CreateRevision is the Revision of the holding Claim.
func ClaimKey(prefix, name string) string { return prefix + ownerKey(name) }

// Holder is the holder of one claim name as read from etcd.
type Holder struct {
	// Node is the holder's node id; "" when nobody holds the name.
	Node string
	// Revision is the holding's Claim.Revision; 0 when free.
	Revision int64
}

// Holders reads who holds name under each store's Prefix: one request for
// up to MaxTxnOps stores. Every store must use the same client.
func Holders(ctx context.Context, stores []*Store, name string) ([]Holder, error) {
	out := make([]Holder, 0, len(stores))
	if len(stores) == 0 {
		return out, nil
	}
	c := stores[0].client
	for start := 0; start < len(stores); start += stores[0].maxOps {
		end := min(len(stores), start+stores[0].maxOps)
		gets := make([]clientv3.Op, 0, end-start)
		for _, s := range stores[start:end] {
			if s.client != c {
				return nil, errors.New("etcdstore: holders: stores on different clients")
			}
			gets = append(gets, clientv3.OpGet(ClaimKey(s.prefix, name)))
		}
		cctx, cancel := context.WithTimeout(ctx, stores[0].timeout)
		resp, err := c.KV.Txn(cctx).Then(gets...).Commit()
		cancel()
		if err != nil {
			return nil, fmt.Errorf("etcdstore: holders of %q: %w", name, err)
		}
		for _, r := range resp.Responses {
			h := Holder{}
			if kvs := r.GetResponseRange().GetKvs(); len(kvs) > 0 {
				h = Holder{Node: string(kvs[0].Value), Revision: kvs[0].CreateRevision}
			}
			out = append(out, h)
		}
	}
	return out, nil
}

// Announcement is a key and value put by Owner.Announce.
type Announcement struct {
	Key, Value string
}

// Announce puts key = value under o's Prefix, bound to o's lease: it
// vanishes when the lease ends (membership of a live node). Announcing a key
// again replaces its value.
func (o *Owner) Announce(ctx context.Context, key, value string) error {
	if key == "" {
		return errors.New("etcdstore: announce: empty key")
	}
	if _, err := o.kv.Put(ctx, announceSpace+key, value, clientv3.WithLease(o.session.Lease())); err != nil {
		return fmt.Errorf("etcdstore: announce %q: %w", key, err)
	}
	return nil
}

// Announced lists the live announcements under s's Prefix, sorted by key.
func (s *Store) Announced(ctx context.Context) ([]Announcement, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	resp, err := s.kv.Get(ctx, announceSpace, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("etcdstore: announced: %w", err)
	}
	out := make([]Announcement, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		out = append(out, Announcement{Key: strings.TrimPrefix(string(kv.Key), announceSpace), Value: string(kv.Value)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Setting stores value under key (beside the store's records) unless a
// value is there already, and returns the value stored: the first writer's,
// so every node of a deployment reads the same one.
func (s *Store) Setting(ctx context.Context, key string, value []byte) ([]byte, error) {
	if key == "" {
		return nil, errors.New("etcdstore: setting: empty key")
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	k := settingSpace + key
	resp, err := s.kv.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
		Then(clientv3.OpPut(k, string(value))).
		Else(clientv3.OpGet(k)).
		Commit()
	if err != nil {
		return nil, fmt.Errorf("etcdstore: setting %q: %w", key, err)
	}
	if resp.Succeeded {
		return value, nil
	}
	kvs := resp.Responses[0].GetResponseRange().GetKvs()
	if len(kvs) == 0 {
		return nil, fmt.Errorf("etcdstore: setting %q vanished inside a transaction", key)
	}
	return kvs[0].Value, nil
}

// Stamped is Fenced whose every commit also puts StampKey =
// "<node> <claim revision>" in the same transaction: the key's revision
// history then records which holding made each commit (an audit log; one
// more operation per transaction).
func (s *Store) Stamped(c Claim) *Store {
	v := s.Fenced(c)
	v.fence.stamp = fmt.Sprintf("%s %d", c.Node, c.Revision)
	return v
}
