package pebblestore

import (
	"fmt"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/internal/kvplan"
)

// The unit tests of the deadline cache, and the store-level tests that its
// reads are spared and its size bounded. Coherence with an uncached store,
// faults and concurrency: deadlinecache_store_test.go.

func cacheKeys(c *deadlineCache) map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]bool{}
	for k, i := range c.index {
		if c.ring[i].key != k {
			panic(fmt.Sprintf("index says %q is in slot %d, which holds %q", k, i, c.ring[i].key))
		}
		out[k] = true
	}
	return out
}

// TestDeadlineCacheClock pins the CLOCK eviction: the hand skips (and
// clears) referenced entries, evicts the first unreferenced one, and reuses
// a dropped entry's slot.
func TestDeadlineCacheClock(t *testing.T) {
	c := newDeadlineCache(3)
	put := func(keys ...string) {
		for _, k := range keys {
			c.put([]kvplan.Final{{Rev: k, At: uint64(k[0]), Has: true}})
		}
	}
	want := func(keys ...string) {
		t.Helper()
		got := cacheKeys(c)
		if len(got) != len(keys) {
			t.Fatalf("cache holds %v; want %v", got, keys)
		}
		for _, k := range keys {
			if !got[k] {
				t.Fatalf("cache holds %v; want %v", got, keys)
			}
		}
	}
	put("a", "b", "c")
	if at, has, ok := c.get([]byte("a")); !ok || !has || at != 'a' {
		t.Fatalf("get(a) = %d %v %v; want 'a' present", at, has, ok)
	}
	put("d") // a referenced: skipped; b evicted
	want("a", "c", "d")
	put("e") // c evicted
	want("a", "d", "e")
	put("f") // a's bit was cleared by the first pass: evicted now
	want("d", "e", "f")
	c.drop([]string{"e", "zz"})
	want("d", "f")
	put("g") // takes e's freed slot, d stays
	want("d", "f", "g")
	if _, _, ok := c.get([]byte("e")); ok {
		t.Fatal("a dropped entry answers")
	}
	if c.hits != 1 || c.misses != 1 {
		t.Fatalf("hits %d misses %d; want 1 and 1", c.hits, c.misses)
	}
	// An absent deadline is cached as absent.
	c.put([]kvplan.Final{{Rev: "d"}})
	if _, has, ok := c.get([]byte("d")); !ok || has {
		t.Fatalf("get(d) after clearing: has %v ok %v; want a cached absence", has, ok)
	}
}

// TestDeadlineCacheBound: 100,000 distinct generations leave the default
// bound of entries; a negative size disables the cache.
func TestDeadlineCacheBound(t *testing.T) {
	c := newDeadlineCache(0)
	for i := range 100_000 {
		c.put([]kvplan.Final{{Rev: fmt.Sprintf("e%06d", i), At: uint64(i), Has: true}})
	}
	if n := c.len(); n != DefaultDeadlineCacheEntries || len(c.ring) != DefaultDeadlineCacheEntries {
		t.Fatalf("%d entries in a ring of %d after 100,000 puts; want %d", n, len(c.ring), DefaultDeadlineCacheEntries)
	}
	// The newest entries survive (the hand evicts the oldest first).
	if at, _, ok := c.get([]byte("e099999")); !ok || at != 99_999 {
		t.Fatalf("newest entry: %d %v", at, ok)
	}
	if newDeadlineCache(-1) != nil {
		t.Fatal("a negative size must disable the cache")
	}
}

func memStore(t *testing.T, fs *MemFS, entries int) *Store {
	t.Helper()
	s, err := fs.Open("db", Options{DeadlineCacheEntries: entries})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// messageBatch is a receiver's per-message batch: meta and a delivery put,
// and the generation's new deadline.
func messageBatch(gid string, n int) []group.Mutation {
	k := group.Key{Role: group.RoleReceiver, GroupID: gid, Generation: 1, Kind: group.KindMeta}
	d := k
	d.Kind, d.Number = group.KindDelivery, uint64(n)
	return []group.Mutation{
		{Op: group.OpPut, Key: k, Value: []byte("meta")},
		{Op: group.OpPut, Key: d, Value: []byte("payload")},
		{Op: group.OpSetDeadline, Key: k, At: time.Unix(1_800_000_000+int64(n), 0)},
	}
}

// TestDeadlineCacheSparesReads: after each group's first batch, deadline
// changes of hot groups read nothing from pebble; a cache smaller than the
// hot set misses on every batch, and a disabled one is never consulted.
func TestDeadlineCacheSparesReads(t *testing.T) {
	const groups, rounds = 16, 50
	run := func(entries int) *Store {
		s := memStore(t, NewMemFS(), entries)
		for n := range rounds {
			for g := range groups {
				if err := s.Apply(messageBatch(fmt.Sprintf("g%02d", g), n)); err != nil {
					t.Fatal(err)
				}
			}
		}
		due := 0
		for d, err := range s.DueBefore(store.MaxInstant()) {
			if err != nil {
				t.Fatal(err)
			}
			if !d.At.Equal(time.Unix(1_800_000_000+rounds-1, 0)) {
				t.Fatalf("%v due at %v; want the last round's deadline", d.ID, d.At)
			}
			due++
		}
		if due != groups {
			t.Fatalf("%d deadlines; want %d", due, groups)
		}
		return s
	}
	s := run(0)
	if c := s.deadlines; c.misses != groups || c.hits != groups*(rounds-1) {
		t.Fatalf("default cache: %d misses, %d hits; want %d (first batches) and %d", c.misses, c.hits, groups, groups*(rounds-1))
	}
	s = run(groups / 2)
	if c := s.deadlines; c.misses != groups*rounds || c.hits != 0 || c.len() != groups/2 {
		t.Fatalf("cache of %d under %d round-robin groups: %d misses, %d hits, %d entries; want a miss each batch and %d entries",
			groups/2, groups, c.misses, c.hits, c.len(), groups/2)
	}
	if s := run(-1); s.deadlines != nil {
		t.Fatal("DeadlineCacheEntries -1 left a cache")
	}
}

// TestDeadlineCacheIdleGroupsBounded: a store holding many generations keeps
// at most DeadlineCacheEntries entries.
func TestDeadlineCacheIdleGroupsBounded(t *testing.T) {
	const groups, bound = 5000, 64
	s := memStore(t, NewMemFS(), bound)
	for start := 0; start < groups; start += 500 {
		var batch []group.Mutation
		for g := start; g < start+500; g++ {
			batch = append(batch, messageBatch(fmt.Sprintf("idle-%05d", g), g)...)
		}
		if err := s.Apply(batch); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.deadlines.len(); n != bound || len(s.deadlines.ring) != bound {
		t.Fatalf("%d entries in a ring of %d over %d generations; want %d", n, len(s.deadlines.ring), groups, bound)
	}
	n := 0
	for _, err := range s.DueBefore(store.MaxInstant()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != groups {
		t.Fatalf("%d deadlines; want %d", n, groups)
	}
}
