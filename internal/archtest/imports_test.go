package archtest

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/wsrkit/wsrkit"

type pkg struct {
	ImportPath   string
	Standard     bool
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// listPackages runs `go list -json` over the module.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json", module+"/...")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, errb.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(&out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}

func rel(path string) string {
	if path == module {
		return "."
	}
	return strings.TrimPrefix(path, module+"/")
}

func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// rule says what one package may import directly (non-test files).
type rule struct {
	why string
	// allowed reports whether the package may import path.
	allowed func(path string) bool
}

func only(allowed ...string) func(string) bool {
	return func(path string) bool {
		if !strings.HasPrefix(path, module) {
			return isStd(path) && !forbiddenStd(path)
		}
		for _, a := range allowed {
			if rel(path) == a {
				return true
			}
		}
		return false
	}
}

// forbiddenStd lists standard-library packages that bring I/O or the
// network into the pure packages.
func forbiddenStd(path string) bool {
	switch {
	case path == "os", strings.HasPrefix(path, "os/"),
		path == "net", strings.HasPrefix(path, "net/"),
		path == "io/fs", path == "syscall", path == "math/rand", path == "math/rand/v2",
		path == "crypto/rand":
		return true
	}
	return false
}

var rules = map[string]rule{
	"rmp/group":    {"the bottom of the graph: standard library only, no I/O", only()},
	"faults":       {"the bottom of the graph: standard library only, no I/O", only()},
	"rmp/receiver": {"a pure state machine over group and faults (STYLE.md)", only("rmp/group", "faults")},
	"rmp/sender":   {"a pure state machine over group and faults (STYLE.md)", only("rmp/group", "faults")},
}

func TestImportDirection(t *testing.T) {
	for _, p := range listPackages(t) {
		r, ok := rules[rel(p.ImportPath)]
		if !ok {
			continue
		}
		for _, imp := range p.Imports {
			if !r.allowed(imp) {
				t.Errorf("%s imports %s: %s", rel(p.ImportPath), imp, r.why)
			}
		}
	}
}

// importers lists, for each import path prefix, the only packages that may
// import it directly. Test files count too, except for etree, which
// benchmarks elsewhere use as their parsing ceiling.
var importers = map[string][]string{
	"github.com/cockroachdb/pebble": {"store/pebblestore"},
	"github.com/benbjohnson/clock":  {"rmp"},
	"github.com/beevik/etree":       {"soap"},
	// etcd (client, embedded server for tests) stays behind the shared store.
	"go.etcd.io/": {"store/etcdstore", "store/etcdstore/etcdtest"},
}

var productionOnly = map[string]bool{"github.com/beevik/etree": true}

func TestExclusiveImporters(t *testing.T) {
	for _, p := range listPackages(t) {
		tests := map[string]bool{}
		for _, imp := range append(append([]string(nil), p.TestImports...), p.XTestImports...) {
			tests[imp] = true
		}
		all := append(append(append([]string(nil), p.Imports...), p.TestImports...), p.XTestImports...)
		for _, imp := range all {
			for prefix, owners := range importers {
				if !strings.HasPrefix(imp, prefix) || (productionOnly[prefix] && tests[imp] && !contains(p.Imports, imp)) {
					continue
				}
				owner := false
				for _, o := range owners {
					if rel(p.ImportPath) == o {
						owner = true
					}
				}
				if !owner {
					t.Errorf("%s imports %s; only %v may (STYLE.md)", rel(p.ImportPath), imp, owners)
				}
			}
		}
	}
}

func TestRulesCanFail(t *testing.T) {
	// The rules must reject what STYLE.md forbids, or the tests above prove nothing.
	bad := map[string]string{
		"rmp/receiver": module + "/rmp/sender",
		"rmp/sender":   module + "/soap",
		"rmp/group":    "os",
		"faults":       "net/http",
	}
	for pkgPath, imp := range bad {
		if rules[pkgPath].allowed(imp) {
			t.Errorf("rule for %s allows %s", pkgPath, imp)
		}
	}
	if !rules["rmp/receiver"].allowed(module + "/rmp/group") {
		t.Error("rule for rmp/receiver refuses rmp/group")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
