package storetest

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
)

// epoch is the base of the instants used by the cases.
var epoch = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// at returns epoch + s seconds + s nanoseconds, in a non-UTC zone, so that
// stores must convert to UTC and keep nanoseconds.
func at(s int) time.Time {
	return epoch.Add(time.Duration(s)*time.Second + time.Duration(s)).In(time.FixedZone("X", 5*3600))
}

func yearOne() time.Time  { return time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC) }
func zeroTime() time.Time { return time.Time{} }

func dl(t time.Time, role group.Role, gid string, gen uint64) store.Deadline {
	return store.Deadline{At: t.UTC(), Role: role, ID: group.ID{GroupID: gid, Generation: gen}}
}

// generationFixture writes, for groupIds that extend each other, two
// generations in two roles, each with records and a deadline.
func generationFixture(e *env) {
	var muts []group.Mutation
	i := 0
	for _, role := range []group.Role{recv, send} {
		for _, gid := range []string{"g", "g\x00", "g\x00x", "gx", "f\xff"} {
			for _, gen := range []uint64{1, 2} {
				i++
				id := group.ID{GroupID: gid, Generation: gen}
				muts = append(muts,
					put(key(role, gid, gen, group.KindMeta, 0), "meta"),
					put(key(role, gid, gen, group.KindDelivery, 0), "d0"),
					put(key(role, gid, gen, group.KindDelivery, math.MaxUint64), "dmax"),
					put(key(role, gid, gen, 0xFF, math.MaxUint64), "last kind"),
					setDeadline(role, id, at(i)))
			}
		}
	}
	e.apply(muts...)
}

func testDeleteGeneration(t *testing.T, e *env) {
	generationFixture(e)
	before := e.scan(store.RolePrefix(recv))
	beforeDue := e.due(store.MaxInstant())
	target := group.ID{GroupID: "g", Generation: 1}
	e.apply(delGen(recv, target))
	e.reopen()
	var want []store.Record
	for _, r := range before {
		if r.Key.GroupID != "g" || r.Key.Generation != 1 {
			want = append(want, r)
		}
	}
	if got := e.scan(store.RolePrefix(recv)); !recordsEqual(got, want) {
		t.Errorf("after OpDeleteGeneration(g/1): %d records, want %d (neighbours must stay)", len(got), len(want))
	}
	var wantDue []store.Deadline
	for _, d := range beforeDue {
		if d.Role != recv || d.ID != target {
			wantDue = append(wantDue, d)
		}
	}
	if got := e.due(store.MaxInstant()); !deadlinesEqual(got, wantDue) || len(got) != len(beforeDue)-1 {
		t.Errorf("after OpDeleteGeneration(g/1): deadlines %v, want %v", got, wantDue)
	}
	if got := e.scan(store.GroupPrefix(send, "g")); len(got) != 8 {
		t.Errorf("the other role's g lost records: %d, want 8", len(got))
	}
	if got := e.generations(recv); slices.Contains(got, target) || len(got) != 9 {
		t.Errorf("Generations after delete = %v", got)
	}
}

func testDeleteGenerationThenWrite(t *testing.T, e *env) {
	id := group.ID{GroupID: "g", Generation: 4}
	e.apply(put(key(recv, "g", 4, group.KindMeta, 0), "old"), put(key(recv, "g", 4, group.KindHeld, 9), "held"),
		setDeadline(recv, id, at(1)))
	// Within one batch, mutations apply in order: a put and a deadline after
	// the generation's deletion survive it.
	e.apply(delGen(recv, id), put(key(recv, "g", 4, group.KindMeta, 0), "new"), setDeadline(recv, id, at(2)))
	e.reopen()
	got := e.scan(store.GenerationPrefix(recv, id))
	want := []store.Record{{Key: key(recv, "g", 4, group.KindMeta, 0), Value: []byte("new")}}
	if !recordsEqual(got, want) {
		t.Errorf("records = %v; want %v", got, want)
	}
	if d := e.due(store.MaxInstant()); !deadlinesEqual(d, []store.Deadline{dl(at(2), recv, "g", 4)}) {
		t.Errorf("deadlines = %v; want one at %v", d, at(2).UTC())
	}
	// And the reverse: a deadline set, then the generation deleted, in one batch.
	e.apply(setDeadline(recv, id, at(3)), delGen(recv, id))
	if d := e.due(store.MaxInstant()); len(d) != 0 {
		t.Errorf("deadlines after set+delete = %v; want none", d)
	}
}

func testDeadlines(t *testing.T, e *env) {
	// Out of order; ties on At broken by (role, groupId, generation).
	e.apply(
		setDeadline(send, group.ID{GroupID: "b", Generation: 1}, at(5)),
		setDeadline(recv, group.ID{GroupID: "b", Generation: 2}, at(5)),
		setDeadline(recv, group.ID{GroupID: "b", Generation: 1}, at(5)),
		setDeadline(recv, group.ID{GroupID: "a\x00", Generation: 1}, at(5)),
		setDeadline(recv, group.ID{GroupID: "a", Generation: 1}, at(5)),
		setDeadline(outb, group.ID{GroupID: "z", Generation: 1}, at(-3)),
		setDeadline(recv, group.ID{GroupID: "late", Generation: 1}, at(100000)),
		setDeadline(recv, group.ID{GroupID: "early", Generation: 7}, epoch.AddDate(-100, 0, 0)),
	)
	e.reopen()
	want := []store.Deadline{
		dl(epoch.AddDate(-100, 0, 0), recv, "early", 7),
		dl(at(-3), outb, "z", 1),
		dl(at(5), recv, "a", 1),
		dl(at(5), recv, "a\x00", 1),
		dl(at(5), recv, "b", 1),
		dl(at(5), recv, "b", 2),
		dl(at(5), send, "b", 1),
		dl(at(100000), recv, "late", 1),
	}
	if !slices.IsSortedFunc(want, compareDeadlines) {
		t.Fatalf("fixture not sorted")
	}
	if got := e.due(store.MaxInstant()); !deadlinesEqual(got, want) {
		t.Errorf("DueBefore(max) = %v\nwant %v", got, want)
	}
	next, ok, err := e.s.NextDeadline()
	if err != nil || !ok || !next.Equal(want[0].At) || next.Location() != time.UTC {
		t.Errorf("NextDeadline = %v, %v, %v; want %v UTC", next, ok, err, want[0].At)
	}
	// Deadlines are not records.
	if got := e.scan(store.RolePrefix(recv)); len(got) != 0 {
		t.Errorf("Scan sees deadline entries: %v", got)
	}
}

func testDeadlineReplace(t *testing.T, e *env) {
	a := group.ID{GroupID: "a", Generation: 1}
	b := group.ID{GroupID: "b", Generation: 1}
	e.apply(setDeadline(recv, a, at(10)), setDeadline(recv, b, at(20)))
	e.apply(setDeadline(recv, a, at(30))) // later
	e.apply(setDeadline(recv, b, at(1)))  // earlier
	e.reopen()
	want := []store.Deadline{dl(at(1), recv, "b", 1), dl(at(30), recv, "a", 1)}
	if got := e.due(store.MaxInstant()); !deadlinesEqual(got, want) {
		t.Errorf("after replacement: %v; want %v", got, want)
	}
	// Several settings in one batch: the last one wins, one entry remains.
	e.apply(setDeadline(recv, a, at(2)), setDeadline(recv, a, at(3)), setDeadline(recv, a, at(40)),
		setDeadline(recv, a, at(40)))
	want = []store.Deadline{dl(at(1), recv, "b", 1), dl(at(40), recv, "a", 1)}
	if got := e.due(store.MaxInstant()); !deadlinesEqual(got, want) {
		t.Errorf("after a batch of settings: %v; want %v", got, want)
	}
	// The zero At clears.
	e.apply(setDeadline(recv, b, time.Time{}))
	e.reopen()
	want = want[1:]
	if got := e.due(store.MaxInstant()); !deadlinesEqual(got, want) {
		t.Errorf("after clearing: %v; want %v", got, want)
	}
	// Setting a deadline touches no record.
	if got := e.scan(store.RolePrefix(recv)); len(got) != 0 {
		t.Errorf("records after deadline changes: %v", got)
	}
}

func testDeadlineRange(t *testing.T, e *env) {
	for i := 1; i <= 5; i++ {
		e.apply(setDeadline(recv, group.ID{GroupID: "g", Generation: uint64(i)}, at(i*10)))
	}
	e.reopen()
	// upTo is inclusive: an entry exactly at upTo is due, one nanosecond
	// later is not.
	got := e.due(at(30))
	if len(got) != 3 || !got[2].At.Equal(at(30)) {
		t.Errorf("DueBefore(at 30) = %v; want 3 entries up to %v", got, at(30).UTC())
	}
	if got := e.due(at(30).Add(-time.Nanosecond)); len(got) != 2 {
		t.Errorf("DueBefore(at 30 - 1ns) = %v; want 2 entries", got)
	}
	if got := e.due(at(0)); len(got) != 0 {
		t.Errorf("DueBefore(before all) = %v", got)
	}
	if got := e.due(yearOne()); len(got) != 0 {
		t.Errorf("DueBefore(year 1) = %v", got)
	}
	if got := e.due(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)); len(got) != 5 {
		t.Errorf("DueBefore(year 9999) = %d entries; want 5", len(got))
	}
	// Extremes of the nanosecond range round-trip.
	lo, hi := time.Unix(0, math.MinInt64).UTC(), store.MaxInstant()
	e.apply(setDeadline(send, group.ID{GroupID: "lo"}, lo), setDeadline(send, group.ID{GroupID: "hi"}, hi))
	all := e.due(store.MaxInstant())
	if len(all) != 7 || !all[0].At.Equal(lo) || !all[6].At.Equal(hi) {
		t.Errorf("extreme instants: %v", all)
	}
}
