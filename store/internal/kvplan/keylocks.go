package kvplan

import "sync"

// KeyLocks is a set of mutexes named by string, created on demand and
// dropped when unused. Locking keys in sorted order (as LockKeys returns
// them) cannot deadlock.
type KeyLocks struct {
	mu sync.Mutex
	// held: the locks in use or awaited; refs counts their holders and
	// waiters, and a lock leaves the map when refs reaches 0.
	held map[string]*keyLock
}

type keyLock struct {
	mu   sync.Mutex
	refs int
}

// Lock locks every key of keys, in order.
func (l *KeyLocks) Lock(keys []string) {
	for _, k := range keys {
		l.mu.Lock()
		if l.held == nil {
			l.held = make(map[string]*keyLock)
		}
		kl := l.held[k]
		if kl == nil {
			kl = &keyLock{}
			l.held[k] = kl
		}
		kl.refs++
		l.mu.Unlock()
		kl.mu.Lock()
	}
}

// Unlock unlocks every key of keys, which the caller locked with Lock.
func (l *KeyLocks) Unlock(keys []string) {
	for _, k := range keys {
		l.mu.Lock()
		kl := l.held[k]
		kl.mu.Unlock()
		kl.refs--
		if kl.refs == 0 {
			delete(l.held, k)
		}
		l.mu.Unlock()
	}
}
