package etcdstore

import (
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/internal/kvplan"
)

// maxConflictRetries bounds how often Apply re-reads deadline entries that
// another writer changed between its read and its commit.
const maxConflictRetries = 8

// Per-operation and per-request overheads added to the key and value bytes
// when estimating a request's size; generous, so that an estimate within
// MaxRequestBytes is within etcd's limit.
const (
	opOverheadBytes  = 32
	txnOverheadBytes = 256
)

// Apply implements store.Store: one etcd transaction. It compares the
// deadline entries the batch read (their ModRevision) and, on a fenced
// store, the ownership claim, in the same transaction.
func (s *Store) Apply(batch []group.Mutation) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.exit()
	if len(batch) == 0 {
		return nil
	}
	if err := s.lim.CheckBatch(batch); err != nil {
		return err
	}
	keys := kvplan.LockKeys(batch)
	if need := len(keys) + s.fenceCmps(); need > s.maxOps { // one comparison per deadline read, plus the fence
		return fmt.Errorf("%w: batch of %d mutations needs %d comparisons, over MaxTxnOps %d (etcd --max-txn-ops); raise both together",
			store.ErrInvalid, len(batch), need, s.maxOps)
	}
	s.locks.Lock(keys)
	defer s.locks.Unlock(keys)
	for range maxConflictRetries {
		done, err := s.applyOnce(batch, keys)
		if done || err != nil {
			return err
		}
	}
	return fmt.Errorf("etcdstore: apply: deadline entries kept changing under %d attempts; another writer shares this prefix without fencing", maxConflictRetries)
}

// applyOnce reads the deadline entries, plans and commits the batch. done is
// false when a read entry changed before the commit (nothing applied).
func (s *Store) applyOnce(batch []group.Mutation, revKeys []string) (done bool, err error) {
	read, err := s.readEntries(revKeys)
	if err != nil {
		return true, err
	}
	var p plan
	reader := func(key []byte) ([]byte, bool, error) {
		e, ok := read[string(key)]
		if !ok {
			return nil, false, fmt.Errorf("etcdstore: internal: read of unlocked key %x", key)
		}
		return e.value, e.present, nil
	}
	if err := kvplan.Translate(batch, s.lim, reader, &p); err != nil {
		return true, err
	}
	ops := p.ops()
	if s.fence != nil && s.fence.stamp != "" {
		ops = append(ops, clientv3.OpPut(StampKey, s.fence.stamp))
	}
	cmps := make([]clientv3.Cmp, 0, len(revKeys)+1)
	size := txnOverheadBytes
	for _, k := range revKeys {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", read[k].modRev))
		size += len(s.prefix) + len(k) + opOverheadBytes
	}
	if s.fence != nil {
		cmps = append(cmps, s.fence.cmp())
		size += len(s.prefix) + len(s.fence.key) + opOverheadBytes
	}
	for _, op := range ops {
		size += len(s.prefix)*2 + len(op.KeyBytes()) + len(op.RangeBytes()) + len(op.ValueBytes()) + opOverheadBytes
	}
	if len(ops) > s.maxOps || len(cmps) > s.maxOps {
		return true, fmt.Errorf("%w: batch of %d mutations needs %d etcd operations and %d comparisons, over MaxTxnOps %d (etcd --max-txn-ops); raise both together",
			store.ErrInvalid, len(batch), len(ops), len(cmps), s.maxOps)
	}
	if size > s.maxBytes {
		return true, fmt.Errorf("%w: batch of %d mutations needs about %d request bytes, over MaxRequestBytes %d (etcd --max-request-bytes); raise both together",
			store.ErrInvalid, len(batch), size, s.maxBytes)
	}
	ctx, cancel := s.ctx()
	defer cancel()
	txn := s.kv.Txn(ctx).If(cmps...).Then(ops...)
	if s.fence != nil {
		txn = txn.Else(clientv3.OpGet(s.fence.key))
	}
	resp, err := txn.Commit()
	if err != nil {
		return true, s.commitErr(err)
	}
	if resp.Succeeded {
		return true, nil
	}
	if s.fence != nil {
		if err := s.fence.check(resp); err != nil {
			return true, err
		}
	}
	return false, nil
}

// entry is an etcd key as read: its value, and its ModRevision (0 when
// absent), which the transaction compares.
type entry struct {
	value   []byte
	present bool
	modRev  int64
}

// readEntries reads keys in one request.
func (s *Store) readEntries(keys []string) (map[string]entry, error) {
	out := make(map[string]entry, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	gets := make([]clientv3.Op, len(keys))
	for i, k := range keys {
		gets[i] = clientv3.OpGet(k)
	}
	ctx, cancel := s.ctx()
	defer cancel()
	resp, err := s.kv.Txn(ctx).Then(gets...).Commit()
	if err != nil {
		if refusedBeforeProposal(err) {
			return nil, fmt.Errorf("%w: etcd refused reading %d deadline entries: %w", store.ErrInvalid, len(keys), err)
		}
		return nil, fmt.Errorf("etcdstore: read deadline entries: %w", err)
	}
	for i, k := range keys {
		e := entry{}
		if kvs := resp.Responses[i].GetResponseRange().GetKvs(); len(kvs) > 0 {
			e = entry{value: kvs[0].Value, present: true, modRev: kvs[0].ModRevision}
		}
		out[k] = e
	}
	return out, nil
}

// commitErr classifies a failed commit: a refusal etcd makes before
// proposing is definite (nothing applied, the store stays usable); any
// other failure leaves the outcome unknown and stops the store.
func (s *Store) commitErr(err error) error {
	if refusedBeforeProposal(err) {
		return fmt.Errorf("%w: etcd refused the transaction: %w", store.ErrInvalid, err)
	}
	if errors.Is(err, rpctypes.ErrNoSpace) {
		return fmt.Errorf("etcdstore: etcd refused the transaction (raise --quota-backend-bytes or compact): %w", err)
	}
	return s.fail(err)
}

// refusedBeforeProposal reports whether etcd refused a request while
// validating it, before raft saw it.
func refusedBeforeProposal(err error) bool {
	for _, definite := range []error{rpctypes.ErrTooManyOps, rpctypes.ErrRequestTooLarge, rpctypes.ErrDuplicateKey, rpctypes.ErrEmptyKey} {
		if errors.Is(err, definite) {
			return true
		}
	}
	return false
}

// fenceCmps is the number of comparisons the fence adds to a transaction.
func (s *Store) fenceCmps() int {
	if s.fence != nil {
		return 1
	}
	return 0
}
