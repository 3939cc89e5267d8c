package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Two rounds of a reduced benchmark output.
const sample = `wsrkit-bench: go=go1.26.8 linux/amd64
goos: linux
goarch: amd64
pkg: github.com/wsrkit/wsrkit/rmp
cpu: Intel(R) Xeon(R) Processor
BenchmarkEndToEndHTTP/store=pebble/groups=64-2   	  300	  535219 ns/op	  668.0 cpu-µs/msg	  1800 msg/s	  33326 p50-µs
BenchmarkCeilingPipelineHTTP/groups=64-2         	  300	  256392 ns/op	  417.4 cpu-µs/msg	  4000 msg/s
BenchmarkEndToEndStreamHTTP/store=pebble/groups=64-2   	  300	  535219 ns/op	  500.0 cpu-µs/msg	  3200 msg/s
BenchmarkIdleGroupMemory-2                       	    1	16122679680 ns/op	      1837 recv-B/group	      1005 send-B/group
BenchmarkRestart100kGroups-2                     	    1	 646337127 ns/op	         0.6463 s/restart
PASS
BenchmarkEndToEndHTTP/store=pebble/groups=64-2   	  300	  535219 ns/op	  668.0 cpu-µs/msg	  3100 msg/s	  30000 p50-µs
BenchmarkCeilingPipelineHTTP/groups=64-2         	  300	  256392 ns/op	  417.4 cpu-µs/msg	  4000 msg/s
`

func TestParseRoundsAndMedians(t *testing.T) {
	r, err := parse(strings.NewReader(sample))
	require.NoError(t, err)
	require.Len(t, r.results["BenchmarkEndToEndHTTP/store=pebble/groups=64"], 2)
	m, ok := r.median("BenchmarkEndToEndHTTP/store=pebble/groups=64", "msg/s")
	require.True(t, ok)
	require.Equal(t, 2450.0, m)
	require.Equal(t, []float64{0.45, 0.775}, r.ratios(
		"BenchmarkEndToEndHTTP/store=pebble/groups=64", "msg/s", "BenchmarkCeilingPipelineHTTP/groups=64", "msg/s"))
	require.Equal(t, "Intel(R) Xeon(R) Processor", r.info["cpu"])
	require.Equal(t, "go1.26.8 linux/amd64", r.info["go"])
	_, ok = r.median("BenchmarkEndToEndHTTP/store=mem/groups=64", "msg/s")
	require.False(t, ok)
}

func TestParseRejectsMalformedValues(t *testing.T) {
	_, err := parse(strings.NewReader("BenchmarkX-2 10 abc ns/op\n"))
	require.ErrorContains(t, err, `line 1: benchmark BenchmarkX: value "abc"`)
	_, err = parse(strings.NewReader("BenchmarkX-2 10 5 ns/op 7\n"))
	require.ErrorContains(t, err, "odd value/unit fields")
}

func TestMarkdownGoalsAndRatios(t *testing.T) {
	r, err := parse(strings.NewReader(sample))
	require.NoError(t, err)
	md := markdown(r, "scripts/bench.sh")
	// Median of the same-round ratios 0.45 and 0.775, against the 0.75 goal.
	require.Contains(t, md, "| end to end (pebble) / ceiling pipeline, msg/s, groups=64 | **0.61** | 0.45, 0.78 | ≥ 0.75: **not met** (0.82× of the goal) |")
	require.Contains(t, md, "| 1,837 B | ≤ 512 B: **not met** (3.59× the goal) |")
	require.Contains(t, md, "| 1,005 B | ≤ 512 B: **not met** (1.96× the goal) |", "the sending side has the same goal")
	require.Contains(t, md, "| 0.65 s | ≤ 2 s: met |")
	require.Contains(t, md, "| pebble, 64 | 2,450 | 31,663 |")
	require.Contains(t, md, "| raw net/http round trip, 1 | – |")
	require.Contains(t, md, "| receiver (pebble) / ceiling pipeline, msg/s, groups=8 | – | – | not measured |")
	// One round of the streaming run: its ratio, goal and CPU share.
	require.Contains(t, md, "| end to end, streaming producers (pebble) / ceiling pipeline, msg/s, groups=64 | **0.80** | 0.80 | ≥ 0.75: met |")
	require.Contains(t, md, "| ceiling pipeline CPU / end to end, streaming (pebble) CPU per message, groups=64 | **0.83** |")
	require.Contains(t, md, "### Sender Node → receiver Node, streaming producers (`BenchmarkEndToEndStreamHTTP`)")
}

func TestSpliceKeepsOtherSections(t *testing.T) {
	doc, err := splice("# Benchmarks\n\n## soap\nkept\n", "new 1\n")
	require.NoError(t, err)
	require.Equal(t, "# Benchmarks\n\n## soap\nkept\n\n"+beginMarker+"\nnew 1\n"+endMarker+"\n", doc)
	doc, err = splice(doc+"## after\nkept too\n", "new 2\n")
	require.NoError(t, err)
	require.Equal(t, "# Benchmarks\n\n## soap\nkept\n\n"+beginMarker+"\nnew 2\n"+endMarker+"\n## after\nkept too\n", doc)
	_, err = splice(endMarker+"\n"+beginMarker+"\n", "x")
	require.ErrorContains(t, err, "unpaired")
}

func TestDoWritesTheFile(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "raw.txt"), filepath.Join(dir, "B.md")
	require.NoError(t, os.WriteFile(in, []byte(sample), 0o644))
	require.NoError(t, os.WriteFile(out, []byte("# Benchmarks\n\n## store\nold text\n"), 0o644))
	require.NoError(t, do(in, out, "scripts/bench.sh"))
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(got), "# Benchmarks\n\n## store\nold text\n\n"+beginMarker))
	require.Contains(t, string(got), "2 interleaved round(s)")
	require.ErrorContains(t, do(filepath.Join(dir, "missing"), out, "x"), "no such file")
	require.NoError(t, os.WriteFile(in, []byte("PASS\n"), 0o644))
	require.ErrorContains(t, do(in, out, "x"), "no benchmark results")
}
