package conformance

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
)

// block is one command of a scenario file as datadriven writes it: a
// directive line, optional input, "----" and the expected output.
type block struct {
	td testData
	// start and end are the file's line indexes (0-based, end exclusive) of
	// the expected output, including its separators; used by rewrite.
	start, end int
	// hasSep says the block had a "----" separator.
	hasSep bool
}

// scenario is a parsed scenario file; lines keeps the text for rewriting.
type scenario struct {
	path string
	// stateOnlyInCrash is set by the line "# conform: crash-state-only":
	// in crash mode only the output of state commands is compared, because
	// the scenario shows timers that a recovered engine legitimately
	// reschedules (see the README section).
	stateOnlyInCrash bool
	lines            []string
	blocks           []block
}

// crashStateOnly is the directive comment that sets stateOnlyInCrash.
const crashStateOnly = "# conform: crash-state-only"

// readScenario parses path with the datadriven file syntax: '#' comments,
// directive lines (continued with '\'), input up to "----", then the
// expected output up to a blank line, or up to "----\n----" when the output
// starts with a second "----".
func readScenario(path string) (*scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sc := &scenario{path: path}
	s := bufio.NewScanner(bytes.NewReader(data))
	s.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for s.Scan() {
		sc.lines = append(sc.lines, s.Text())
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	ls := sc.lines
	for i := 0; i < len(ls); {
		line := strings.TrimSpace(ls[i])
		pos := fmt.Sprintf("%s:%d", path, i+1)
		i++
		if line == crashStateOnly {
			sc.stateOnlyInCrash = true
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for strings.HasSuffix(line, `\`) && i < len(ls) {
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(ls[i])
			i++
		}
		cmd, args, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", pos, err)
		}
		b := block{td: testData{Pos: pos, Cmd: cmd, CmdArgs: args}}
		var in []string
		for i < len(ls) && ls[i] != "----" {
			if strings.TrimSpace(ls[i]) == "" && len(in) == 0 {
				// A blank line right after a directive ends a block
				// without input or expected output.
				break
			}
			in = append(in, ls[i])
			i++
		}
		b.td.Input = strings.TrimSpace(strings.Join(in, "\n"))
		if i < len(ls) && ls[i] == "----" {
			b.hasSep = true
			b.start = i
			i++
			var out []string
			if i < len(ls) && ls[i] == "----" {
				i++
				for i < len(ls) {
					if ls[i] == "----" && i+1 < len(ls) && ls[i+1] == "----" {
						i += 2
						break
					}
					out = append(out, ls[i])
					i++
				}
			} else {
				for i < len(ls) && strings.TrimSpace(ls[i]) != "" {
					out = append(out, ls[i])
					i++
				}
			}
			b.end = i
			if len(out) > 0 {
				b.td.Expected = strings.Join(out, "\n") + "\n"
			}
		} else {
			b.start, b.end = i, i
		}
		sc.blocks = append(sc.blocks, b)
	}
	return sc, nil
}

// formatExpected renders out the way datadriven's -rewrite does: plain
// below "----" when it has no blank line, between doubled separators
// otherwise.
func formatExpected(out string) []string {
	out = strings.TrimRight(out, "\n")
	if out == "" {
		return []string{"----"}
	}
	lines := strings.Split(out, "\n")
	blank := false
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			blank = true
		}
	}
	if !blank {
		return append([]string{"----"}, lines...)
	}
	r := append([]string{"----", "----"}, lines...)
	return append(r, "----", "----")
}

// rewrite writes the scenario back with actual as every block's output.
func (sc *scenario) rewrite(actual []string) error {
	var out []string
	prev := 0
	for i, b := range sc.blocks {
		if i >= len(actual) {
			break
		}
		if !b.hasSep {
			out = append(out, sc.lines[prev:b.start]...)
			out = append(out, formatExpected(actual[i])...)
			prev = b.start
			continue
		}
		out = append(out, sc.lines[prev:b.start]...)
		out = append(out, formatExpected(actual[i])...)
		prev = b.end
	}
	out = append(out, sc.lines[prev:]...)
	return os.WriteFile(sc.path, []byte(strings.Join(out, "\n")+"\n"), 0o644)
}
