package group

import (
	"bytes"
	"testing"
)

// TestArenaValuesAreNeverRewritten keeps every value an Arena hands out and
// checks that later values, values that outgrow their estimate, values
// larger than a chunk and appends to a kept value leave them as they were.
func TestArenaValuesAreNeverRewritten(t *testing.T) {
	var a Arena
	var kept, want [][]byte
	keep := func(v, w []byte) {
		kept = append(kept, v)
		want = append(want, bytes.Clone(w))
	}
	for i := range 2000 {
		n := 1 + i%700
		if i%97 == 0 {
			n = arenaChunk + i // larger than a chunk
		}
		p := bytes.Repeat([]byte{byte(i)}, n)
		hint := n
		if i%5 == 0 {
			hint = n / 4 // outgrows its estimate
		}
		v := a.Keep(append(a.Buf(hint), p...))
		if len(v) != n || cap(v) != n {
			t.Fatalf("value %d: len %d cap %d; want %d", i, len(v), cap(v), n)
		}
		keep(v, p)
		if i%7 == 0 {
			_ = append(v, 0xEE, 0xEE) // must not reach the next value
		}
		keep(a.Copy(p[:n/2]), p[:n/2])
	}
	if a.Copy(nil) != nil {
		t.Fatal("Copy(nil) is not nil")
	}
	for i := range kept {
		if !bytes.Equal(kept[i], want[i]) {
			t.Fatalf("value %d was rewritten", i)
		}
	}
}

// TestArenaCarvesSmallValues checks that small values share chunks: what
// the arena is for.
func TestArenaCarvesSmallValues(t *testing.T) {
	var a Arena
	allocs := testing.AllocsPerRun(100, func() {
		for range 64 {
			a.Keep(append(a.Buf(100), make([]byte, 100)...))
		}
	})
	// 64 values of 100 bytes fill under half a chunk: at most one per run.
	if allocs > 1 {
		t.Fatalf("%.1f allocations per 64 small values; want at most 1", allocs)
	}
}
