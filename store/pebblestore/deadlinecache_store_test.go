package pebblestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/internal/kvplan"
	"github.com/wsrkit/wsrkit/store/storetest"
)

// The deadline cache against the store without it: the contract kit, a
// seeded random sequence with an injected commit failure, and concurrent
// Applies racing on eviction.

// TestContractDeadlineCache runs the contract kit with a cache so small
// that every batch evicts, and with the cache disabled.
func TestContractDeadlineCache(t *testing.T) {
	for _, n := range []int{1, 2, -1} {
		t.Run(fmt.Sprintf("entries=%d", n), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Store {
				s, err := NewMemFS().Open("db", Options{DeadlineCacheEntries: n})
				if err != nil {
					t.Fatal(err)
				}
				return s
			})
		})
	}
}

// dueList returns every deadline-index entry of s.
func dueList(t *testing.T, s *Store) []store.Deadline {
	t.Helper()
	var out []store.Deadline
	for d, err := range s.DueBefore(store.MaxInstant()) {
		if err != nil {
			t.Fatalf("DueBefore: %v", err)
		}
		out = append(out, d)
	}
	return out
}

func sameDue(a, b []store.Deadline) bool {
	return slices.EqualFunc(a, b, func(x, y store.Deadline) bool { return x.At.Equal(y.At) && x.Role == y.Role && x.ID == y.ID })
}

// checkCoherent fails unless every entry of c equals the reverse entry that
// disk holds.
func checkCoherent(t *testing.T, what string, c *deadlineCache, disk *Store) {
	t.Helper()
	if c == nil {
		return
	}
	c.mu.Lock()
	ring := slices.Clone(c.ring)
	c.mu.Unlock()
	for _, e := range ring {
		if e.key == "" {
			continue
		}
		v, ok, err := disk.read([]byte(e.key))
		if err != nil {
			t.Fatalf("%s: read %x: %v", what, e.key, err)
		}
		var want []byte
		if e.has {
			want = binary.BigEndian.AppendUint64(nil, e.at)
		}
		if ok != e.has || string(v) != string(want) {
			t.Fatalf("%s: cache holds %x = (%d, %v); disk holds %x (present %v)", what, e.key, e.at, e.has, v, ok)
		}
	}
}

var cacheRoles = []group.Role{group.RoleReceiver, group.RoleSender}

// randomDeadlineBatch mixes deadline sets and clears, generation deletions
// and puts over 4 groups × 2 generations × 2 roles; one batch in 20 is
// invalid (an instant out of range) and must change nothing.
func randomDeadlineBatch(r *rand.Rand) (batch []group.Mutation, invalid bool) {
	for range 1 + r.IntN(6) {
		k := group.Key{Role: cacheRoles[r.IntN(2)], GroupID: fmt.Sprintf("g%d", r.IntN(4)), Generation: uint64(1 + r.IntN(2)), Kind: group.KindMeta}
		switch p := r.IntN(10); {
		case p < 5:
			batch = append(batch, group.Mutation{Op: group.OpSetDeadline, Key: k, At: time.Unix(1_800_000_000+int64(r.IntN(8)), 0)})
		case p < 7:
			batch = append(batch, group.Mutation{Op: group.OpSetDeadline, Key: k}) // clear
		case p < 8:
			batch = append(batch, group.Mutation{Op: group.OpDeleteGeneration, Key: k})
		default:
			batch = append(batch, group.Mutation{Op: group.OpPut, Key: k, Value: []byte("m")})
		}
	}
	if r.IntN(20) == 0 {
		batch = append(batch, group.Mutation{Op: group.OpSetDeadline, Key: batch[0].Key, At: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)})
		return batch, true
	}
	return batch, false
}

// TestDeadlineCacheMatchesUncached applies one seeded random sequence to a
// store with the default cache, one with a 2-entry cache and one without,
// checking after every batch that their deadline indexes agree and every
// cached entry is the one on disk. A WAL fault then fails a batch on all
// three: the failed batch's entries leave the cache, and the crash clones
// recover the same index, the one before the failed batch. The sequence
// goes on from the reopened stores, whose caches start empty.
func TestDeadlineCacheMatchesUncached(t *testing.T) {
	sizes := []int{0, 2, -1}
	fss := make([]*MemFS, len(sizes))
	sts := make([]*Store, len(sizes))
	for i, n := range sizes {
		fss[i] = NewMemFS()
		sts[i] = memStore(t, fss[i], n)
	}
	r := rand.New(rand.NewPCG(7, 2026))
	steps := func(from, to int) {
		t.Helper()
		for step := from; step < to; step++ {
			batch, invalid := randomDeadlineBatch(r)
			for i, s := range sts {
				err := s.Apply(batch)
				if invalid != errors.Is(err, store.ErrInvalid) || (!invalid && err != nil) {
					t.Fatalf("step %d, cache %d: Apply = %v; invalid batch %v", step, sizes[i], err, invalid)
				}
			}
			want := dueList(t, sts[len(sts)-1])
			for i, s := range sts {
				if got := dueList(t, s); !sameDue(got, want) {
					t.Fatalf("step %d: cache %d has deadlines %v; the uncached store %v", step, sizes[i], got, want)
				}
				checkCoherent(t, fmt.Sprintf("step %d, cache %d", step, sizes[i]), s.deadlines, s)
			}
		}
	}
	steps(0, 400)
	if sts[0].deadlines.hits == 0 || sts[1].deadlines.misses <= sts[0].deadlines.misses {
		t.Fatalf("the run did not exercise the caches: default %d hits, %d misses; tiny %d misses",
			sts[0].deadlines.hits, sts[0].deadlines.misses, sts[1].deadlines.misses)
	}

	// Every generation gets a new deadline in a batch whose commit fails.
	before := dueList(t, sts[0])
	var failing []group.Mutation
	for _, role := range cacheRoles {
		for g := range 4 {
			for gen := range 2 {
				k := group.Key{Role: role, GroupID: fmt.Sprintf("g%d", g), Generation: uint64(gen + 1), Kind: group.KindMeta}
				failing = append(failing, group.Mutation{Op: group.OpSetDeadline, Key: k, At: time.Unix(1_900_000_000, 0)})
			}
		}
	}
	u, _ := kvplan.EncodeInstant(time.Unix(1_900_000_000, 0))
	for i, s := range sts {
		fss[i].FailNextWALWrite(errors.New("injected"))
		if err := s.Apply(failing); !errors.Is(err, store.ErrFailed) {
			t.Fatalf("cache %d: Apply under a WAL fault = %v; want ErrFailed", sizes[i], err)
		}
		if s.deadlines != nil {
			for k := range cacheKeys(s.deadlines) {
				if at, has, _ := s.deadlines.get([]byte(k)); has && at == u {
					t.Fatalf("cache %d claims the uncommitted deadline of %x", sizes[i], k)
				}
			}
		}
		clone := fss[i].CrashClone(0, uint64(i))
		_ = s.Close()
		fss[i] = clone
		cached := s.deadlines
		sts[i] = memStore(t, clone, sizes[i])
		if got := dueList(t, sts[i]); !sameDue(got, before) {
			t.Fatalf("cache %d: recovered deadlines %v; want those before the failed batch %v", sizes[i], got, before)
		}
		checkCoherent(t, fmt.Sprintf("after the fault, cache %d", sizes[i]), cached, sts[i])
		if n := sts[i].deadlines.len(); n != 0 {
			t.Fatalf("a reopened store starts with %d cached entries", n)
		}
	}
	steps(400, 600)
}

// TestDeadlineCacheConcurrentEviction: workers apply batches on their own
// groups and on one shared group through a 2-entry cache, so every Apply
// evicts entries another Apply may be reading or replacing. Each own group
// ends at its last deadline, and every cached entry is the one on disk.
// Run with -race.
func TestDeadlineCacheConcurrentEviction(t *testing.T) {
	const workers, rounds = 6, 400
	s := memStore(t, NewMemFS(), 2)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for n := range rounds {
				batch := messageBatch(fmt.Sprintf("w%d", w), n)
				batch = append(batch, messageBatch(fmt.Sprintf("w%d-b", w), n)...)
				if n%3 == 0 {
					batch = append(batch, group.Mutation{Op: group.OpSetDeadline,
						Key: group.Key{Role: group.RoleReceiver, GroupID: "shared", Generation: 1}, At: time.Unix(int64(w*1000+n), 0)})
				}
				if err := s.Apply(batch); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	last := time.Unix(1_800_000_000+rounds-1, 0)
	n := 0
	for _, d := range dueList(t, s) {
		if d.ID.GroupID == "shared" {
			continue
		}
		n++
		if !d.At.Equal(last) {
			t.Fatalf("%v due at %v; want %v", d.ID, d.At, last)
		}
	}
	if n != 2*workers {
		t.Fatalf("%d own deadlines; want %d", n, 2*workers)
	}
	checkCoherent(t, "after the race", s.deadlines, s)
	if c := s.deadlines; c.len() > 2 || c.hits+c.misses == 0 {
		t.Fatalf("%d entries, %d hits, %d misses; want at most 2 entries and reads through the cache", c.len(), c.hits, c.misses)
	}
}
