package conformance

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Failure is one command whose output differs from the expected one.
type Failure struct {
	// Path and Pos name the scenario and the command's line.
	Path, Pos string
	Mode      Mode
	Command   string
	Expected  string
	Actual    string
}

// String renders the failure with a line diff of expected vs actual.
func (f Failure) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "FAIL %s (%s mode)\n  command: %s\n", f.Pos, f.Mode, f.Command)
	b.WriteString(diffLines(f.Expected, f.Actual))
	return b.String()
}

// RunFile runs one scenario in mode m and returns each command's actual
// output, and a Failure for every command whose output differs.
func RunFile(path string, m Mode) (actual []string, failures []Failure, err error) {
	sc, err := readScenario(path)
	if err != nil {
		return nil, nil, err
	}
	return runScenario(sc, m)
}

func runScenario(sc *scenario, m Mode) ([]string, []Failure, error) {
	h := newHarness(m)
	defer h.close()
	var actual []string
	var fails []Failure
	for _, b := range sc.blocks {
		td := b.td
		out := h.exec(&td)
		actual = append(actual, out)
		if out != td.Expected && (m != ModeCrash || !sc.stateOnlyInCrash || td.Cmd == "state") {
			fails = append(fails, Failure{Path: sc.path, Pos: td.Pos, Mode: m, Command: commandText(&td),
				Expected: td.Expected, Actual: out})
		}
	}
	return actual, fails, nil
}

// commandText is the directive line as written.
func commandText(td *testData) string {
	parts := []string{td.Cmd}
	for _, a := range td.CmdArgs {
		switch len(a.Vals) {
		case 0:
			parts = append(parts, a.Key)
		case 1:
			parts = append(parts, a.Key+"="+a.Vals[0])
		default:
			parts = append(parts, a.Key+"=("+strings.Join(a.Vals, ", ")+")")
		}
	}
	return strings.Join(parts, " ")
}

// close releases the stores of every node.
func (h *harness) close() {
	for _, name := range h.names() {
		if st := h.nodes[name].st; st != nil {
			_ = st.Close()
		}
	}
}

// reset starts the next scenario of a file afresh: every RMP and its
// store go, the network forgets what it carries and time is T again.
func (h *harness) reset() {
	h.close()
	*h = *newHarness(h.mode)
}

// scenarioFiles expands directories into their .txt files, sorted.
func scenarioFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".txt") {
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

// diffLines renders a line diff: "-" expected only, "+" actual only, " "
// both (longest common subsequence).
func diffLines(expected, actual string) string {
	a := splitLines(expected)
	b := splitLines(actual)
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	out.WriteString("  --- expected\n  +++ actual\n")
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out.WriteString("    " + a[i] + "\n")
			i++
			j++
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			out.WriteString("  + " + b[j] + "\n")
			j++
		default:
			out.WriteString("  - " + a[i] + "\n")
			i++
		}
	}
	return out.String()
}

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
