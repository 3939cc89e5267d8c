package conformance

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var idPattern = regexp.MustCompile(`\b([DR]\d{1,2})\b`)

// covered maps each D-/R-id named on a scenario's "# Covers:" line to the
// files that name it.
func covered(t *testing.T) map[string][]string {
	files, err := scenarioFiles([]string{"testdata"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(b), "\n")
		if !strings.HasPrefix(first, "# Covers:") {
			t.Errorf("%s: the first line must be \"# Covers: ids. Shows: …\"", f)
			continue
		}
		head, _, _ := strings.Cut(string(b), "Shows:")
		for _, m := range idPattern.FindAllStringSubmatch(head, -1) {
			out[m[1]] = append(out[m[1]], filepath.Base(f))
		}
	}
	return out
}

// specDir finds ../shared/spec like the soap XSD test: $WSRKIT_SPEC_DIR,
// else <repo>/../shared/spec.
func specDir(t *testing.T) string {
	if d := os.Getenv("WSRKIT_SPEC_DIR"); d != "" {
		return d
	}
	d, err := filepath.Abs(filepath.Join("..", "..", "shared", "spec"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d, "DECISIONS.md")); err != nil {
		t.Skipf("DECISIONS.md not found: set WSRKIT_SPEC_DIR (looked in %s)", d)
	}
	return d
}

func TestEveryDecisionHasAScenario(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(specDir(t), "DECISIONS.md"))
	if err != nil {
		t.Fatal(err)
	}
	ids := regexp.MustCompile(`\*\*(D\d+) `).FindAllStringSubmatch(string(b), -1)
	if len(ids) < 27 {
		t.Fatalf("found %d decisions in DECISIONS.md, want at least 27", len(ids))
	}
	cov := covered(t)
	var missing []string
	for _, m := range ids {
		if len(cov[m[1]]) == 0 {
			missing = append(missing, m[1])
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("decisions without a scenario: %v", missing)
	}
}

// TestCoverageTable prints the id → files table for SPEC-NOTES.md with
// -v; it checks that every scenario covers at least one id.
func TestCoverageTable(t *testing.T) {
	cov := covered(t)
	ids := make([]string, 0, len(cov))
	for id := range cov {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if ids[i][0] != ids[j][0] {
			return ids[i][0] < ids[j][0]
		}
		return len(ids[i]) < len(ids[j]) || (len(ids[i]) == len(ids[j]) && ids[i] < ids[j])
	})
	if len(ids) == 0 {
		t.Fatal("no ids covered")
	}
	for _, id := range ids {
		t.Logf("| %s | %s |", id, strings.Join(cov[id], ", "))
	}
}
