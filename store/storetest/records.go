package storetest

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
)

const (
	recv = group.RoleReceiver
	send = group.RoleSender
	outb = group.RoleOutbox
)

func testEmpty(t *testing.T, e *env) {
	e.reopen()
	if _, ok := e.get(key(recv, "g", 1, group.KindMeta, 0)); ok {
		t.Errorf("Get on an empty store found a value")
	}
	for _, role := range []group.Role{recv, send, outb} {
		if got := e.scan(store.RolePrefix(role)); len(got) != 0 {
			t.Errorf("Scan(%v) on an empty store = %v", role, got)
		}
		if got := e.generations(role); len(got) != 0 {
			t.Errorf("Generations(%v) on an empty store = %v", role, got)
		}
	}
	if got := e.due(store.MaxInstant()); len(got) != 0 {
		t.Errorf("DueBefore on an empty store = %v", got)
	}
	if _, ok, err := e.s.NextDeadline(); ok || err != nil {
		t.Errorf("NextDeadline on an empty store = ok %v, err %v", ok, err)
	}
}

func testPutGetDelete(t *testing.T, e *env) {
	k := key(recv, "g", 1, group.KindDelivery, 7)
	e.apply(put(k, "one"))
	if v, ok := e.get(k); !ok || string(v) != "one" {
		t.Fatalf("Get after put = %q, %v", v, ok)
	}
	e.apply(put(k, "two"))
	e.reopen()
	if v, ok := e.get(k); !ok || string(v) != "two" {
		t.Fatalf("Get after overwrite = %q, %v", v, ok)
	}
	// An empty value is a present record.
	empty := key(recv, "g", 1, group.KindDelivery, 8)
	e.apply(group.Mutation{Op: group.OpPut, Key: empty})
	if v, ok := e.get(empty); !ok || len(v) != 0 {
		t.Fatalf("Get of an empty value = %q, %v; want present and empty", v, ok)
	}
	e.apply(del(k))
	e.reopen()
	if _, ok := e.get(k); ok {
		t.Fatalf("Get after delete found the record")
	}
	if got := e.scan(store.RolePrefix(recv)); len(got) != 1 || got[0].Key != empty {
		t.Fatalf("Scan after delete = %v; want only %v", got, empty)
	}
}

// trickyIDs are groupIds whose encodings are easy to get wrong: prefixes of
// each other, the escape byte 0x00, 0xFF, the empty id and a long one.
func trickyIDs() []string {
	return []string{"", "a", "a\x00", "a\x00\x00", "a\x00\x01", "a\x00b", "a\x01", "a\xff", "a\xff\xff", "ab",
		"\x00", "\x00\xff", "\x01", "\xff", "\xff\x00", "urn:uuid:1", strings.Repeat("L", 1000),
		strings.Repeat("L", 1000) + "\x00"}
}

// trickyKeys returns, in random order (seeded), keys over every role, tricky
// groupIds, and extreme generations, kinds and numbers.
func trickyKeys(seed uint64) []group.Key {
	var keys []group.Key
	for _, role := range []group.Role{recv, send, outb} {
		for _, gid := range trickyIDs() {
			for _, gen := range []uint64{1, 2, 256, math.MaxUint64} {
				for _, kind := range []group.Kind{group.KindMeta, group.KindReceived, group.KindDelivery, 0xFF} {
					for _, n := range []uint64{0, 1, 255, 256, math.MaxUint64} {
						if (gen+uint64(kind)+n)%3 == 0 && n != 0 {
							continue // keep the set moderate
						}
						keys = append(keys, key(role, gid, gen, kind, n))
					}
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(seed, 1))
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys
}

func valueOf(k group.Key) string {
	return k.Role.String() + "|" + k.GroupID + "|" + string(rune('0'+k.Kind%10))
}

func applyKeys(e *env, keys []group.Key) {
	for batch := range slices.Chunk(keys, 100) {
		var muts []group.Mutation
		for _, k := range batch {
			muts = append(muts, put(k, valueOf(k)))
		}
		e.apply(muts...)
	}
}

// storedTricky stores trickyKeys(seed) in their random order, reopens the
// store and returns the keys sorted as Scan must return them.
func storedTricky(e *env, seed uint64) []group.Key {
	keys := trickyKeys(seed)
	applyKeys(e, keys)
	e.reopen()
	slices.SortFunc(keys, compareKeys)
	return keys
}

func testOrdering(t *testing.T, e *env) {
	want := storedTricky(e, 1)
	var got []group.Key
	for _, role := range []group.Role{recv, send, outb} {
		for _, r := range e.scan(store.RolePrefix(role)) {
			if string(r.Value) != valueOf(r.Key) {
				t.Fatalf("value of %v = %q; want %q", r.Key, r.Value, valueOf(r.Key))
			}
			got = append(got, r.Key)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Scan order differs from (role, groupId, generation, kind, number): got %d keys, want %d", len(got), len(want))
	}
	for _, k := range want[:50] {
		if v, ok := e.get(k); !ok || string(v) != valueOf(k) {
			t.Fatalf("Get(%v) = %q, %v", k, v, ok)
		}
	}
}

func testPrefixBoundaries(t *testing.T, e *env) {
	sorted := storedTricky(e, 2)
	filter := func(f func(group.Key) bool) []group.Key {
		var out []group.Key
		for _, k := range sorted {
			if f(k) {
				out = append(out, k)
			}
		}
		return out
	}
	check := func(p store.Prefix, want []group.Key) {
		t.Helper()
		var got []group.Key
		for _, r := range e.scan(p) {
			got = append(got, r.Key)
		}
		if !slices.Equal(got, want) {
			t.Errorf("Scan(%+v) = %d keys, want %d", p, len(got), len(want))
		}
	}
	for _, gid := range trickyIDs() {
		check(store.GroupPrefix(send, gid), filter(func(k group.Key) bool { return k.Role == send && k.GroupID == gid }))
		for _, gen := range []uint64{2, math.MaxUint64} {
			id := group.ID{GroupID: gid, Generation: gen}
			check(store.GenerationPrefix(outb, id), filter(func(k group.Key) bool {
				return k.Role == outb && k.GroupID == gid && k.Generation == gen
			}))
			check(store.KindPrefix(recv, id, 0xFF), filter(func(k group.Key) bool {
				return k.Role == recv && k.GroupID == gid && k.Generation == gen && k.Kind == 0xFF
			}))
		}
	}
	check(store.GroupPrefix(recv, "no such group"), nil)
}

func testGenerations(t *testing.T, e *env) {
	keys := trickyKeys(3)
	applyKeys(e, keys)
	// A generation with records but no KindMeta record is not listed.
	e.apply(put(key(recv, "no-meta", 1, group.KindDelivery, 0), "x"))
	e.reopen()
	for _, role := range []group.Role{recv, send, outb} {
		var want []group.ID
		for _, k := range keys {
			if k.Role == role && k.Kind == group.KindMeta {
				id := group.ID{GroupID: k.GroupID, Generation: k.Generation}
				if !slices.Contains(want, id) {
					want = append(want, id)
				}
			}
		}
		slices.SortFunc(want, func(a, b group.ID) int {
			return compareKeys(genKey(role, a), genKey(role, b))
		})
		if got := e.generations(role); !slices.Equal(got, want) {
			t.Errorf("Generations(%v) = %d ids, want %d", role, len(got), len(want))
		}
	}
}

func testAtomicity(t *testing.T, e *env) {
	ok1 := key(recv, "g", 1, group.KindMeta, 0)
	ok2 := key(recv, "g", 1, group.KindDelivery, 1)
	id := group.ID{GroupID: "g", Generation: 1}
	e.apply(put(ok1, "before"), setDeadline(recv, id, at(100)))
	invalid := []group.Mutation{
		{Op: group.OpPut, Key: key(0, "g", 1, group.KindMeta, 0)}, // zero role
		{Op: group.OpPut, Key: key(recv, "g", 1, 0, 0)},           // zero kind
		{Op: 0, Key: ok2},  // zero op
		{Op: 99, Key: ok2}, // unknown op
		{Op: group.OpDelete, Key: key(recv, "g", 1, 0, 0)},                                             // zero kind
		{Op: group.OpSetDeadline, Key: genKey(0, id), At: at(5)},                                       // zero role
		{Op: group.OpSetDeadline, Key: genKey(recv, id), At: yearOne()},                                // out of range
		{Op: group.OpDeleteGeneration, Key: key(0, "g", 1, 0, 0)},                                      // zero role
		put(key(recv, strings.Repeat("x", store.DefaultMaxGroupIDBytes+1), 1, group.KindMeta, 0), "v"), // groupId too long
	}
	for i, bad := range invalid {
		batch := []group.Mutation{
			put(ok1, "after"), put(ok2, "new"), delGen(recv, group.ID{GroupID: "g", Generation: 1}),
			setDeadline(recv, id, at(1)), bad,
		}
		err := e.s.Apply(batch)
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("invalid mutation %d: Apply = %v; want ErrInvalid", i, err)
		}
	}
	e.reopen()
	if v, ok := e.get(ok1); !ok || string(v) != "before" {
		t.Errorf("after failed batches, %v = %q, %v; want \"before\"", ok1, v, ok)
	}
	if _, ok := e.get(ok2); ok {
		t.Errorf("after failed batches, %v exists", ok2)
	}
	if got := e.due(store.MaxInstant()); len(got) != 1 || !got[0].At.Equal(at(100)) {
		t.Errorf("after failed batches, deadlines = %v; want one at %v", got, at(100))
	}
	// An empty batch is a no-op, not an error.
	if err := e.s.Apply(nil); err != nil {
		t.Errorf("Apply(nil) = %v", err)
	}
}

func testLimits(t *testing.T, e *env) {
	long := strings.Repeat("x", store.DefaultMaxGroupIDBytes)
	k := key(recv, long, 1, group.KindMeta, 0)
	e.apply(put(k, "at the limit"))
	if v, ok := e.get(k); !ok || string(v) != "at the limit" {
		t.Fatalf("groupId of exactly the limit: Get = %q, %v", v, ok)
	}
	over := key(recv, long+"x", 1, group.KindMeta, 0)
	if _, _, err := e.s.Get(over); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Get with an over-long groupId = %v; want ErrInvalid", err)
	}
	big := make([]group.Mutation, store.DefaultMaxBatchMutations+1)
	for i := range big {
		big[i] = put(key(recv, "g", 1, group.KindDelivery, uint64(i)), "")
	}
	if err := e.s.Apply(big); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("batch over the mutation limit: Apply = %v; want ErrInvalid", err)
	}
	if got := e.scan(store.GroupPrefix(recv, "g")); len(got) != 0 {
		t.Errorf("a refused batch left %d records", len(got))
	}
}

func testMissing(t *testing.T, e *env) {
	id := group.ID{GroupID: "ghost", Generation: 3}
	// Deleting what does not exist is harmless, as is clearing no deadline.
	e.apply(del(key(recv, "ghost", 3, group.KindMeta, 0)), delGen(recv, id), setDeadline(recv, id, zeroTime()))
	e.reopen()
	if _, ok := e.get(key(recv, "ghost", 3, group.KindMeta, 0)); ok {
		t.Errorf("Get of a missing key found it")
	}
	if got := e.scan(store.GenerationPrefix(recv, id)); len(got) != 0 {
		t.Errorf("Scan of a missing generation = %v", got)
	}
	if got := e.due(store.MaxInstant()); len(got) != 0 {
		t.Errorf("DueBefore after clearing a missing deadline = %v", got)
	}
}

func testNoAliasing(t *testing.T, e *env) {
	k := key(send, "g", 1, group.KindOutbound, 0)
	v := []byte("original")
	e.apply(group.Mutation{Op: group.OpPut, Key: k, Value: v})
	copy(v, "MUTATED!")
	got, _ := e.get(k)
	if string(got) != "original" {
		t.Fatalf("changing the slice passed to Apply changed the store: %q", got)
	}
	copy(got, "MUTATED!")
	if again, _ := e.get(k); string(again) != "original" {
		t.Fatalf("changing a slice returned by Get changed the store: %q", again)
	}
	for _, r := range e.scan(store.RolePrefix(send)) {
		copy(r.Value, "MUTATED!")
	}
	if again, _ := e.get(k); string(again) != "original" {
		t.Fatalf("changing a slice yielded by Scan changed the store: %q", again)
	}
}

func testEarlyBreak(t *testing.T, e *env) {
	applyKeys(e, trickyKeys(4)[:300])
	for _, role := range []group.Role{recv, send} {
		e.apply(setDeadline(role, group.ID{GroupID: "a", Generation: 1}, at(1)),
			setDeadline(role, group.ID{GroupID: "b", Generation: 1}, at(2)))
	}
	n := 0
	for range e.s.Scan(store.RolePrefix(recv)) {
		n++
		break
	}
	for range e.s.Generations(send) {
		n++
		break
	}
	for range e.s.DueBefore(store.MaxInstant()) {
		n++
		break
	}
	if n != 3 {
		t.Fatalf("iterators yielded %d first items; want 3", n)
	}
	// The store stays usable, and closes cleanly (no leaked iterator).
	e.apply(put(key(recv, "after", 1, group.KindMeta, 0), "x"))
	if err := e.s.Close(); err != nil {
		t.Fatalf("Close after broken-off iterations: %v", err)
	}
}

func testInvalidReads(t *testing.T, e *env) {
	if _, _, err := e.s.Get(key(0, "g", 1, group.KindMeta, 0)); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Get with zero role = %v; want ErrInvalid", err)
	}
	if _, _, err := e.s.Get(key(recv, "g", 1, 0, 0)); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Get with zero kind = %v; want ErrInvalid", err)
	}
	bad := []store.Prefix{{}, {Level: 9, Role: recv}, store.RolePrefix(0), store.KindPrefix(recv, group.ID{GroupID: "g"}, 0)}
	for _, p := range bad {
		n, failed := 0, false
		for _, err := range e.s.Scan(p) {
			n++
			failed = errors.Is(err, store.ErrInvalid)
		}
		if n != 1 || !failed {
			t.Errorf("Scan(%+v) yielded %d items, last ErrInvalid %v; want one ErrInvalid", p, n, failed)
		}
	}
	n, failed := 0, false
	for _, err := range e.s.Generations(0) {
		n++
		failed = errors.Is(err, store.ErrInvalid)
	}
	if n != 1 || !failed {
		t.Errorf("Generations(0) yielded %d items; want one ErrInvalid", n)
	}
}
