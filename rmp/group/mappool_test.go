package group

import (
	"reflect"
	"testing"
)

func sameMap(a, b map[uint64]int) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// An emptied small map goes back to the pool and serves the next owner; a
// map that held more than 8 entries is dropped, and so is one past the 64
// the pool keeps.
func TestMapPoolReusesSmallMaps(t *testing.T) {
	var p MapPool[int]
	var a map[uint64]int
	var big bool
	p.Put(&a, &big, 1, 10)
	p.Put(&a, &big, 2, 20)
	if len(a) != 2 || a[1] != 10 || big {
		t.Fatalf("after two puts: %v big=%v", a, big)
	}
	used := a
	p.Delete(&a, &big, 1)
	if a == nil || len(p.free) != 0 {
		t.Fatalf("a map with an entry left went away: %v, %d kept", a, len(p.free))
	}
	p.Delete(&a, &big, 2)
	if a != nil || len(p.free) != 1 {
		t.Fatalf("emptied: %v, %d kept", a, len(p.free))
	}
	var b map[uint64]int
	var bBig bool
	p.Put(&b, &bBig, 7, 70)
	if !sameMap(b, used) || len(b) != 1 || len(p.free) != 0 {
		t.Fatalf("the next owner did not reuse the emptied map")
	}

	for n := range uint64(9) {
		p.Put(&b, &bBig, n, int(n))
	}
	if !bBig {
		t.Fatalf("nine entries did not mark the map big")
	}
	for n := range uint64(9) {
		p.Delete(&b, &bBig, n)
	}
	if b != nil || bBig || len(p.free) != 0 {
		t.Fatalf("a big map was kept: %v big=%v, %d kept", b, bBig, len(p.free))
	}

	p.Delete(&b, &bBig, 3) // deleting from no map is a no-op
	ms := make([]map[uint64]int, 65)
	bigs := make([]bool, 65)
	for i := range ms {
		p.Put(&ms[i], &bigs[i], 0, i)
	}
	for i := range ms {
		p.Delete(&ms[i], &bigs[i], 0)
	}
	if len(p.free) != 64 {
		t.Fatalf("pool keeps %d maps, want 64", len(p.free))
	}
}
