// Package memstore is an in-memory store.Store: the same ordered key layout
// and batch semantics as store/pebblestore, without durability, for tests and
// the conformance runner. It can inject Apply failures.
package memstore

import (
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/internal/kvplan"
)

// Options configure a Store.
type Options struct {
	// Limits bound batches and keys; zero fields take their defaults.
	Limits store.Limits
}

// Store is an in-memory store.Store, safe for concurrent use. Apply holds
// one mutex, so concurrent batches are serialised (there is no sync to share).
type Store struct {
	lim store.Limits

	mu     sync.Mutex
	closed bool
	// keys: the encoded keys present, sorted, without repeats; vals holds a
	// private copy of the value of each.
	keys []string
	vals map[string][]byte
	// fail: armed Apply failures, see FailApply.
	failIn  int // the failIn-th Apply from now fails; 0: none armed
	failErr error
}

var _ store.Store = (*Store)(nil)

// New returns an empty Store.
func New(opts Options) *Store {
	return &Store{lim: opts.Limits, vals: make(map[string][]byte)}
}

// FailApply arms a failure: the n-th Apply from now (n >= 1) returns err and
// applies nothing. n <= 0 disarms it.
func (s *Store) FailApply(n int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= 0 {
		s.failIn, s.failErr = 0, nil
		return
	}
	s.failIn, s.failErr = n, err
}

// Clone returns a new open Store holding a copy of s's records, even when s
// is closed: a restart for tests. Armed failures are not copied.
func (s *Store) Clone() *Store {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &Store{lim: s.lim, keys: slices.Clone(s.keys), vals: make(map[string][]byte, len(s.vals))}
	for k, v := range s.vals {
		c.vals[k] = v // values are never modified in place
	}
	return c
}

// Len returns the number of engine keys held (records and index entries).
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys)
}

// Apply implements store.Store.
func (s *Store) Apply(batch []group.Mutation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ErrClosed
	}
	if s.failIn > 0 {
		s.failIn--
		if s.failIn == 0 {
			err := s.failErr
			s.failErr = nil
			return err
		}
	}
	var ops opList
	read := func(k []byte) ([]byte, bool, error) {
		v, ok := s.vals[string(k)]
		return v, ok, nil
	}
	if err := kvplan.Translate(batch, s.lim, read, &ops); err != nil {
		return err
	}
	for _, o := range ops {
		switch {
		case o.hi != "":
			s.deleteRange(o.key, o.hi)
		case o.del:
			s.delete(o.key)
		default:
			s.set(o.key, o.val)
		}
	}
	return nil
}

// op is one engine operation: a set, a delete (del) or a range deletion
// [key, hi) when hi is not empty.
type op struct {
	key, hi string
	val     []byte
	del     bool
}

type opList []op

func (l *opList) Set(k, v []byte) error {
	*l = append(*l, op{key: string(k), val: slices.Clone(v)})
	return nil
}

func (l *opList) Delete(k []byte) error {
	*l = append(*l, op{key: string(k), del: true})
	return nil
}

func (l *opList) DeleteRange(lo, hi []byte) error {
	*l = append(*l, op{key: string(lo), hi: string(hi)})
	return nil
}

func (s *Store) search(k string) (int, bool) { return slices.BinarySearch(s.keys, k) }

func (s *Store) set(k string, v []byte) {
	if v == nil {
		v = []byte{}
	}
	if _, ok := s.vals[k]; !ok {
		i, _ := s.search(k)
		s.keys = slices.Insert(s.keys, i, k)
	}
	s.vals[k] = v
}

func (s *Store) delete(k string) {
	if _, ok := s.vals[k]; !ok {
		return
	}
	i, _ := s.search(k)
	s.keys = slices.Delete(s.keys, i, i+1)
	delete(s.vals, k)
}

func (s *Store) deleteRange(lo, hi string) {
	i, _ := s.search(lo)
	j, _ := s.search(hi)
	for _, k := range s.keys[i:j] {
		delete(s.vals, k)
	}
	s.keys = slices.Delete(s.keys, i, j)
}

// between returns the sorted keys in [lo, hi).
func (s *Store) between(lo, hi []byte) []string {
	i, _ := s.search(string(lo))
	j, _ := s.search(string(hi))
	return s.keys[i:j]
}

// Get implements store.Store.
func (s *Store) Get(k group.Key) ([]byte, bool, error) {
	if err := s.lim.CheckKey(k); err != nil {
		return nil, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false, store.ErrClosed
	}
	v, ok := s.vals[string(kvplan.EncodeKey(k))]
	if !ok {
		return nil, false, nil
	}
	return slices.Clone(v), true, nil
}

// Scan implements store.Store. The records are copied out under the lock
// when iteration starts.
func (s *Store) Scan(p store.Prefix) iter.Seq2[store.Record, error] {
	return kvplan.ScanPrefix(p, s.lim, func(lo, hi []byte, yield func(store.Record, error) bool) {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			yield(store.Record{}, store.ErrClosed)
			return
		}
		keys := s.between(lo, hi)
		recs := make([]store.Record, 0, len(keys))
		for _, k := range keys {
			key, err := kvplan.DecodeKey([]byte(k))
			if err != nil {
				s.mu.Unlock()
				yield(store.Record{}, err)
				return
			}
			recs = append(recs, store.Record{Key: key, Value: slices.Clone(s.vals[k])})
		}
		s.mu.Unlock()
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	})
}

// Generations implements store.Store, skipping from one generation to the
// next by binary search.
func (s *Store) Generations(role group.Role) iter.Seq2[group.ID, error] {
	return kvplan.ScanPrefix(store.RolePrefix(role), s.lim, func(lo, hi []byte, yield func(group.ID, error) bool) {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			yield(group.ID{}, store.ErrClosed)
			return
		}
		var ids []group.ID
		for keys := s.between(lo, hi); len(keys) > 0; {
			k, err := kvplan.DecodeKey([]byte(keys[0]))
			if err != nil {
				s.mu.Unlock()
				yield(group.ID{}, err)
				return
			}
			id := group.ID{GroupID: k.GroupID, Generation: k.Generation}
			// KindMeta is the smallest kind (CheckKey refuses 0), so a
			// generation's meta record is its first key.
			if k.Kind == group.KindMeta {
				ids = append(ids, id)
			}
			next := kvplan.PrefixEnd(kvplan.AppendGenerationPrefix(nil, role, id))
			i, _ := slices.BinarySearch(keys, string(next))
			keys = keys[i:]
		}
		s.mu.Unlock()
		for _, id := range ids {
			if !yield(id, nil) {
				return
			}
		}
	})
}

// DueBefore implements store.Store.
func (s *Store) DueBefore(upTo time.Time) iter.Seq2[store.Deadline, error] {
	return func(yield func(store.Deadline, error) bool) {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			yield(store.Deadline{}, store.ErrClosed)
			return
		}
		lo, hi, ok := kvplan.DeadlineBounds(upTo)
		if !ok {
			s.mu.Unlock()
			return
		}
		keys := slices.Clone(s.between(lo, hi))
		s.mu.Unlock()
		for _, k := range keys {
			d, err := kvplan.DecodeDeadlineKey([]byte(k))
			if !yield(d, err) || err != nil {
				return
			}
		}
	}
}

// NextDeadline implements store.Store.
func (s *Store) NextDeadline() (time.Time, bool, error) { return kvplan.NextDeadline(s.DueBefore) }

// Limits returns the limits Apply enforces (store.LimitsOf).
func (s *Store) Limits() store.Limits { return s.lim }

// Close implements store.Store.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ErrClosed
	}
	s.closed = true
	return nil
}
