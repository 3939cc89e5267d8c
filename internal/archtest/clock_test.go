package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// wallClock lists the functions of package time that read or wait on the
// wall clock. Under rmp/ only the driver may call them; the state machines
// take time as an argument (STYLE.md).
var wallClock = map[string]bool{
	"Now": true, "Since": true, "Until": true, "After": true, "AfterFunc": true,
	"NewTimer": true, "NewTicker": true, "Tick": true, "Sleep": true,
}

// isDriverFile reports whether a file under rmp/ belongs to the driver.
func isDriverFile(path string) bool {
	base := filepath.Base(path)
	return filepath.Dir(path) == filepath.Join("..", "..", "rmp") &&
		(strings.HasPrefix(base, "node") || strings.HasPrefix(base, "driver"))
}

// realTimeFiles call the wall clock though they are not the driver's:
// the HTTP transport's exchange contexts (watch.go) and its own HTTP/1.1
// connections' deadlines and idle sweep (h1conn.go) are bounded by real
// time, as the context.WithTimeout and net/http timers they replaced were
// (#22); nothing else is.
var realTimeFiles = map[string]bool{
	filepath.Join("..", "..", "rmp", "outbound", "watch.go"):  true,
	filepath.Join("..", "..", "rmp", "outbound", "h1conn.go"): true,
}

// wallClockCalls returns "file:line time.X" for each wall-clock call in src.
func wallClockCalls(fset *token.FileSet, file *ast.File) []string {
	timeName := ""
	for _, imp := range file.Imports {
		if imp.Path.Value == `"time"` {
			timeName = "time"
			if imp.Name != nil {
				timeName = imp.Name.Name
			}
		}
	}
	if timeName == "" {
		return nil
	}
	var hits []string
	ast.Inspect(file, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == timeName && wallClock[sel.Sel.Name] {
			hits = append(hits, fset.Position(sel.Pos()).String()+" time."+sel.Sel.Name)
		}
		return true
	})
	return hits
}

func TestNoWallClockUnderRmp(t *testing.T) {
	root := filepath.Join("..", "..", "rmp")
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || isDriverFile(path) || realTimeFiles[path] {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		for _, h := range wallClockCalls(fset, f) {
			t.Errorf("wall-clock call outside the driver: %s", h)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no Go files found under rmp/")
	}
}

func TestWallClockDetectorFinds(t *testing.T) {
	src := `package p
import tm "time"
func f() { _ = tm.Now(); _ = tm.Duration(1); <-tm.After(1) }`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	hits := wallClockCalls(fset, f)
	if len(hits) != 2 || !strings.HasSuffix(hits[0], "time.Now") || !strings.HasSuffix(hits[1], "time.After") {
		t.Fatalf("hits = %q, want time.Now and time.After", hits)
	}
}
