// Package callgate admits a store's calls and iterations until the store
// is closed, and lets Close wait for those in progress: the lifecycle
// pebblestore and etcdstore share.
package callgate

import (
	"sync"
	"sync/atomic"

	"github.com/wsrkit/wsrkit/store"
)

// Gate counts the calls in progress. The zero value is an open gate.
type Gate struct {
	mu   sync.Mutex
	cond sync.Cond // L is mu, set by Wait
	// closed: Close was called; inflight counts calls and iterations in
	// progress, which Wait waits for.
	closed   bool
	inflight int
	// closing mirrors closed for iterations, which check it at every step
	// without taking mu.
	closing atomic.Bool
}

// Enter admits a call: store.ErrClosed once the gate is closed, else
// failed (the store's fatal error) when it is not nil. An admitted call
// ends with Exit.
func (g *Gate) Enter(failed error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return store.ErrClosed
	}
	if failed != nil {
		return failed
	}
	g.inflight++
	return nil
}

// Exit ends a call Enter admitted.
func (g *Gate) Exit() {
	g.mu.Lock()
	g.inflight--
	if g.inflight == 0 {
		g.cond.Broadcast()
	}
	g.mu.Unlock()
}

// Close closes the gate to new calls; false when it was closed already.
func (g *Gate) Close() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.closed = true
	g.closing.Store(true)
	return true
}

// Closing reports whether Close was called: an iteration in progress ends
// with store.ErrClosed at its next step.
func (g *Gate) Closing() bool { return g.closing.Load() }

// Wait returns once no admitted call is in progress.
func (g *Gate) Wait() {
	g.mu.Lock()
	g.cond.L = &g.mu
	for g.inflight > 0 {
		g.cond.Wait()
	}
	g.mu.Unlock()
}
