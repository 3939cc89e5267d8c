package soap_test

import (
	"testing"

	"github.com/wsrkit/wsrkit/internal/benchkit"
	"github.com/wsrkit/wsrkit/soap"
)

// BenchmarkReceiverParse is the receiver's parse of the end-to-end
// benchmark's message (rmp's Inbound: Parse, then WithoutWSRM for the
// payload), with and without SkipBody (BENCHMARKS.md, #22).
func BenchmarkReceiverParse(b *testing.B) {
	data := benchkit.Envelope(b, "mid:bench@x", 41)
	for _, bc := range []struct {
		name string
		skip bool
	}{{"SkipBody=false", false}, {"SkipBody=true", true}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				env, err := soap.Parse(data, soap.ParseOptions{SkipBody: bc.skip})
				if err != nil || env.Request == nil {
					b.Fatal(err)
				}
				if p, err := env.WithoutWSRM(); err != nil || len(p) == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}
