package group

import (
	"cmp"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// A Listing holds what a sorted slice of the same operations holds, in
// the same order, with the same ranks, through enough insertions and
// removals to split and merge its blocks many times.
func TestListingMatchesASortedSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	l := NewListing(cmp.Compare[int])
	type entry struct {
		ref int
		Summary
	}
	var model []entry
	slots := map[int]int32{}
	check := func(step int) {
		t.Helper()
		if l.Len() != len(model) {
			t.Fatalf("step %d: Len %d, want %d", step, l.Len(), len(model))
		}
		from := 0
		if len(model) > 0 {
			from = rng.IntN(len(model) + 1)
		}
		i := from
		for pos, e := range l.All(from) {
			if pos != i || i >= len(model) || e.Ref != model[i].ref || *e.Sum != model[i].Summary {
				t.Fatalf("step %d: All(%d) at %d: %v %v, want position %d of %d", step, from, pos, e.Ref, *e.Sum, i, len(model))
			}
			i++
		}
		if i != len(model) {
			t.Fatalf("step %d: All(%d) stopped at %d of %d", step, from, i, len(model))
		}
		x := rng.IntN(3000) - 10
		want, _ := slices.BinarySearchFunc(model, x, func(e entry, x int) int { return cmp.Compare(e.ref, x) })
		if want < len(model) && model[want].ref == x {
			want++
		}
		if got := l.Rank(func(r int) int { return cmp.Compare(r, x) }); got != want {
			t.Fatalf("step %d: Rank(%d) = %d, want %d", step, x, got, want)
		}
	}
	for step := range 20000 {
		x := rng.IntN(2500)
		i, found := slices.BinarySearchFunc(model, x, func(e entry, x int) int { return cmp.Compare(e.ref, x) })
		// Grow to about 2,000 entries, then shrink, then grow again.
		grow := (step/5000)%2 == 0
		if rng.IntN(10) < 7 == grow {
			s := Summary{Held: int32(step)}
			if found { // by its slot, or Add again
				if step%2 == 0 {
					l.Update(slots[x], s)
				} else if slot := l.Add(x, s); slot != slots[x] {
					t.Fatalf("step %d: Add(%d) again: slot %d, was %d", step, x, slot, slots[x])
				}
				model[i].Summary = s
			} else {
				slots[x] = l.Add(x, s)
				model = slices.Insert(model, i, entry{ref: x, Summary: s})
			}
		} else if l.Delete(x) != found {
			t.Fatalf("step %d: Delete(%d) = %v, want %v", step, x, !found, found)
		} else if found {
			delete(slots, x)
			model = slices.Delete(model, i, i+1)
		}
		if step%37 == 0 {
			check(step)
		}
	}
	check(-1)
	for _, blk := range l.blocks {
		if blk.len() == 0 || blk.len() > listBlock || len(blk.slots) != blk.len() {
			t.Fatalf("a block of %d entries, %d slots", blk.len(), len(blk.slots))
		}
	}
}

func TestHasGap(t *testing.T) {
	for _, c := range []struct {
		rs  []Range
		gap bool
	}{{nil, false}, {[]Range{{0, 5}}, false}, {[]Range{{1, 5}}, true}, {[]Range{{0, 1}, {3, 3}}, true}} {
		if HasGap(c.rs) != c.gap {
			t.Errorf("HasGap(%v) = %v", c.rs, !c.gap)
		}
	}
}

// BenchmarkListingBytesPerGroup reports the heap a Listing of 100,000
// groups takes per group, its refs as large as the receiver's (a
// pointer), for ids that only grow and for ids in random order (#21).
func BenchmarkListingBytesPerGroup(b *testing.B) {
	const n = 100_000
	refs := make([]*int, n)
	for i := range refs {
		refs[i] = new(int)
		*refs[i] = i
	}
	byValue := func(a, b *int) int { return cmp.Compare(*a, *b) }
	for _, order := range []string{"growing", "random"} {
		b.Run(order, func(b *testing.B) {
			perm := rand.New(rand.NewPCG(3, 4)).Perm(n)
			var bytes float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				l := NewListing(byValue)
				for i := range n {
					if order == "random" {
						i = perm[i]
					}
					l.Add(refs[i], Summary{Held: int32(i)})
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				bytes = float64(after.HeapAlloc-before.HeapAlloc) / n
				runtime.KeepAlive(l)
			}
			b.ReportMetric(bytes, "B/group")
		})
	}
}
