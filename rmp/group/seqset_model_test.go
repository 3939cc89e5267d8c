package group

import (
	"math/rand/v2"
	"testing"
)

// model is the obvious implementation SeqSet is checked against.
type model map[uint64]bool

// checkAgainst compares s with m over the numbers m knows and the probes.
func checkAgainst(t *testing.T, s *SeqSet, m model, probes []uint64) {
	t.Helper()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if s.Count() != uint64(len(m)) {
		t.Fatalf("Count = %d, model has %d", s.Count(), len(m))
	}
	for _, p := range probes {
		if s.Contains(p) != m[p] {
			t.Fatalf("Contains(%d) = %v, model %v", p, s.Contains(p), m[p])
		}
	}
	// Every range's members are in the model, and the range count matches the
	// model's runs: count numbers whose predecessor is absent.
	runs := 0
	for n := range m {
		if n == 0 || !m[n-1] {
			runs++
		}
	}
	if runs != s.RangeCount() {
		t.Fatalf("%d ranges, model has %d runs", s.RangeCount(), runs)
	}
}

// TestSeqSetModel drives SeqSet and a map with the same operations under
// four arrival patterns, checking Add's answer on every operation and the
// whole set at checkpoints. -short scales it down.
func TestSeqSetModel(t *testing.T) {
	ops := 1_000_000
	if testing.Short() {
		ops = 100_000
	}
	if invariants {
		ops = 20_000 // every op re-checks the whole set
	}
	patterns := []struct {
		name string
		gen  func(r *rand.Rand, i int) uint64
	}{
		{"in order", func(_ *rand.Rand, i int) uint64 { return uint64(i) }},
		{"window 1000", func(r *rand.Rand, i int) uint64 { return uint64(i) + r.Uint64N(1000) }},
		{"gaps", func(r *rand.Rand, i int) uint64 {
			n := uint64(i) * 2
			return n + r.Uint64N(3) // some numbers never come
		}},
		{"at maximum", func(r *rand.Rand, _ int) uint64 { return maxU - r.Uint64N(5000) }},
		{"sparse random", func(r *rand.Rand, _ int) uint64 { return r.Uint64N(1 << 20) }},
	}
	for pi, p := range patterns {
		t.Run(p.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(pi), 42))
			s, m := &SeqSet{}, model{}
			n := ops
			if p.name == "sparse random" {
				n = ops / 10 // the model check walks every number
			}
			var probes []uint64
			for i := range n {
				v := p.gen(r, i)
				isNew, err := s.Add(v)
				if err != nil {
					t.Fatal(err)
				}
				if isNew == m[v] {
					t.Fatalf("op %d: Add(%d) new=%v, model had it=%v", i, v, isNew, m[v])
				}
				m[v] = true
				if i%97 == 0 {
					probes = append(probes, v, v+1, v-1)
				}
				if i%(n/4) == n/4-1 {
					checkAgainst(t, s, m, probes)
				}
			}
			checkAgainst(t, s, m, probes)
			// The encoding round-trips the final set.
			b, _ := s.MarshalBinary()
			d, err := DecodeSeqSet(b, 0)
			if err != nil || !d.Equal(s) {
				t.Fatalf("round trip: %v", err)
			}
		})
	}
}

// TestSeqSetModelAddRange mixes Add and AddRange over a small space, where
// ranges merge and split most often.
func TestSeqSetModelAddRange(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	rounds := 2000
	if testing.Short() {
		rounds = 300
	}
	for round := range rounds {
		s, m := &SeqSet{}, model{}
		base := uint64(0)
		if round%3 == 0 {
			base = maxU - 200
		}
		for range 40 {
			a := base + r.Uint64N(200)
			if r.IntN(2) == 0 {
				b := a + r.Uint64N(min(20, maxU-a)+1) // never past the maximum
				var want uint64
				for v := a; ; v++ {
					if !m[v] {
						want++
						m[v] = true
					}
					if v == b {
						break
					}
				}
				got, err := s.AddRange(Range{a, b})
				if err != nil || got != want {
					t.Fatalf("AddRange(%d..%d) = %d,%v want %d", a, b, got, err, want)
				}
			} else {
				isNew, _ := s.Add(a)
				if isNew == m[a] {
					t.Fatalf("Add(%d) new=%v", a, isNew)
				}
				m[a] = true
			}
		}
		probes := make([]uint64, 0, 202)
		for v := base; v <= base+201 && v >= base; v++ {
			probes = append(probes, v)
		}
		checkAgainst(t, s, m, probes)
		if base != 0 {
			continue
		}
		// Gaps agree with the model.
		upTo := base + 199
		var missing []uint64
		for g := range s.Gaps(upTo) {
			for v := g.From; v <= g.To; v++ {
				missing = append(missing, v)
			}
		}
		k := 0
		for v := uint64(0); v <= upTo; v++ {
			if !m[v] {
				if k >= len(missing) || missing[k] != v {
					t.Fatalf("Gaps disagree at %d", v)
				}
				k++
			}
		}
		if k != len(missing) {
			t.Fatalf("Gaps yield %d numbers, model %d", len(missing), k)
		}
	}
}
