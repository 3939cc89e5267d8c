package sim

import "testing"

// BenchmarkRun measures one default world per op (memstore), reporting
// simulated messages and events per op.
func BenchmarkRun(b *testing.B) {
	benchRun(b, false)
}

// BenchmarkRunPebble is BenchmarkRun over pebble on MemFS.
func BenchmarkRunPebble(b *testing.B) {
	benchRun(b, true)
}

func benchRun(b *testing.B, pebble bool) {
	total := newResult()
	seed := uint64(0)
	for b.Loop() {
		seed++
		total.Add(Run(seed, Options{Pebble: pebble}))
	}
	if len(total.Violations) > 0 {
		b.Fatalf("violation: %s", total.Violations[0])
	}
	b.ReportMetric(float64(total.Submitted)/float64(b.N), "msgs/op")
	b.ReportMetric(float64(total.Events)/float64(b.N), "events/op")
}
