package pebblestore

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/wsrkit/wsrkit/store/internal/kvplan"
)

// DefaultDeadlineCacheEntries is the bound of the deadline cache when
// Options.DeadlineCacheEntries is 0.
const DefaultDeadlineCacheEntries = 4096

// deadlineCache holds recently committed reverse deadline entries
// (kvplan.DeadlineRevKey → deadline, or absent), so that Apply's kvplan reads
// of hot generations skip pebble. It is written through after each
// successful commit, under the batch's key locks, so an entry present is the
// value on disk; a failed batch drops its entries (Store.commit). Eviction
// only removes entries, so concurrent Applies evicting each other's keys
// cost misses, never stale values.
//
// Eviction is CLOCK over a fixed ring: deterministic for a given sequence
// of calls, no map order involved. Memory (measured): 76–90 B per entry
// plus its key, 12 B + the escaped groupId rounded up to a size class (64 B
// for a urn:uuid groupId); ≈0.6 MiB at the default bound.
type deadlineCache struct {
	mu    sync.Mutex
	max   int
	index map[string]int // key → its slot in ring
	// ring: the slots, appended up to max, then reused by the CLOCK hand;
	// a slot with key "" is free (no reverse key is empty), and listed in
	// free.
	ring []cacheSlot
	free []int
	hand int
	// hits and misses count get's answers (tests, benchmarks).
	hits, misses uint64
}

type cacheSlot struct {
	key string
	at  uint64
	has bool
	ref bool // CLOCK reference bit: used since the hand last passed
}

// newDeadlineCache returns a cache of at most n entries (0: the default),
// or nil for a negative n (disabled; every method of a nil cache is a
// no-op or a miss).
func newDeadlineCache(n int) *deadlineCache {
	switch {
	case n < 0:
		return nil
	case n == 0:
		n = DefaultDeadlineCacheEntries
	}
	return &deadlineCache{max: n, index: make(map[string]int)}
}

// get returns the cached deadline of key; ok is false on a miss.
func (c *deadlineCache) get(key []byte) (at uint64, has, ok bool) {
	if c == nil {
		return 0, false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.index[string(key)]
	if !ok {
		c.misses++
		return 0, false, false
	}
	c.hits++
	s := &c.ring[i]
	s.ref = true
	return s.at, s.has, true
}

// put records the final deadlines of a committed batch.
func (c *deadlineCache) put(finals []kvplan.Final) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range finals {
		if i, ok := c.index[f.Rev]; ok {
			s := &c.ring[i]
			s.at, s.has, s.ref = f.At, f.Has, true
			continue
		}
		i := c.victim()
		c.ring[i] = cacheSlot{key: f.Rev, at: f.At, has: f.Has}
		c.index[f.Rev] = i
	}
}

// victim returns a slot for a new entry: a dropped one, a new one while
// the ring is short of max, else the first unreferenced slot from the hand
// on (clearing reference bits on the way), its entry evicted.
func (c *deadlineCache) victim() int {
	if n := len(c.free); n > 0 {
		i := c.free[n-1]
		c.free = c.free[:n-1]
		return i
	}
	if len(c.ring) < c.max {
		c.ring = append(c.ring, cacheSlot{})
		return len(c.ring) - 1
	}
	for {
		i := c.hand
		c.hand = (c.hand + 1) % len(c.ring)
		s := &c.ring[i]
		if s.ref {
			s.ref = false
			continue
		}
		delete(c.index, s.key)
		return i
	}
}

// drop removes keys' entries.
func (c *deadlineCache) drop(keys []string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		if i, ok := c.index[k]; ok {
			delete(c.index, k)
			c.ring[i] = cacheSlot{}
			c.free = append(c.free, i)
		}
	}
}

// len returns the number of entries.
func (c *deadlineCache) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.index)
}

// readDeadline is Apply's kvplan.Reader (it reads reverse deadline entries
// only): the cache, else pebble.
func (s *Store) readDeadline(key []byte) ([]byte, bool, error) {
	at, has, ok := s.deadlines.get(key)
	if !ok {
		return s.read(key)
	}
	if !has {
		return nil, false, nil
	}
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), at), true, nil
}

// commit commits b, which holds the batch that left finals, then writes
// finals through to the cache. The caller holds the key locks of keys
// (LockKeys) until commit returns, so no other batch changes these
// entries in between. On an error or a panic in pebble it drops keys'
// entries instead: the cache never holds a deadline that is not on disk.
func (s *Store) commit(b *pebble.Batch, keys []string, finals []kvplan.Final) error {
	done := false
	defer func() {
		if !done {
			s.deadlines.drop(keys)
		}
	}()
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: commit: %w", err)
	}
	s.deadlines.put(finals)
	done = true
	return nil
}
