package pebblestore_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
)

// The crash and fault workloads: worker w owns generation 1 of group "w<w>"
// and applies batches i = 0, 1, 2, … in order. Batch i
//   - puts KindMeta = i, KindReceived #i and KindDelivery #i,
//   - deletes KindHeld #i-1 and puts KindHeld #i,
//   - sets the generation's deadline to base + i seconds.
// So a store that applied batches 0..n-1 of a worker, each whole, has meta
// n-1, received and delivery #0..n-1, exactly one held record (#n-1) and
// the deadline base + n-1: anything else is a partial batch.

var base = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

func workerID(w int) group.ID { return group.ID{GroupID: fmt.Sprintf("w%d", w), Generation: 1} }

func workBatch(w, i int) []group.Mutation {
	id := workerID(w)
	k := func(kind group.Kind, n int) group.Key {
		return group.Key{Role: group.RoleReceiver, GroupID: id.GroupID, Generation: 1, Kind: kind, Number: uint64(n)}
	}
	v := []byte(strconv.Itoa(i))
	b := []group.Mutation{
		{Op: group.OpPut, Key: k(group.KindMeta, 0), Value: v},
		{Op: group.OpPut, Key: k(group.KindReceived, i), Value: v},
		{Op: group.OpPut, Key: k(group.KindDelivery, i), Value: append(v, make([]byte, 200)...)},
		{Op: group.OpPut, Key: k(group.KindHeld, i), Value: v},
		{Op: group.OpSetDeadline, Key: k(0, 0), At: base.Add(time.Duration(i) * time.Second)},
	}
	if i > 0 {
		b = append(b, group.Mutation{Op: group.OpDelete, Key: k(group.KindHeld, i-1)})
	}
	return b
}

// checkWorkload checks that s holds, for each worker, whole batches 0..n-1
// for some n, and returns each worker's n.
func checkWorkload(t *testing.T, s store.Store, workers int) []int {
	t.Helper()
	counts := make([]int, workers)
	due := map[group.ID]time.Time{}
	for d, err := range s.DueBefore(store.MaxInstant()) {
		if err != nil {
			t.Fatalf("DueBefore: %v", err)
		}
		if _, dup := due[d.ID]; dup {
			t.Fatalf("two deadline entries for %v", d.ID)
		}
		due[d.ID] = d.At
	}
	for w := range workers {
		id := workerID(w)
		byKind := map[group.Kind][]store.Record{}
		for r, err := range s.Scan(store.GenerationPrefix(group.RoleReceiver, id)) {
			if err != nil {
				t.Fatalf("Scan: %v", err)
			}
			byKind[r.Key.Kind] = append(byKind[r.Key.Kind], r)
		}
		n := len(byKind[group.KindReceived])
		counts[w] = n
		if n == 0 {
			if len(byKind) != 0 || !due[id].IsZero() {
				t.Fatalf("worker %d: no batch, yet records %v, deadline %v", w, byKind, due[id])
			}
			continue
		}
		last := strconv.Itoa(n - 1)
		switch {
		case len(byKind[group.KindDelivery]) != n:
			t.Fatalf("worker %d: %d received, %d delivery records", w, n, len(byKind[group.KindDelivery]))
		case int(byKind[group.KindReceived][n-1].Key.Number) != n-1:
			t.Fatalf("worker %d: received numbers not 0..%d", w, n-1)
		case len(byKind[group.KindMeta]) != 1 || string(byKind[group.KindMeta][0].Value) != last:
			t.Fatalf("worker %d: meta %v; want %s", w, byKind[group.KindMeta], last)
		case len(byKind[group.KindHeld]) != 1 || string(byKind[group.KindHeld][0].Value) != last:
			t.Fatalf("worker %d: held %v; want only #%s", w, byKind[group.KindHeld], last)
		case !due[id].Equal(base.Add(time.Duration(n-1) * time.Second)):
			t.Fatalf("worker %d: deadline %v; want base+%ds", w, due[id], n-1)
		}
	}
	if len(due) > workers {
		t.Fatalf("deadline index holds %d entries for %d workers", len(due), workers)
	}
	return counts
}
