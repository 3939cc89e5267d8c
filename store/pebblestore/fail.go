package pebblestore

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wsrkit/wsrkit/store"
)

// A storage failure stops the store at once (#18): a full disk (ENOSPC)
// or any other write error, also one that pebble meets on a background
// flush or compaction, marks the store failed, and every call then
// returns an error wrapping store.ErrFailed without waiting — also a call
// already stuck inside pebble (a commit waiting for a flush that cannot
// succeed): Apply hands its commit to a goroutine and returns as soon as
// the store failed. Pebble retries a failed flush at once, forever (its
// TODO: "count consecutive flush errors and backoff"), logging each try;
// the listener backs those retries off to one a second, and the store's
// error lines are rate-limited. Close waits a bounded time for calls in
// progress once the store failed, so a stop is never held by the disk.

// closeGrace bounds how long Close waits, once the store failed, for calls
// in progress and for pebble's own Close.
const closeGrace = 2 * time.Second

// fatalState holds the first fatal error; failed closes with it.
type fatalState struct {
	err    atomic.Pointer[error]
	once   sync.Once
	failed chan struct{}
}

func newFatalState() *fatalState { return &fatalState{failed: make(chan struct{})} }

func (f *fatalState) get() error {
	if p := f.err.Load(); p != nil {
		return *p
	}
	return nil
}

// set records err unless an earlier fatal error is recorded, and returns
// the recorded one.
func (f *fatalState) set(err error) error {
	if f.err.CompareAndSwap(nil, &err) {
		f.once.Do(func() { close(f.failed) })
	}
	return f.get()
}

// backgroundError is pebble's EventListener.BackgroundError: an error of
// a flush, compaction or WAL write that no call returned. It runs on
// pebble's goroutine, in a flush under the database's lock: sleeping here
// paces pebble's immediate retries.
func (l *fatalLogger) backgroundError(err error) {
	l.state.set(fmt.Errorf("%w: pebble: %w", store.ErrFailed, err))
	l.Errorf("background error, store stopped: %v", err)
	n := l.retries.Add(1)
	time.Sleep(min(10*time.Millisecond<<min(n, 7), time.Second))
}

// lineLimit lets a burst of lines through, then one per interval, and
// says how many it dropped meanwhile.
type lineLimit struct {
	mu         sync.Mutex
	burst      int
	next       time.Time
	suppressed int
}

const (
	lineBurst    = 5
	lineInterval = 10 * time.Second
)

// allow reports whether a line may be written now, and how many were
// dropped before it.
func (l *lineLimit) allow() (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.burst < lineBurst {
		l.burst++
		return true, 0
	}
	now := time.Now()
	if now.Before(l.next) {
		l.suppressed++
		return false, 0
	}
	l.next = now.Add(lineInterval)
	n := l.suppressed
	l.suppressed = 0
	return true, n
}

// waitIdle waits for the calls in progress; once the store failed, for at
// most closeGrace more. It reports whether they all ended.
func (s *Store) waitIdle() bool {
	idle := make(chan struct{})
	go func() {
		s.gate.Wait()
		close(idle)
	}()
	select {
	case <-idle:
		return true
	case <-s.fatal.failed:
	}
	select {
	case <-idle:
		return true
	case <-time.After(closeGrace):
		return false
	}
}

// closeFailed closes a failed store: pebble's Close, which a commit stuck
// inside pebble would block, gets closeGrace; the result is the failure.
func (s *Store) closeFailed() error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var err error
		defer s.guard(&err)
		_ = s.db.Close() // the failure says more than Close's error
	}()
	select {
	case <-done:
	case <-time.After(closeGrace):
	}
	return s.fatal.get()
}
