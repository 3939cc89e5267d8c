package group

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkSliceAppendCeiling is the floor the in-order Add is measured
// against: appending a uint64 to a slice with spare capacity.
func BenchmarkSliceAppendCeiling(b *testing.B) {
	buf := make([]uint64, 0, 1<<16)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if len(buf) == cap(buf) {
			buf = buf[:0]
		}
		buf = append(buf, uint64(i))
	}
}

// BenchmarkAddInOrder: the usual path, extending the last range. Goal: ≤ 2×
// the slice append, 0 allocs, one range whatever the count.
func BenchmarkAddInOrder(b *testing.B) {
	s := &SeqSet{}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Add(uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
	if s.RangeCount() != 1 {
		b.Fatalf("%d ranges", s.RangeCount())
	}
	b.ReportMetric(float64(cap(s.ranges))*16, "set-bytes")
}

// BenchmarkAddWindow1000: numbers i + U[0,1000), each added once.
func BenchmarkAddWindow1000(b *testing.B) {
	const n = 1 << 16
	r := rand.New(rand.NewPCG(1, 2))
	// Number i arrives at position i + U[0,1000).
	keyed := make([][2]uint64, n)
	for i := range keyed {
		keyed[i] = [2]uint64{uint64(i) + r.Uint64N(1000), uint64(i)}
	}
	slices.SortFunc(keyed, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	order := make([]uint64, n)
	for i, k := range keyed {
		order[i] = k[1]
	}
	s := &SeqSet{}
	base := uint64(0)
	peak := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := i % n
		if k == 0 && i > 0 {
			base += n
		}
		if _, err := s.Add(base + order[k]); err != nil {
			b.Fatal(err)
		}
		peak = max(peak, s.RangeCount())
	}
	b.ReportMetric(float64(peak), "peak-ranges")
}

// BenchmarkContains over a set of 10,000 ranges (1 % loss).
func BenchmarkContains(b *testing.B) {
	s := &SeqSet{}
	for i := range uint64(1_000_000) {
		if i%100 != 50 {
			s.Add(i) //nolint:errcheck // no limit
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	probes := make([]uint64, 4096)
	for i := range probes {
		probes[i] = r.Uint64N(1_000_000)
	}
	b.ReportAllocs()
	hits := 0
	for i := 0; b.Loop(); i++ {
		if s.Contains(probes[i&4095]) {
			hits++
		}
	}
	if hits == 0 {
		b.Fatal("no hits")
	}
}

func set1000(b *testing.B) *SeqSet {
	s := &SeqSet{}
	for i := range uint64(1000) {
		if _, err := s.AddRange(Range{i * 1000, i*1000 + 900}); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkEncode1000Ranges: a set of 1000 ranges into a reused buffer.
func BenchmarkEncode1000Ranges(b *testing.B) {
	s := set1000(b)
	buf, _ := s.AppendBinary(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = s.AppendBinary(buf[:0])
	}
}

// BenchmarkDecode1000Ranges: the same set decoded into a new set.
func BenchmarkDecode1000Ranges(b *testing.B) {
	buf, _ := set1000(b).MarshalBinary()
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeSeqSet(buf, 0); err != nil {
			b.Fatal(err)
		}
	}
}
