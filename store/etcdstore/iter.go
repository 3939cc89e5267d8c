package etcdstore

import (
	"fmt"
	"iter"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/internal/kvplan"
)

// iterate admits an iteration like a call and yields run's error once at
// the end.
func iterate[T any](s *Store, yield func(T, error) bool, run func() error) {
	var zero T
	if err := s.enter(); err != nil {
		yield(zero, err)
		return
	}
	defer s.exit()
	if err := run(); err != nil {
		yield(zero, err)
	}
}

// walk reads [lo, hi) page by page (Options.PageSize keys a Get), every
// page at the revision of the first, so an iteration sees one snapshot.
// body gets each page and returns where the next page starts; more false
// ends the walk.
func (s *Store) walk(lo, hi string, keysOnly bool, body func(kvs []*mvccpb.KeyValue) (next string, more bool, err error)) error {
	var rev int64
	for lo < hi {
		if s.shared.gate.Closing() {
			return store.ErrClosed
		}
		opts := []clientv3.OpOption{clientv3.WithRange(hi), clientv3.WithLimit(int64(s.page))}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		if keysOnly {
			opts = append(opts, clientv3.WithKeysOnly())
		}
		ctx, cancel := s.ctx()
		resp, err := s.kv.Get(ctx, lo, opts...)
		cancel()
		if err != nil {
			return fmt.Errorf("etcdstore: range read: %w", err)
		}
		rev = resp.Header.Revision
		if len(resp.Kvs) == 0 {
			return nil
		}
		next, more, err := body(resp.Kvs)
		if err != nil || !more || !resp.More {
			return err
		}
		lo = next
	}
	return nil
}

// eachKV walks [lo, hi) key by key: f gets each key (with its value unless
// keysOnly) until it returns false or an error, or the store closes.
func (s *Store) eachKV(lo, hi string, keysOnly bool, f func(kv *mvccpb.KeyValue) (more bool, err error)) error {
	return s.walk(lo, hi, keysOnly, func(kvs []*mvccpb.KeyValue) (string, bool, error) {
		for _, kv := range kvs {
			if s.shared.gate.Closing() {
				return "", false, store.ErrClosed
			}
			if more, err := f(kv); err != nil || !more {
				return "", false, err
			}
		}
		return afterKey(kvs), true, nil
	})
}

// Scan implements store.Store.
func (s *Store) Scan(p store.Prefix) iter.Seq2[store.Record, error] {
	return kvplan.ScanPrefix(p, s.lim, func(lo, hi []byte, yield func(store.Record, error) bool) {
		iterate(s, yield, func() error {
			return s.eachKV(string(lo), string(hi), false, func(kv *mvccpb.KeyValue) (bool, error) {
				k, err := kvplan.DecodeKey(kv.Key)
				if err != nil {
					return false, err
				}
				return yield(store.Record{Key: k, Value: kv.Value}, nil), nil
			})
		})
	})
}

// Generations implements store.Store. A page holds keys only; after it the
// walk resumes past the last generation seen. KindMeta is the smallest kind
// (zero is refused), so a generation's meta record is its first key.
func (s *Store) Generations(role group.Role) iter.Seq2[group.ID, error] {
	return kvplan.ScanPrefix(store.RolePrefix(role), s.lim, func(lo, hi []byte, yield func(group.ID, error) bool) {
		iterate(s, yield, func() error {
			return s.walk(string(lo), string(hi), true, func(kvs []*mvccpb.KeyValue) (string, bool, error) {
				var last group.ID
				for i, kv := range kvs {
					if s.shared.gate.Closing() {
						return "", false, store.ErrClosed
					}
					k, err := kvplan.DecodeKey(kv.Key)
					if err != nil {
						return "", false, err
					}
					id := group.ID{GroupID: k.GroupID, Generation: k.Generation}
					if i > 0 && id == last {
						continue
					}
					last = id
					if k.Kind == group.KindMeta && !yield(id, nil) {
						return "", false, nil
					}
				}
				if len(kvs) == 0 {
					return "", false, nil
				}
				return string(kvplan.PrefixEnd(kvplan.AppendGenerationPrefix(nil, role, last))), true, nil
			})
		})
	})
}

// DueBefore implements store.Store.
func (s *Store) DueBefore(upTo time.Time) iter.Seq2[store.Deadline, error] {
	return func(yield func(store.Deadline, error) bool) {
		lo, hi, ok := kvplan.DeadlineBounds(upTo)
		iterate(s, yield, func() error {
			if !ok {
				return nil
			}
			return s.eachKV(string(lo), string(hi), true, func(kv *mvccpb.KeyValue) (bool, error) {
				d, err := kvplan.DecodeDeadlineKey(kv.Key)
				if err != nil {
					return false, err
				}
				return yield(d, nil), nil
			})
		})
	}
}

// NextDeadline implements store.Store.
func (s *Store) NextDeadline() (time.Time, bool, error) { return kvplan.NextDeadline(s.DueBefore) }

// afterKey returns the smallest key after the last of kvs ("" for none).
func afterKey(kvs []*mvccpb.KeyValue) string {
	if len(kvs) == 0 {
		return ""
	}
	return string(kvs[len(kvs)-1].Key) + "\x00"
}
