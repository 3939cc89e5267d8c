// Package storetest is the contract kit of store.Store, in the manner of
// testing/fstest: Run checks every method and invariant of an
// implementation, and RunHarness adds the durability checks across a reopen.
package storetest

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
)

// Harness tells RunHarness how to open the store under test.
type Harness struct {
	// Open returns an empty store. Run closes it (Close may report
	// ErrClosed when a case closed it already).
	Open func(t *testing.T) store.Store
	// Reopen, when set, closes s and opens a store over the same data.
	// Every case then reopens before its final checks, and a case checks
	// that everything applied survives.
	Reopen func(t *testing.T, s store.Store) store.Store
}

// Run checks the store.Store contract on stores returned by open.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	RunHarness(t, Harness{Open: open})
}

// RunHarness checks the store.Store contract against h.
func RunHarness(t *testing.T, h Harness) {
	cases := []struct {
		name string
		fn   func(t *testing.T, e *env)
	}{
		{"Empty", testEmpty},
		{"PutGetDelete", testPutGetDelete},
		{"Ordering", testOrdering},
		{"PrefixBoundaries", testPrefixBoundaries},
		{"Generations", testGenerations},
		{"Atomicity", testAtomicity},
		{"Limits", testLimits},
		{"DeleteGeneration", testDeleteGeneration},
		{"DeleteGenerationThenWrite", testDeleteGenerationThenWrite},
		{"Deadlines", testDeadlines},
		{"DeadlineReplace", testDeadlineReplace},
		{"DeadlineRange", testDeadlineRange},
		{"Missing", testMissing},
		{"NoAliasing", testNoAliasing},
		{"EarlyBreak", testEarlyBreak},
		{"InvalidReads", testInvalidReads},
		{"Model", testModel},
		{"ConcurrentApply", testConcurrentApply},
		{"Close", testClose},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &env{t: t, h: h, s: h.Open(t)}
			t.Cleanup(func() {
				if err := e.s.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
					t.Errorf("Close: %v", err)
				}
			})
			c.fn(t, e)
		})
	}
}

// env is one case's store, reopened through the harness when it can be.
type env struct {
	t *testing.T
	h Harness
	s store.Store
}

// reopen closes and reopens the store when the harness can.
func (e *env) reopen() {
	e.t.Helper()
	if e.h.Reopen != nil {
		e.s = e.h.Reopen(e.t, e.s)
	}
}

func (e *env) apply(batch ...group.Mutation) {
	e.t.Helper()
	if err := e.s.Apply(batch); err != nil {
		e.t.Fatalf("Apply: %v", err)
	}
}

func (e *env) get(k group.Key) ([]byte, bool) {
	e.t.Helper()
	v, ok, err := e.s.Get(k)
	if err != nil {
		e.t.Fatalf("Get(%v): %v", k, err)
	}
	return v, ok
}

// collect returns what seq yields, failing the test at its first error;
// call names the method for the message.
func collect[T any](e *env, seq iter.Seq2[T, error], call string) []T {
	e.t.Helper()
	var out []T
	for v, err := range seq {
		if err != nil {
			e.t.Fatalf("%s: %v", call, err)
		}
		out = append(out, v)
	}
	return out
}

func (e *env) scan(p store.Prefix) []store.Record {
	e.t.Helper()
	return collect(e, e.s.Scan(p), fmt.Sprintf("Scan(%+v)", p))
}

func (e *env) generations(role group.Role) []group.ID {
	e.t.Helper()
	return collect(e, e.s.Generations(role), fmt.Sprintf("Generations(%v)", role))
}

func (e *env) due(upTo time.Time) []store.Deadline {
	e.t.Helper()
	return collect(e, e.s.DueBefore(upTo), fmt.Sprintf("DueBefore(%v)", upTo))
}

func put(k group.Key, v string) group.Mutation {
	return group.Mutation{Op: group.OpPut, Key: k, Value: []byte(v)}
}

func del(k group.Key) group.Mutation { return group.Mutation{Op: group.OpDelete, Key: k} }

func delGen(role group.Role, id group.ID) group.Mutation {
	return group.Mutation{Op: group.OpDeleteGeneration, Key: genKey(role, id)}
}

func setDeadline(role group.Role, id group.ID, at time.Time) group.Mutation {
	return group.Mutation{Op: group.OpSetDeadline, Key: genKey(role, id), At: at}
}

func genKey(role group.Role, id group.ID) group.Key {
	return group.Key{Role: role, GroupID: id.GroupID, Generation: id.Generation}
}

func key(role group.Role, gid string, gen uint64, kind group.Kind, n uint64) group.Key {
	return group.Key{Role: role, GroupID: gid, Generation: gen, Kind: kind, Number: n}
}

// compareKeys is the store's key order: (Role, GroupID bytes, Generation,
// Kind, Number).
func compareKeys(a, b group.Key) int {
	return cmp.Or(
		cmp.Compare(a.Role, b.Role),
		strings.Compare(a.GroupID, b.GroupID),
		cmp.Compare(a.Generation, b.Generation),
		cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Number, b.Number),
	)
}

// compareDeadlines is DueBefore's order: (At, Role, GroupID, Generation).
func compareDeadlines(a, b store.Deadline) int {
	return cmp.Or(
		a.At.Compare(b.At),
		cmp.Compare(a.Role, b.Role),
		strings.Compare(a.ID.GroupID, b.ID.GroupID),
		cmp.Compare(a.ID.Generation, b.ID.Generation),
	)
}

func recordsEqual(a, b []store.Record) bool {
	return slices.EqualFunc(a, b, func(x, y store.Record) bool {
		return x.Key == y.Key && string(x.Value) == string(y.Value)
	})
}

func deadlinesEqual(a, b []store.Deadline) bool {
	return slices.EqualFunc(a, b, func(x, y store.Deadline) bool {
		return x.At.Equal(y.At) && x.At.Location() == time.UTC && x.Role == y.Role && x.ID == y.ID
	})
}
