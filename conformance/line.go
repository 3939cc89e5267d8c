package conformance

import (
	"fmt"
	"strings"
)

// cmdArg is one argument of a directive line, as cmdArg: key,
// key=value or key=(v1, v2, …).
type cmdArg struct {
	Key  string
	Vals []string
}

// testData is one command of a scenario, as testData.
type testData struct {
	Pos      string
	Cmd      string
	CmdArgs  []cmdArg
	Input    string
	Expected string
}

// parseLine parses a directive line with the grammar of
// parseLine. (Importing datadriven itself needs
// github.com/pmezard/go-difflib in go.mod; see SPEC-NOTES "Coverage".)
func parseLine(line string) (string, []cmdArg, error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return "", nil, nil
	}
	orig := line
	bad := func() error {
		return fmt.Errorf("cannot parse directive at column %d: %s", len(orig)-len(line)+1, orig)
	}
	until := func(chars string) string {
		i := strings.IndexAny(line, chars)
		if i < 0 {
			i = len(line)
		}
		res := line[:i]
		line = line[i:]
		return res
	}
	cmd := until(" ")
	line = strings.TrimSpace(line)
	var list []cmdArg
	for line != "" {
		a := cmdArg{Key: until(" =")}
		if a.Key == "" {
			return "", nil, bad()
		}
		if line != "" && line[0] == '=' {
			line = line[1:]
			switch {
			case line == "" || line[0] == ' ':
				a.Vals = []string{""}
			case line[0] != '(':
				a.Vals = []string{until(" ")}
			default:
				pos, nest, start := 1, 1, 1
				for nest > 0 {
					if pos == len(line) {
						return "", nil, bad()
					}
					c := line[pos]
					pos++
					switch c {
					case ',':
						if nest == 1 {
							a.Vals = append(a.Vals, line[start:pos-1])
							for pos < len(line) && line[pos] == ' ' {
								pos++
							}
							start = pos
						}
					case '(':
						nest++
					case ')':
						nest--
					}
				}
				a.Vals = append(a.Vals, line[start:pos-1])
				line = line[pos:]
			}
		}
		list = append(list, a)
		line = strings.TrimSpace(line)
	}
	return cmd, list, nil
}
