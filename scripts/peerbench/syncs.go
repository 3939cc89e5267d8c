package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// syncCalls sums the fsync and fdatasync calls of an `strace -c` summary.
func syncCalls(r io.Reader) (int64, error) {
	var n int64
	found := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// % time, seconds, usecs/call, calls, [errors], syscall
		if len(f) < 5 {
			continue
		}
		if name := f[len(f)-1]; name != "fsync" && name != "fdatasync" {
			continue
		}
		calls, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("strace line %q: %w", sc.Text(), err)
		}
		n += calls
		found = true
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !found {
		// strace prints no row for a call never made.
		return 0, nil
	}
	return n, nil
}

func syncFile(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return syncCalls(f)
}

// syncsMain prints the syncs per message of two runs of one shape that
// differ only in their message count, so set-up and shut-down cancel.
func syncsMain(args []string) error {
	fs := flag.NewFlagSet("syncs", flag.ContinueOnError)
	system := fs.String("system", "", "wsrkit, classic or quorum")
	shapeKey := fs.String("shape", "", "g1w1, g64w1, g1w16 or g64w16")
	short := fs.Int64("short", 0, "messages of the short run")
	long := fs.Int64("long", 0, "messages of the long run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 || *long <= *short || *system == "" || *shapeKey == "" {
		return fmt.Errorf("usage: syncs -system S -shape K -short N -long M short.strace long.strace")
	}
	a, err := syncFile(fs.Arg(0))
	if err != nil {
		return err
	}
	b, err := syncFile(fs.Arg(1))
	if err != nil {
		return err
	}
	fmt.Printf("peer-bench-syncs: system=%s shape=%s short=%d/%d long=%d/%d per-msg=%.3f\n",
		*system, *shapeKey, a, *short, b, *long, float64(b-a)/float64(*long-*short))
	return nil
}
