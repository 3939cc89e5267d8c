package archtest

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// requirementsDoc is where every cited id is explained (#20).
const requirementsDoc = "docs/requirements.md"

// family is one kind of id: its letter, its defined range and how many
// digits its canonical form has (0: no zero padding).
type family struct {
	min, max, width int
	source          string
}

// families are the ids this project cites: decisions (DECISIONS.md), the
// digest's checklist (§11) and its ambiguities (§13).
var families = map[byte]family{
	'D': {1, 27, 0, "DECISIONS.md"},
	'R': {1, 94, 2, "wsr11-digest.md §11"},
	'A': {1, 18, 0, "wsr11-digest.md §13"},
}

// citeRE finds candidate ids. A WS-I Basic Profile requirement (four digits
// after "BP ", as in "WS-I BP R2744") is not ours and is skipped in cites.
var citeRE = regexp.MustCompile(`\b[DRA][0-9]+\b`)

// canonical reports whether id is in its family's range and written in its
// canonical form (D8, R07, A13).
func canonical(id string) bool {
	f, ok := families[id[0]]
	if !ok {
		return false
	}
	digits := id[1:]
	n, err := strconv.Atoi(digits)
	if err != nil || n < f.min || n > f.max {
		return false
	}
	want := strconv.Itoa(n)
	if f.width > 0 {
		want = fmt.Sprintf("%0*d", f.width, n)
	}
	return digits == want
}

type cite struct {
	id   string
	line int
}

// cites returns the ids text cites, with their line numbers.
func cites(text []byte) []cite {
	var out []cite
	for i, line := range bytes.Split(text, []byte("\n")) {
		for _, loc := range citeRE.FindAllIndex(line, -1) {
			id := string(line[loc[0]:loc[1]])
			if id[0] == 'R' && len(id) == 5 && bytes.HasSuffix(line[:loc[0]], []byte("BP ")) {
				continue // WS-I Basic Profile
			}
			out = append(out, cite{id, i + 1})
		}
	}
	return out
}

// defRE matches a definition: a list item that starts with the bold id.
var defRE = regexp.MustCompile(`^- \*\*([A-Z][0-9]+)\*\*`)

// pathRE matches a repository path in backquotes: at least one slash and a
// file extension, or a trailing slash for a directory.
var pathRE = regexp.MustCompile("`([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+(?:\\.[a-z]+|/))`")

type definition struct {
	id    string
	line  int
	paths []string
}

// definitions parses the requirements page: each list item that starts with
// a bold id, with the paths named in it (up to the next item or heading).
func definitions(text []byte) []definition {
	var defs []definition
	in := false // inside the latest definition
	for i, line := range strings.Split(string(text), "\n") {
		if m := defRE.FindStringSubmatch(line); m != nil {
			defs, in = append(defs, definition{id: m[1], line: i + 1, paths: []string{}}), true
		} else if strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			in = false
		}
		if in {
			d := &defs[len(defs)-1]
			for _, m := range pathRE.FindAllStringSubmatch(line, -1) {
				d.paths = append(d.paths, m[1])
			}
		}
	}
	return defs
}

// definitionProblems checks the page itself: ids in range and canonical,
// each once, each naming at least one path, every path present under root.
func definitionProblems(defs []definition, exists func(string) bool) []string {
	var out []string
	seen := map[string]int{}
	for _, d := range defs {
		at := fmt.Sprintf("%s:%d", requirementsDoc, d.line)
		if !canonical(d.id) {
			out = append(out, fmt.Sprintf("%s defines %s, outside D1–D27, R01–R94, A1–A18", at, d.id))
		}
		if prev, dup := seen[d.id]; dup {
			out = append(out, fmt.Sprintf("%s defines %s again (first at line %d)", at, d.id, prev))
		}
		seen[d.id] = d.line
		if len(d.paths) == 0 {
			out = append(out, fmt.Sprintf("%s: %s names no file where it is enforced", at, d.id))
		}
		for _, p := range d.paths {
			if !exists(p) {
				out = append(out, fmt.Sprintf("%s: %s names %s, which does not exist", at, d.id, p))
			}
		}
	}
	return out
}

// scanned reports whether a file (slash path relative to the root) is read
// for citations: Go files, the conformance scenarios and the Markdown pages
// at the root and under docs/ (the requirements page and this file aside).
func scanned(rel string) bool {
	switch {
	case rel == requirementsDoc, rel == "internal/archtest/citations_test.go":
		return false
	case strings.HasSuffix(rel, ".go"), strings.HasPrefix(rel, "conformance/testdata/"):
		return true
	case strings.HasSuffix(rel, ".md"):
		return !strings.Contains(rel, "/") || strings.HasPrefix(rel, "docs/")
	}
	return false
}

func TestCitedIdsAreDefined(t *testing.T) {
	root := filepath.Join("..", "..")
	page, err := os.ReadFile(filepath.Join(root, requirementsDoc))
	if err != nil {
		t.Fatal(err)
	}
	defs := definitions(page)
	exists := func(p string) bool { _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); return err == nil }
	for _, p := range definitionProblems(defs, exists) {
		t.Error(p)
	}
	defined := map[string]bool{}
	for _, d := range defs {
		defined[d.id] = true
	}
	cited := map[string]bool{}
	missing := map[string][]string{} // undefined id → where it is cited
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if path != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !scanned(rel) {
			return nil
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, c := range cites(text) {
			cited[c.id] = true
			if !defined[c.id] {
				missing[c.id] = append(missing[c.id], fmt.Sprintf("%s:%d", rel, c.line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range slices.Sorted(maps.Keys(missing)) {
		at := missing[id]
		more := ""
		if len(at) > 5 {
			at, more = at[:5], fmt.Sprintf(" and %d more", len(missing[id])-5)
		}
		t.Errorf("%s is cited at %s%s, but %s does not define it", id, strings.Join(at, ", "), more, requirementsDoc)
	}
	if files < 100 || len(cited) < 100 {
		t.Fatalf("read %d files citing %d ids: the scan is not looking where the code is", files, len(cited))
	}
	t.Logf("%d ids defined, %d cited in %d files", len(defined), len(cited), files)
}

func TestCitationCheckCanFail(t *testing.T) {
	ids := func(cs []cite) []string {
		var out []string
		for _, c := range cs {
			out = append(out, fmt.Sprintf("%s@%d", c.id, c.line))
		}
		return out
	}
	text := "// D8, R07 and A13 (D20–D23)\n" +
		"x := 0xD8 // SHA1 bytes, WS-I BP R2744, BP R1126\n" +
		"R2744 alone, R7 unpadded, D28, A1x, ED3\n"
	want := []string{"D8@1", "R07@1", "A13@1", "D20@1", "D23@1", "R2744@3", "R7@3", "D28@3"}
	if got := ids(cites([]byte(text))); !slices.Equal(got, want) {
		t.Errorf("cites = %q, want %q", got, want)
	}

	for id, want := range map[string]bool{"D1": true, "D27": true, "D28": false, "D0": false, "D08": false,
		"R01": true, "R94": true, "R1": false, "R95": false, "R2744": false, "A18": true, "A19": false, "X3": false} {
		if canonical(id) != want {
			t.Errorf("canonical(%s) = %v, want %v", id, !want, want)
		}
	}

	page := "# Requirements\n\n" +
		"- **D8** Ack means stored. Enforced in `rmp/receiver/message.go`,\n  and `rmp/node.go`.\n" +
		"- **R95** Beyond the checklist. Enforced in `soap/write.go`.\n" +
		"- **D8** Again. Enforced in `rmp/gone.go`.\n" +
		"- **A4** Nowhere.\n\nProse naming `soap/fault.go`.\n"
	defs := definitions([]byte(page))
	var got []string
	for _, d := range defs {
		got = append(got, fmt.Sprintf("%s@%d%v", d.id, d.line, d.paths))
	}
	wantDefs := []string{"D8@3[rmp/receiver/message.go rmp/node.go]", "R95@5[soap/write.go]", "D8@6[rmp/gone.go]", "A4@7[]"}
	if !slices.Equal(got, wantDefs) {
		t.Fatalf("definitions = %q, want %q", got, wantDefs)
	}
	problems := definitionProblems(defs, func(p string) bool { return p != "rmp/gone.go" })
	wantProblems := []string{
		requirementsDoc + ":5 defines R95, outside D1–D27, R01–R94, A1–A18",
		requirementsDoc + ":6 defines D8 again (first at line 3)",
		requirementsDoc + ":6: D8 names rmp/gone.go, which does not exist",
		requirementsDoc + ":7: A4 names no file where it is enforced",
	}
	if !slices.Equal(problems, wantProblems) {
		t.Errorf("definitionProblems = %q, want %q", problems, wantProblems)
	}

	for rel, want := range map[string]bool{"rmp/node.go": true, "conformance/testdata/x.txt": true, "README.md": true,
		"docs/x.md": true, requirementsDoc: false, "soap/testdata/fuzz/FuzzParse/8a48": false, "rmp/x.md": false} {
		if scanned(rel) != want {
			t.Errorf("scanned(%s) = %v, want %v", rel, !want, want)
		}
	}
}
