package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// run is everything one `go test -bench` output (or several, appended)
// says: each benchmark's results in order of appearance (one per round),
// and the context lines.
type run struct {
	// results maps a benchmark name (GOMAXPROCS suffix removed) to its
	// results, the k-th from round k.
	results map[string][]result
	// info holds "cpu", "goos", "goarch" and the script's
	// "wsrkit-bench: key=value" lines, by key; the first value wins.
	info map[string]string
}

// result is one benchmark line: unit → value ("ns/op", "msg/s", …).
type result map[string]float64

var procSuffix = regexp.MustCompile(`-\d+$`)

// parse reads benchmark output. Lines that are neither results nor
// context are ignored; a malformed result line is an error.
func parse(r io.Reader) (*run, error) {
	out := &run{results: map[string][]result{}, info: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(text, "Benchmark"):
			name, res, err := parseResult(text)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			if res != nil {
				out.results[name] = append(out.results[name], res)
			}
		case strings.HasPrefix(text, "wsrkit-bench:"):
			k, v, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(text, "wsrkit-bench:")), "=")
			if ok {
				setOnce(out.info, strings.TrimSpace(k), strings.TrimSpace(v))
			}
		default:
			for _, k := range []string{"cpu", "goos", "goarch"} {
				if v, ok := strings.CutPrefix(text, k+":"); ok {
					setOnce(out.info, k, strings.TrimSpace(v))
				}
			}
		}
	}
	return out, sc.Err()
}

func setOnce(m map[string]string, k, v string) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}

// parseResult reads "BenchmarkName-2  N  v unit  v unit …". A line with no
// iteration count (a benchmark's name printed before its log output) gives
// a nil result.
func parseResult(text string) (string, result, error) {
	f := strings.Fields(text)
	name := procSuffix.ReplaceAllString(f[0], "")
	if len(f) < 2 {
		return name, nil, nil
	}
	if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
		return name, nil, nil
	}
	if len(f)%2 != 0 {
		return "", nil, fmt.Errorf("benchmark %s: odd value/unit fields", name)
	}
	res := result{}
	for i := 2; i < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return "", nil, fmt.Errorf("benchmark %s: value %q: %w", name, f[i], err)
		}
		res[f[i+1]] = v
	}
	return name, res, nil
}

// median of the values of unit over the rounds of name; ok is false when
// no round has it.
func (r *run) median(name, unit string) (float64, bool) {
	var vs []float64
	for _, res := range r.results[name] {
		if v, ok := res[unit]; ok {
			vs = append(vs, v)
		}
	}
	return median(vs)
}

// ratios returns, per round that has both, num's unit over den's unit.
func (r *run) ratios(num, numUnit, den, denUnit string) []float64 {
	a, b := r.results[num], r.results[den]
	var out []float64
	for i := range min(len(a), len(b)) {
		x, ok1 := a[i][numUnit]
		y, ok2 := b[i][denUnit]
		if ok1 && ok2 && y != 0 {
			out = append(out, x/y)
		}
	}
	return out
}

func median(vs []float64) (float64, bool) {
	if len(vs) == 0 {
		return 0, false
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2], true
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2, true
}
