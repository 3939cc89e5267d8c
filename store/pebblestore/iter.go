package pebblestore

import (
	"iter"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/internal/kvplan"
)

// iterate runs body over a bounded pebble iterator, admitted like a call,
// and yields body's error (or a fatal storage error) once at the end. The
// iterator is always closed.
//
// body calls yield through the wrapper it is given, which marks the caller's
// code: a panic there is the caller's and is raised again, while a panic in
// pebble's code stops the store (guard).
func iterate[T any](s *Store, lo, hi []byte, yield func(T, error) bool, body func(it *pebble.Iterator, yield func(T, error) bool) (bool, error)) {
	var zero T
	if err := s.enter(); err != nil {
		yield(zero, err)
		return
	}
	defer s.exit()
	inCaller := false
	callerYield := func(v T, err error) bool {
		inCaller = true
		more := yield(v, err)
		inCaller = false
		return more
	}
	err := func() (err error) {
		defer func() {
			r := recover()
			if r != nil && inCaller {
				panic(r)
			}
			if e := recoverFatal(r, s.fatal); e != nil {
				err = e
			}
		}()
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			return err
		}
		more := false
		defer func() {
			// Close even when yield panics; its error counts only when
			// the iteration ran to its end.
			if cerr := it.Close(); err == nil && more {
				err = cerr
			}
		}()
		more, err = body(it, callerYield)
		return err
	}()
	if err != nil {
		yield(zero, err)
	}
}

// forward runs f at every key of it from the first, moving on with step,
// until f returns false or an error, or the store closes. ran reports
// whether the iteration reached its end (iterate's body contract).
func (s *Store) forward(it *pebble.Iterator, step func() bool, f func() (more bool, err error)) (ran bool, err error) {
	for valid := it.First(); valid; valid = step() {
		if s.gate.Closing() {
			return true, store.ErrClosed
		}
		more, err := f()
		if err != nil {
			return true, err
		}
		if !more {
			return false, nil
		}
	}
	return true, it.Error()
}

// Scan implements store.Store.
func (s *Store) Scan(p store.Prefix) iter.Seq2[store.Record, error] {
	return kvplan.ScanPrefix(p, s.lim, func(lo, hi []byte, yield func(store.Record, error) bool) {
		iterate(s, lo, hi, yield, func(it *pebble.Iterator, yield func(store.Record, error) bool) (bool, error) {
			return s.forward(it, it.Next, func() (bool, error) {
				k, err := kvplan.DecodeKey(it.Key())
				if err != nil {
					return false, err
				}
				v, err := it.ValueAndErr()
				if err != nil {
					return false, err
				}
				return yield(store.Record{Key: k, Value: append([]byte{}, v...)}, nil), nil
			})
		})
	})
}

// Generations implements store.Store. It visits one key per generation,
// seeking past the rest: KindMeta is the smallest kind (zero is refused), so
// a generation's meta record is its first key.
func (s *Store) Generations(role group.Role) iter.Seq2[group.ID, error] {
	return kvplan.ScanPrefix(store.RolePrefix(role), s.lim, func(lo, hi []byte, yield func(group.ID, error) bool) {
		iterate(s, lo, hi, yield, func(it *pebble.Iterator, yield func(group.ID, error) bool) (bool, error) {
			var next []byte
			return s.forward(it, func() bool { return it.SeekGE(next) }, func() (bool, error) {
				k, err := kvplan.DecodeKey(it.Key())
				if err != nil {
					return false, err
				}
				id := group.ID{GroupID: k.GroupID, Generation: k.Generation}
				if k.Kind == group.KindMeta && !yield(id, nil) {
					return false, nil
				}
				next = kvplan.PrefixEnd(kvplan.AppendGenerationPrefix(next[:0], role, id))
				return true, nil
			})
		})
	})
}

// DueBefore implements store.Store.
func (s *Store) DueBefore(upTo time.Time) iter.Seq2[store.Deadline, error] {
	return func(yield func(store.Deadline, error) bool) {
		lo, hi, ok := kvplan.DeadlineBounds(upTo)
		if !ok {
			if err := s.enter(); err != nil {
				yield(store.Deadline{}, err)
				return
			}
			s.exit()
			return
		}
		iterate(s, lo, hi, yield, func(it *pebble.Iterator, yield func(store.Deadline, error) bool) (bool, error) {
			return s.forward(it, it.Next, func() (bool, error) {
				d, err := kvplan.DecodeDeadlineKey(it.Key())
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
