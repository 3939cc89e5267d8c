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

// callCount is one row of an `strace -c` summary.
type callCount struct{ calls, errors int64 }

// straceCounts reads an `strace -c` summary: calls and errors by system
// call. strace prints no row for a call never made.
func straceCounts(r io.Reader) (map[string]callCount, error) {
	out := map[string]callCount{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// % time, seconds, usecs/call, calls, [errors], syscall
		if len(f) != 5 && len(f) != 6 || f[len(f)-1] == "total" || f[len(f)-1] == "syscall" {
			continue
		}
		if _, err := strconv.ParseFloat(f[0], 64); err != nil {
			continue // the dashes
		}
		var c callCount
		var err error
		if c.calls, err = strconv.ParseInt(f[3], 10, 64); err == nil && len(f) == 6 {
			c.errors, err = strconv.ParseInt(f[4], 10, 64)
		}
		if err != nil {
			return nil, fmt.Errorf("strace line %q: %w", sc.Text(), err)
		}
		out[f[len(f)-1]] = c
	}
	return out, sc.Err()
}

// syncsOf sums the fsync and fdatasync calls of an `strace -c` summary.
func syncsOf(m map[string]callCount) int64 { return m["fsync"].calls + m["fdatasync"].calls }

func straceFile(path string) (map[string]callCount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return straceCounts(f)
}

func syncFile(path string) (int64, error) {
	m, err := straceFile(path)
	return syncsOf(m), err
}

// syncsMain prints the syncs per message of two runs of one shape that
// differ only in their message count, so set-up and shut-down cancel.
func syncsMain(args []string) error {
	c, err := parseCounted("syncs", args, func(files int) bool { return files == 2 },
		"syncs -system S -shape K -short N -long M short.strace long.strace")
	if err != nil {
		return err
	}
	a, err := syncFile(c.files[0])
	if err != nil {
		return err
	}
	b, err := syncFile(c.files[1])
	if err != nil {
		return err
	}
	if b < a {
		return &shortExceedsLong{kind: "syncs", short: float64(a), long: float64(b)}
	}
	fmt.Printf("peer-bench-syncs: system=%s shape=%s short=%d/%d long=%d/%d per-msg=%.3f\n",
		c.system, c.shape, a, c.short, b, c.long, float64(b-a)/float64(c.long-c.short))
	return nil
}

// shortExceedsLong says that the short run made more calls of a kind than
// the long one: work of the process's own (a broker's log rollover, a
// compaction) fell into the short run, so long − short counts none of the
// messages. The script counts such a cell again (exit status 3).
type shortExceedsLong struct {
	kind        string
	short, long float64
}

func (e *shortExceedsLong) Error() string {
	return fmt.Sprintf("the short run made more %s (%.0f) than the long one (%.0f): background work fell into it; count again",
		e.kind, e.short, e.long)
}

// counted is what syncs and calls are told: whose strace summaries of a
// short and a long run of which shape.
type counted struct {
	system, shape string
	short, long   int64
	files         []string
}

func parseCounted(name string, args []string, filesOK func(int) bool, usage string) (counted, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	system := fs.String("system", "", "wsrkit, classic or quorum")
	shapeKey := fs.String("shape", "", "g1w1, g64w1, g1w16, g64w16 …")
	short := fs.Int64("short", 0, "messages of the short runs")
	long := fs.Int64("long", 0, "messages of the long runs")
	if err := fs.Parse(args); err != nil {
		return counted{}, err
	}
	if !filesOK(fs.NArg()) || *long <= *short || *system == "" || *shapeKey == "" {
		return counted{}, fmt.Errorf("usage: %s", usage)
	}
	return counted{*system, *shapeKey, *short, *long, fs.Args()}, nil
}

// callKinds are the columns of the system-call table, in its order; every
// call that is none of the named ones counts as "other".
var callKinds = []struct {
	key, title string
	calls      []string
}{
	{"reads", "reads", []string{"read", "readv", "recvfrom", "recvmsg"}},
	{"empty", "of them, nothing to read (EAGAIN, or a peek)", nil},
	{"writes", "writes", []string{"write", "writev", "sendto", "sendmsg"}},
	{"waits", "waits and wake-ups (epoll, futex, sleeps, yields)", []string{"epoll_wait", "epoll_pwait", "epoll_pwait2", "epoll_ctl",
		"futex", "nanosleep", "clock_nanosleep", "sched_yield", "poll", "ppoll", "select", "pselect6", "timerfd_settime", "tgkill"}},
	{"syncs", "syncs", []string{"fsync", "fdatasync"}},
	{"other", "other", nil},
	{"total", "total", nil},
}

// callKind maps a system call named in callKinds to its kind's key.
var callKind = func() map[string]string {
	m := map[string]string{}
	for _, k := range callKinds {
		for _, c := range k.calls {
			m[c] = k.key
		}
	}
	return m
}()

// callsPerKind sums counts by callKinds.
func callsPerKind(m map[string]callCount) map[string]float64 {
	out := map[string]float64{}
	for name, c := range m {
		k, ok := callKind[name]
		if !ok {
			k = "other"
		}
		out[k] += float64(c.calls)
		if k == "reads" {
			out["empty"] += float64(c.errors)
		}
		out["total"] += float64(c.calls)
	}
	return out
}

// callsMain prints the system calls per message, by kind, of the processes
// of one system in one shape: for each process a short and a long run's
// summaries (short.strace long.strace, then the next process's), so that
// set-up and shut-down cancel.
func callsMain(args []string) error {
	c, err := parseCounted("calls", args, func(files int) bool { return files > 0 && files%2 == 0 },
		"calls -system S -shape K -short N -long M short.strace long.strace [short.strace long.strace …]")
	if err != nil {
		return err
	}
	per := map[string]float64{}
	short, long := map[string]float64{}, map[string]float64{}
	for i := 0; i < len(c.files); i += 2 {
		a, err := straceFile(c.files[i])
		if err != nil {
			return err
		}
		b, err := straceFile(c.files[i+1])
		if err != nil {
			return err
		}
		ka, kb := callsPerKind(a), callsPerKind(b)
		for _, k := range callKinds {
			short[k.key] += ka[k.key]
			long[k.key] += kb[k.key]
		}
	}
	for _, k := range callKinds {
		if long[k.key] < short[k.key] {
			return &shortExceedsLong{kind: k.key, short: short[k.key], long: long[k.key]}
		}
		per[k.key] = (long[k.key] - short[k.key]) / float64(c.long-c.short)
	}
	fmt.Printf("peer-bench-calls: system=%s shape=%s", c.system, c.shape)
	for _, k := range callKinds {
		fmt.Printf(" %s=%.2f", k.key, per[k.key])
	}
	fmt.Println()
	return nil
}
