package main

import (
	"os"
	"runtime"
)

// diskProcs is how many Go Ps the gateway keeps beyond its CPUs when the
// operator did not set GOMAXPROCS. A pebble store's WAL syncer, its flush
// and its compaction block in fdatasync and write; the runtime hands the P
// of a thread blocked in a syscall to other goroutines only once sysmon
// notices, and sysmon sleeps up to 10 ms while it finds nothing to retake
// (golang/go#18236). With two CPUs and a synced commit every millisecond
// or two, a P held through each ≈ 250 µs sync left the cores idle about a
// quarter of the time: GOMAXPROCS = CPUs + 2 moved 1.20 × the messages
// per second at 64 groups x 16 in flight at the same CPU per message
// (BENCHMARKS.md, #22).
const diskProcs = 2

// procsWithDisk is the GOMAXPROCS the gateway runs with: cur + diskProcs,
// unless the operator set GOMAXPROCS (env non-empty), which is kept.
func procsWithDisk(env string, cur int) (n int, changed bool) {
	if env != "" {
		return cur, false
	}
	return cur + diskProcs, true
}

// reserveDiskProcs applies procsWithDisk to this process.
func reserveDiskProcs() {
	if n, ok := procsWithDisk(os.Getenv("GOMAXPROCS"), runtime.GOMAXPROCS(0)); ok {
		runtime.GOMAXPROCS(n)
	}
}
