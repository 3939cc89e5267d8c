package main

import (
	"flag"
	"io"
	"runtime/metrics"
	"testing"
)

// gcPercent reads the GC percent without changing it.
func gcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// The floor is on by default, sized by -gc-heap-floor, off at 0, and left
// alone when the operator set GOGC.
func TestHeapFloorFlagAndGOGC(t *testing.T) {
	parse := func(args ...string) (int64, error) {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := registerHeapFloor(fs)
		err := fs.Parse(args)
		return int64(*f), err
	}
	for _, c := range []struct {
		args []string
		want int64
	}{{nil, defaultHeapFloor}, {[]string{"-gc-heap-floor", "256MiB"}, 256 << 20}, {[]string{"-gc-heap-floor", "0"}, 0}} {
		if got, err := parse(c.args...); err != nil || got != c.want {
			t.Errorf("%v: floor %d, %v; want %d", c.args, got, err, c.want)
		}
	}
	if _, err := parse("-gc-heap-floor", "-1"); err == nil {
		t.Error("-gc-heap-floor -1 accepted")
	}

	base := gcPercent()
	t.Setenv("GOGC", "")
	stop := startHeapFloor(1 << 40)
	if p := gcPercent(); p <= base {
		t.Errorf("GC percent %d under a 1 TiB floor, want more than %d", p, base)
	}
	stop()
	if p := gcPercent(); p != base {
		t.Errorf("GC percent %d after stop, want %d", p, base)
	}
	startHeapFloor(0)()
	t.Setenv("GOGC", "100")
	stop = startHeapFloor(1 << 40)
	if p := gcPercent(); p != base {
		t.Errorf("GC percent %d with GOGC set, want it kept at %d", p, base)
	}
	stop()
}
