package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const rawSample = `peer-bench: nproc=2
BenchmarkEndToEndHTTP/store=pebble/groups=1-2 	 100	 1000 ns/op	 900 cpu-µs/msg	 1000 msg/s	 800 p50-µs
BenchmarkRabbitMQ/queue=classic/groups=1/window=1 	100	1 ns/op	2000 msg/s	500 p50-µs	9 p99-µs	400 cpu-µs/msg
BenchmarkRabbitMQ/queue=quorum/groups=1/window=1 	100	1 ns/op	500 msg/s	500 p50-µs	9 p99-µs	600 cpu-µs/msg
BenchmarkEndToEndHTTP/store=pebble/groups=1-2 	 100	 1000 ns/op	 900 cpu-µs/msg	 3000 msg/s	 1200 p50-µs
BenchmarkRabbitMQ/queue=classic/groups=1/window=1 	100	1 ns/op	1000 msg/s	500 p50-µs	9 p99-µs	400 cpu-µs/msg
BenchmarkRabbitMQ/queue=quorum/groups=1/window=1 	100	1 ns/op	1000 msg/s	500 p50-µs	9 p99-µs	600 cpu-µs/msg
peer-bench-syncs: system=wsrkit shape=g1w1 short=10/100 long=310/200 per-msg=3.000
`

// The same-round ratios, their median and the verdicts come from the
// rounds as given, not from medians of each side.
func TestReportRatiosPerRound(t *testing.T) {
	r, err := parse(strings.NewReader(rawSample))
	if err != nil {
		t.Fatal(err)
	}
	got := r.section()
	for _, want := range []string{
		"| 1 in flight, 1 group | 2,000 · 900 · 1,000 | 1,500 · 400 · 500 | 750 · 600 · 500 | **1.75** | **2.50** |",
		"| wsrkit / quorum msg/s, 1 in flight, 1 group | 2.50 | 2.00, 3.00 | ≥ 1.0: met |",
		"| wsrkit p50, 1 in flight, 1 group (µs) | 1,000 | 800, 1,200 | ≤ 1,000 µs: met |",
		"| 1 in flight, 1 group | 3.00 | – | – |",
		"nproc: `2`",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("section lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "64 groups |") && !strings.Contains(got, "| 1 in flight, 64 groups | – | – | – |") {
		t.Errorf("a shape that did not run shows figures:\n%s", got)
	}
}

func TestSpliceReplacesOnlyTheBlock(t *testing.T) {
	doc, err := splice("# B\n\nhand\n", "one\n")
	if err != nil {
		t.Fatal(err)
	}
	doc, err = splice(doc+"after\n", "two\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# B\n\nhand\n\n" + beginMarker + "\ntwo\n" + endMarker + "\nafter\n"
	if doc != want {
		t.Fatalf("got %q, want %q", doc, want)
	}
	if _, err := splice(endMarker+"\n"+beginMarker+"\n", "x"); err == nil {
		t.Fatal("markers out of order accepted")
	}
}

func TestSyncCallsSumsFsyncAndFdatasync(t *testing.T) {
	const out = `% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 99.75    0.112228         111      1003           fsync
  0.25    0.000282         282         7         2 fdatasync
  0.01    0.000001           1         5           write
------ ----------- ----------- --------- --------- ----------------
100.00    0.112510         112      1015         2 total
`
	m, err := straceCounts(strings.NewReader(out))
	if n := syncsOf(m); err != nil || n != 1010 {
		t.Fatalf("syncsOf = %d, %v; want 1010", syncsOf(m), err)
	}
}

func TestLoopbackOnly(t *testing.T) {
	for url, ok := range map[string]bool{
		"amqp://guest:guest@127.0.0.1:5673/": true,
		"amqp://guest:guest@localhost:5673/": true,
		"amqp://guest:guest@10.0.0.1:5672/":  false,
		"amqp://guest:guest@example.com/":    false,
	} {
		if err := loopbackOnly(url); (err == nil) != ok {
			t.Errorf("loopbackOnly(%q) = %v", url, err)
		}
	}
}

func TestCallsPerKindSortsAndSums(t *testing.T) {
	const out = `% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 40.00    0.400000          10     40000     25000 read
 20.00    0.200000          10     20000           write
 10.00    0.100000          10     10000     10000 recvfrom
  9.00    0.090000          10      9000           nanosleep
  1.00    0.010000          10      1000         3 futex
  1.00    0.010000          10      2000           fdatasync
  0.50    0.005000          10       500           pread64
------ ----------- ----------- --------- --------- ----------------
100.00    1.000000          10     82500     35003 total
`
	m, err := straceCounts(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	got := callsPerKind(m)
	want := map[string]float64{"reads": 50000, "empty": 35000, "writes": 20000, "waits": 10000, "syncs": 2000, "other": 500, "total": 82500}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if n := syncsOf(m); n != 2000 {
		t.Errorf("syncsOf = %d, want 2000", n)
	}
}

func TestReportWritesTheCallsTable(t *testing.T) {
	in := "peer-bench-calls: system=wsrkit shape=g64w16 reads=4.88 empty=3.86 writes=2.37 waits=1.70 syncs=0.23 other=0.30 total=9.48\n" +
		"peer-bench-calls: system=quorum shape=g64w16 reads=1.42 empty=0.47 writes=3.17 waits=2.05 syncs=0.01 other=0.20 total=6.85\n"
	r, err := parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	sec := r.section()
	for _, want := range []string{
		"### System calls per message, up to 16 in flight, 64 groups (strace -f -c)",
		"| writes | 2.37 | – | 3.17 |",
		"| of them, nothing to read (EAGAIN, or a peek) | 3.86 | – | 0.47 |",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("section lacks %q:\n%s", want, sec)
		}
	}
	if _, err := parse(strings.NewReader("peer-bench-calls: system=wsrkit shape=g64w16 reads=x\n")); err == nil {
		t.Error("a calls line without its counts parsed")
	}
}

func writeStrace(t *testing.T, calls map[string]int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("% time     seconds  usecs/call     calls    errors syscall\n------ ----------- ----------- --------- --------- ----------------\n")
	for _, name := range []string{"write", "pwrite64", "fdatasync"} {
		if n, ok := calls[name]; ok {
			fmt.Fprintf(&b, "  1.00    0.010000          10 %9d           %s\n", n, name)
		}
	}
	p := filepath.Join(t.TempDir(), "s.strace")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A short run that made more calls of a kind than the long one (a broker's
// background work fell into it) gives no count but a retryable error, where
// long − short would print a negative count per message.
func TestCountsRefuseAShortRunAboveTheLong(t *testing.T) {
	short := writeStrace(t, map[string]int{"write": 100, "pwrite64": 9000, "fdatasync": 50})
	long := writeStrace(t, map[string]int{"write": 900, "pwrite64": 300, "fdatasync": 40})
	args := []string{"-system", "quorum", "-shape", "g64w16", "-short", "100", "-long", "500", short, long}
	for name, run := range map[string]func([]string) error{"syncs": syncsMain, "calls": callsMain} {
		var again *shortExceedsLong
		if err := run(args); !errors.As(err, &again) {
			t.Errorf("%s: err = %v, want *shortExceedsLong", name, err)
		}
	}
	// Equal runs are a count (zero per message), not a refusal.
	ok := []string{"-system", "quorum", "-shape", "g64w16", "-short", "100", "-long", "500", long, long}
	if err := callsMain(ok); err != nil {
		t.Errorf("calls on equal runs: %v", err)
	}
}
