package storetest

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
)

// model is the obvious reference implementation of the store's contract.
type model struct {
	recs map[group.Key]string
	at   map[store.Deadline]time.Time
}

func newModel() *model {
	return &model{recs: map[group.Key]string{}, at: map[store.Deadline]time.Time{}}
}

func (m *model) apply(batch []group.Mutation) {
	for _, mu := range batch {
		k := mu.Key
		gk := store.Deadline{Role: k.Role, ID: group.ID{GroupID: k.GroupID, Generation: k.Generation}}
		switch mu.Op {
		case group.OpPut:
			m.recs[k] = string(mu.Value)
		case group.OpDelete:
			delete(m.recs, k)
		case group.OpDeleteGeneration:
			maps.DeleteFunc(m.recs, func(r group.Key, _ string) bool {
				return r.Role == k.Role && r.GroupID == k.GroupID && r.Generation == k.Generation
			})
			delete(m.at, gk)
		case group.OpSetDeadline:
			if mu.At.IsZero() {
				delete(m.at, gk)
			} else {
				m.at[gk] = mu.At.UTC()
			}
		}
	}
}

func (m *model) records(role group.Role) []store.Record {
	var out []store.Record
	for k, v := range m.recs {
		if k.Role == role {
			out = append(out, store.Record{Key: k, Value: []byte(v)})
		}
	}
	slices.SortFunc(out, func(a, b store.Record) int { return compareKeys(a.Key, b.Key) })
	return out
}

func (m *model) deadlines() []store.Deadline {
	var out []store.Deadline
	for k, t := range m.at {
		k.At = t
		out = append(out, k)
	}
	slices.SortFunc(out, compareDeadlines)
	return out
}

func (m *model) generations(role group.Role) []group.ID {
	var out []group.ID
	for _, r := range m.records(role) {
		if r.Key.Kind == group.KindMeta {
			id := group.ID{GroupID: r.Key.GroupID, Generation: r.Key.Generation}
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// randomBatch draws a batch over a small key universe, so that operations
// collide; invalid is true when it planted an invalid mutation.
func randomBatch(r *rand.Rand) (batch []group.Mutation, invalid bool) {
	gids := []string{"", "a", "a\x00", "ab", "b\xff"}
	pick := func() group.Key {
		return group.Key{
			Role:       []group.Role{recv, send}[r.IntN(2)],
			GroupID:    gids[r.IntN(len(gids))],
			Generation: []uint64{1, 2, math.MaxUint64}[r.IntN(3)],
			Kind:       []group.Kind{group.KindMeta, group.KindHeld, group.KindDelivery}[r.IntN(3)],
			Number:     []uint64{0, 1, 2, math.MaxUint64}[r.IntN(4)],
		}
	}
	n := 1 + r.IntN(6)
	for range n {
		k := pick()
		var m group.Mutation
		switch x := r.IntN(20); {
		case x < 9:
			m = group.Mutation{Op: group.OpPut, Key: k, Value: fmt.Appendf(nil, "v%d", r.IntN(1000))}
		case x < 13:
			m = group.Mutation{Op: group.OpDelete, Key: k}
		case x < 15:
			m = group.Mutation{Op: group.OpDeleteGeneration, Key: k}
		case x < 17:
			m = group.Mutation{Op: group.OpSetDeadline, Key: k, At: at(r.IntN(8))}
		default:
			m = group.Mutation{Op: group.OpSetDeadline, Key: k}
		}
		batch = append(batch, m)
	}
	if r.IntN(15) == 0 {
		bad := pick()
		bad.Role = 0
		batch = slices.Insert(batch, r.IntN(len(batch)+1), group.Mutation{Op: group.OpPut, Key: bad})
		invalid = true
	}
	return batch, invalid
}

// testModel applies seeded random batches to the store and to the model and
// compares every view of them.
func testModel(t *testing.T, e *env) {
	r := rand.New(rand.NewPCG(42, 7))
	m := newModel()
	compare := func(step int) {
		t.Helper()
		for _, role := range []group.Role{recv, send} {
			if got, want := e.scan(store.RolePrefix(role)), m.records(role); !recordsEqual(got, want) {
				t.Fatalf("step %d: Scan(%v) = %v\nmodel %v", step, role, got, want)
			}
			if got, want := e.generations(role), m.generations(role); !slices.Equal(got, want) {
				t.Fatalf("step %d: Generations(%v) = %v\nmodel %v", step, role, got, want)
			}
		}
		if got, want := e.due(store.MaxInstant()), m.deadlines(); !deadlinesEqual(got, want) {
			t.Fatalf("step %d: DueBefore = %v\nmodel %v", step, got, want)
		}
	}
	for step := range 400 {
		batch, invalid := randomBatch(r)
		err := e.s.Apply(batch)
		switch {
		case invalid && !errors.Is(err, store.ErrInvalid):
			t.Fatalf("step %d: Apply of an invalid batch = %v", step, err)
		case !invalid && err != nil:
			t.Fatalf("step %d: Apply = %v", step, err)
		case !invalid:
			m.apply(batch)
		}
		if step%10 == 0 {
			compare(step)
		}
		if step%100 == 99 {
			e.reopen()
		}
	}
	compare(400)
}

// testConcurrentApply runs many goroutines: each owns groups it writes, and
// all of them fight over the deadline of one shared generation.
func testConcurrentApply(t *testing.T, e *env) {
	const workers, batches = 16, 40
	shared := group.ID{GroupID: "shared", Generation: 1}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			id := group.ID{GroupID: fmt.Sprintf("w%02d", w), Generation: 1}
			for i := range batches {
				err := e.s.Apply([]group.Mutation{
					put(key(recv, id.GroupID, 1, group.KindMeta, 0), fmt.Sprint(i)),
					put(key(recv, id.GroupID, 1, group.KindReceived, uint64(i)), "r"),
					put(key(recv, id.GroupID, 1, group.KindDelivery, uint64(i)), "d"),
					setDeadline(recv, id, at(w*1000+i)),
					setDeadline(send, shared, at(w*1000+i)),
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent Apply: %v", err)
	}
	e.reopen()
	for w := range workers {
		gid := fmt.Sprintf("w%02d", w)
		got := e.scan(store.GenerationPrefix(recv, group.ID{GroupID: gid, Generation: 1}))
		if len(got) != 1+2*batches || string(got[0].Value) != fmt.Sprint(batches-1) {
			t.Fatalf("group %s: %d records, meta %q", gid, len(got), got[0].Value)
		}
	}
	due := e.due(store.MaxInstant())
	if len(due) != workers+1 {
		t.Fatalf("deadline index holds %d entries; want one per generation (%d): %v", len(due), workers+1, due)
	}
	for _, d := range due {
		if d.Role == recv {
			var w int
			fmt.Sscanf(d.ID.GroupID, "w%d", &w)
			if !d.At.Equal(at(w*1000 + batches - 1)) {
				t.Errorf("deadline of %s = %v; want its last setting", d.ID.GroupID, d.At)
			}
		}
	}
}

func testClose(t *testing.T, e *env) {
	k := key(recv, "g", 1, group.KindMeta, 0)
	e.apply(put(k, "v"))
	if err := e.s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close = %v; want ErrClosed", what, err)
		}
	}
	check("Apply", e.s.Apply([]group.Mutation{put(k, "w")}))
	_, _, err := e.s.Get(k)
	check("Get", err)
	for _, err := range e.s.Scan(store.RolePrefix(recv)) {
		check("Scan", err)
	}
	for _, err := range e.s.Generations(recv) {
		check("Generations", err)
	}
	for _, err := range e.s.DueBefore(store.MaxInstant()) {
		check("DueBefore", err)
	}
	_, _, err = e.s.NextDeadline()
	check("NextDeadline", err)
	check("second Close", e.s.Close())
}
