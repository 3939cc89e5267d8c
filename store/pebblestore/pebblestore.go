// Package pebblestore is the durable store.Store, on cockroachdb/pebble v2:
// one synced pebble batch per Apply, so concurrent Apply calls share WAL
// syncs (group commit), and the key layout of package store. It is the only
// wsrkit package that imports pebble.
//
// Pebble treats some I/O errors as fatal and reports them through
// Logger.Fatalf instead of returning them. This package installs a logger
// whose Fatalf records the error and panics, and pebble panics by itself on some
// fsync errors; every call of the store recovers such a panic and returns
// an error wrapping store.ErrFailed, and
// every later call returns it too: the store stops, with nothing half
// applied, and must be reopened (recovery replays the synced WAL). A Fatalf
// raised on one of pebble's background goroutines (flush, compaction)
// cannot be recovered there and ends the process; that is the right end for
// a store that can no longer promise durability (restart and recover).
package pebblestore

import (
	"errors"
	"fmt"
	"log"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/internal/callgate"
	"github.com/wsrkit/wsrkit/store/internal/kvplan"
)

// Options configure Open.
type Options struct {
	// Dir is the database directory; created when missing.
	Dir string
	// FS is the filesystem (vfs.NewMem, vfs.NewCrashableMem, errorfs in
	// tests); nil means the operating system's.
	FS vfs.FS
	// CacheSize is the block cache size in bytes; 0 means pebble's default
	// (8 MiB).
	CacheSize int64
	// MemTableSize is the memtable size in bytes; 0 means pebble's default
	// (4 MiB).
	MemTableSize uint64
	// Limits bound batches and keys; zero fields take their defaults.
	Limits store.Limits
	// DeadlineCacheEntries bounds the cache of generations' deadlines that
	// spares Apply a pebble read per deadline change (≈150 B per entry for
	// a urn:uuid groupId, see deadlineCache); 0 means
	// DefaultDeadlineCacheEntries, a negative value disables the cache.
	DeadlineCacheEntries int
	// Logger receives pebble's informational and error lines; nil drops the
	// informational ones and sends errors to the standard log package.
	Logger Logger
	// Tune, when set, may adjust pebble's options just before opening
	// (benchmarks, experiments). The store's Logger and FormatMajorVersion
	// settings are applied after it.
	Tune func(*pebble.Options)
}

// Logger receives pebble's non-fatal log lines.
type Logger interface {
	Infof(format string, args ...any)
	Errorf(format string, args ...any)
}

// Store is a store.Store on pebble, safe for concurrent use.
type Store struct {
	db    *pebble.DB
	fs    vfs.FS
	dir   string
	lim   store.Limits
	fatal *fatalState
	// locks serialise the batches that read and replace the same
	// generation's deadline; other batches commit concurrently.
	locks kvplan.KeyLocks
	// deadlines caches committed reverse deadline entries; nil: disabled.
	deadlines *deadlineCache
	// gate admits calls and iterations until Close, which waits for them.
	gate callgate.Gate
}

var _ store.Store = (*Store)(nil)

// Open opens (creating it when missing) the store in opts.Dir.
func Open(opts Options) (s *Store, err error) {
	fatal := newFatalState()
	po := &pebble.Options{
		FS:           opts.FS,
		CacheSize:    opts.CacheSize,
		MemTableSize: opts.MemTableSize,
		// L0 is compacted at 8 sublevels, not pebble's 4 (and writes
		// stop at 24, not 12, keeping the same headroom): most records
		// are deleted soon after they are written (a message's outbound,
		// delivery and outcome records), and a later compaction meets
		// more of them with their tombstones, so fewer are rewritten into
		// Lbase first (#22: compactions 8.1 % → 7.0 % of the CPU with
		// SubmitAsync at 64 groups, 4.3 % → 3.6 % streaming; BENCHMARKS.md).
		// Reads, rare here (a new generation's deadline, recovery), look
		// at more L0 files, behind bloom filters.
		L0CompactionThreshold: 8,
		L0StopWritesThreshold: 24,
	}
	// Bloom filters: every new generation's first OpSetDeadline reads its
	// absent reverse entry; a filter answers that without reading blocks.
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	if opts.Tune != nil {
		opts.Tune(po)
	}
	fl := &fatalLogger{Logger: opts.Logger, state: fatal}
	po.Logger = fl
	stop := pebble.EventListener{BackgroundError: fl.backgroundError}
	if po.EventListener != nil {
		stop = pebble.TeeEventListener(stop, *po.EventListener)
	}
	po.EventListener = &stop
	// FormatNewest on creation (peers.md D.2); an existing store keeps its
	// format, pebble upgrades one-way only.
	po.FormatMajorVersion = pebble.FormatNewest
	defer func() {
		if e := recoverFatal(recover(), fatal); e != nil {
			s, err = nil, e
		}
	}()
	db, err := pebble.Open(opts.Dir, po)
	if err != nil {
		return nil, fmt.Errorf("pebblestore: open %s: %w", opts.Dir, err)
	}
	s = &Store{db: db, fs: po.FS, dir: opts.Dir, lim: opts.Limits, fatal: fatal, deadlines: newDeadlineCache(opts.DeadlineCacheEntries)}
	if s.fs == nil {
		s.fs = vfs.Default
	}
	return s, nil
}

// DB returns the underlying pebble database, for metrics (Metrics) and
// tests. Writing to it directly bypasses the store's invariants.
func (s *Store) DB() *pebble.DB { return s.db }

// enter admits a call unless the store is closed or failed.
func (s *Store) enter() error { return s.gate.Enter(s.fatal.get()) }

func (s *Store) exit() { s.gate.Exit() }

// guard turns a panic inside pebble (a fatal error) into the call's error
// and stops the store; deferred by every call that enters pebble. Only
// pebble's code runs under it, so no caller panic is swallowed (iterations
// re-raise a panic of the caller's yield, see iterate).
func (s *Store) guard(err *error) {
	if e := recoverFatal(recover(), s.fatal); e != nil {
		*err = e
	}
}

// Apply implements store.Store: one pebble batch, committed with Sync.
// It returns as soon as the store failed, also while its commit is stuck
// inside pebble (fail.go).
func (s *Store) Apply(batch []group.Mutation) error {
	if err := s.enter(); err != nil {
		return err
	}
	if len(batch) == 0 {
		s.exit()
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- s.apply(batch) }()
	select {
	case err := <-done:
		return err
	case <-s.fatal.failed:
		return s.fatal.get()
	}
}

// apply is Apply's commit, inside the call Apply entered.
func (s *Store) apply(batch []group.Mutation) (err error) {
	defer s.exit()
	defer s.guard(&err)
	keys := kvplan.LockKeys(batch)
	s.locks.Lock(keys)
	defer s.locks.Unlock(keys)
	b := s.db.NewBatch()
	defer b.Close()
	finals, err := kvplan.TranslateFinal(batch, s.lim, s.readDeadline, batchWriter{b})
	if err != nil {
		return err
	}
	if err := s.commit(b, keys, finals); err != nil {
		// A commit that pebble could not write (a full disk, an I/O error)
		// leaves its WAL unusable: pebble panics past recovery on the next
		// WAL rotation. The store stops here (fail.go).
		return s.fatal.set(fmt.Errorf("%w: %w", store.ErrFailed, err))
	}
	return nil
}

// read returns a copy of the value under an engine key.
func (s *Store) read(key []byte) ([]byte, bool, error) {
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("pebblestore: get: %w", err)
	}
	out := append([]byte{}, v...)
	return out, true, closer.Close()
}

type batchWriter struct{ b *pebble.Batch }

func (w batchWriter) Set(k, v []byte) error           { return w.b.Set(k, v, nil) }
func (w batchWriter) Delete(k []byte) error           { return w.b.Delete(k, nil) }
func (w batchWriter) DeleteRange(lo, hi []byte) error { return w.b.DeleteRange(lo, hi, nil) }

// Get implements store.Store.
func (s *Store) Get(k group.Key) (v []byte, ok bool, err error) {
	if err := s.lim.CheckKey(k); err != nil {
		return nil, false, err
	}
	if err := s.enter(); err != nil {
		return nil, false, err
	}
	defer s.exit()
	defer s.guard(&err)
	return s.read(kvplan.EncodeKey(k))
}

// Limits returns the limits Apply enforces (store.LimitsOf).
func (s *Store) Limits() store.Limits { return s.lim }

// Close implements store.Store. It waits for calls and iterations in
// progress; an iteration sees the store closing at its next step and ends
// with store.ErrClosed.
func (s *Store) Close() (err error) {
	if !s.gate.Close() {
		return store.ErrClosed
	}
	if !s.waitIdle() || s.fatal.get() != nil {
		return s.closeFailed()
	}
	defer s.guard(&err)
	err = s.db.Close()
	if f := s.fatal.get(); f != nil {
		return errors.Join(f, err)
	}
	if err != nil {
		return fmt.Errorf("pebblestore: close: %w", err)
	}
	return nil
}

// fatalPanic is the panic value of fatalLogger.Fatalf.
type fatalPanic struct{ err error }

// fatalLogger forwards pebble's log lines and turns Fatalf into a recorded
// error and a panic that the store's calls recover.
type fatalLogger struct {
	Logger  Logger // nil: drop Infof, Errorf to the standard log
	state   *fatalState
	limit   lineLimit    // Errorf lines (fail.go)
	retries atomic.Int64 // background errors so far
}

func (l *fatalLogger) Infof(format string, args ...any) {
	if l.Logger != nil {
		l.Logger.Infof(format, args...)
	}
}

func (l *fatalLogger) Errorf(format string, args ...any) {
	ok, dropped := l.limit.allow()
	if !ok {
		return
	}
	if dropped > 0 {
		format += " (%d similar lines dropped)"
		args = append(args[:len(args):len(args)], dropped)
	}
	if l.Logger != nil {
		l.Logger.Errorf(format, args...)
		return
	}
	log.Printf("pebblestore: "+format, args...)
}

func (l *fatalLogger) Fatalf(format string, args ...any) {
	err := l.state.set(fmt.Errorf("%w: pebble: %s", store.ErrFailed, fmt.Sprintf(format, args...)))
	panic(fatalPanic{err})
}

// recoverFatal turns a recovered panic r into the store's fatal error: a
// fatalPanic's own error, or, for any other panic raised inside pebble (it
// panics on fsync errors, e.g. atomicfs.Marker.Move), an error wrapping
// store.ErrFailed. It returns nil for a nil r.
func recoverFatal(r any, f *fatalState) error {
	switch r := r.(type) {
	case nil:
		return nil
	case fatalPanic:
		return f.set(r.err)
	case error:
		return f.set(fmt.Errorf("%w: pebble panicked: %w", store.ErrFailed, r))
	default:
		return f.set(fmt.Errorf("%w: pebble panicked: %v", store.ErrFailed, r))
	}
}
