package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// surfaceBudget caps the exported identifiers of a package, so that its
// front page (go doc) does not creep back (#20: rmp from 228 to at most 120).
var surfaceBudget = map[string]int{
	// 228 when #20 began (169 when it was filed); the management views,
	// aborts and counters moved to rmp/admin; Submission is flat (+11);
	// request bodies are read by rmp/httpbody; the outbound URL policy is
	// rmp/outbound, with the HTTP client settings (outbound.Config);
	// Node.SubmitBatch (#22, +1); helpers only the package used unexported;
	// ReadRequest, which checks an envelope's limits while its body is
	// read (#18, +1); the Clock and Timer interfaces wsrkit owns, with
	// FakeClock's four methods, instead of an alias of benbjohnson/clock's
	// 11-method Clock and a FakeClock embedding its Mock (+8, though the
	// alias and the embedding exposed more than this count saw).
	// Engine.SubmitBatch, exported so that the Node drives the engine
	// through its exported API only (#20, +1). From 163: the outbound
	// transport joined rmp/outbound (-16), the TLS peer identity is
	// rmp/peer (-8), the clocks rmp/clock (-13); Inbound lost
	// ContentTypeError (Envelope's error), CheckOutbound (ServeInbound's
	// own) and its Peer getter (-3); Delivery is an alias of
	// receiver.Delivery (-1); Config.Dialect was a copy of
	// Receiver.Dialect (-1); Node.Metrics a second way to Node.Admin's
	// counters (-1). Engine.Returned, the hand-back of a delivery run
	// (#22), exported for the same reason as Engine.SubmitBatch (+1).
	// Node.SubmitAsync, its PendingSubmit and Wait: pipelined submission
	// without a round trip per message (#22, +3).
	"rmp": 124,
}

// surface counts what a package exports, as go doc shows it: types,
// functions, methods of exported types (interface methods included),
// constants and variables, and exported struct fields (embedded ones
// included). Test files do not count.
type surface struct {
	types, funcs, methods, values, fields int
}

func (s surface) total() int { return s.types + s.funcs + s.methods + s.values + s.fields }

// recvName is the type name of a method's receiver.
func recvName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// embeddedName is the name an embedded field goes by.
func embeddedName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return embeddedName(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.IndexExpr:
		return embeddedName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}

func (s *surface) addType(ts *ast.TypeSpec) {
	s.types++
	switch t := ts.Type.(type) {
	case *ast.StructType:
		for _, f := range t.Fields.List {
			if len(f.Names) == 0 {
				if ast.IsExported(embeddedName(f.Type)) {
					s.fields++
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					s.fields++
				}
			}
		}
	case *ast.InterfaceType:
		for _, m := range t.Methods.List {
			for _, n := range m.Names {
				if n.IsExported() {
					s.methods++
				}
			}
		}
	}
}

func (s *surface) addFile(f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			switch {
			case !d.Name.IsExported():
			case d.Recv == nil:
				s.funcs++
			case ast.IsExported(recvName(d.Recv.List[0].Type)):
				s.methods++
			}
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				switch sp := sp.(type) {
				case *ast.TypeSpec:
					if sp.Name.IsExported() {
						s.addType(sp)
					}
				case *ast.ValueSpec:
					for _, n := range sp.Names {
						if n.IsExported() {
							s.values++
						}
					}
				}
			}
		}
	}
}

// surfaces counts every package of the module that has non-test Go
// files, by its directory relative to the module root.
func surfaces(t *testing.T) map[string]surface {
	t.Helper()
	root := filepath.Join("..", "..")
	out := map[string]surface{}
	eachSourceFile(t, root, false, func(_ *token.FileSet, path string, f *ast.File) error {
		if f.Name.Name == "main" {
			return nil
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		s := out[filepath.ToSlash(dir)]
		s.addFile(f)
		out[filepath.ToSlash(dir)] = s
		return nil
	})
	return out
}

// eachSourceFile parses every non-test Go file under root, outside hidden
// folders and testdata (and internal ones too when skipInternal), and
// hands it to fn; a walk, parse or fn error fails the test.
func eachSourceFile(t *testing.T, root string, skipInternal bool, fn func(fset *token.FileSet, path string, f *ast.File) error) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || skipInternal && name == "internal") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		return fn(fset, path, f)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSurface prints each package's exported identifiers (run it with -v)
// and fails when a package of surfaceBudget exceeds its budget.
func TestSurface(t *testing.T) {
	all := surfaces(t)
	dirs := make([]string, 0, len(all))
	for d := range all {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	var b strings.Builder
	fmt.Fprintf(&b, "%-26s %6s %6s %6s %7s %6s %6s\n", "package", "total", "types", "funcs", "methods", "values", "fields")
	for _, d := range dirs {
		s := all[d]
		fmt.Fprintf(&b, "%-26s %6d %6d %6d %7d %6d %6d\n", d, s.total(), s.types, s.funcs, s.methods, s.values, s.fields)
	}
	t.Log("exported identifiers (go/ast):\n" + b.String())
	for pkg, max := range surfaceBudget {
		s, ok := all[pkg]
		if !ok {
			t.Errorf("%s: no such package", pkg)
			continue
		}
		if s.total() > max {
			t.Errorf("%s exports %d identifiers, over its budget of %d: keep management, metrics and helpers out of its front page (#20)", pkg, s.total(), max)
		}
	}
}

// TestNoExportedMutableVariables: outside internal packages, an exported
// package-level variable is a sentinel error (errors.New, fmt.Errorf);
// anything else a caller could reassign is a function or a constant (#20).
func TestNoExportedMutableVariables(t *testing.T) {
	root := filepath.Join("..", "..")
	checked := 0
	eachSourceFile(t, root, true, func(fset *token.FileSet, _ string, f *ast.File) error {
		checked++
		for _, v := range mutableExports(f) {
			t.Errorf("%s: exported variable %s: make it a function, a constant or unexported", fset.Position(v.Pos()), v.Name)
		}
		return nil
	})
	if checked == 0 {
		t.Fatal("no files checked")
	}
}

// mutableExports lists f's exported package-level variables that are not
// sentinel errors.
func mutableExports(f *ast.File) []*ast.Ident {
	var out []*ast.Ident
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if n.IsExported() && !(i < len(vs.Values) && isErrorCall(vs.Values[i])) {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

func isErrorCall(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && (pkg.Name == "errors" && sel.Sel.Name == "New" || pkg.Name == "fmt" && sel.Sel.Name == "Errorf")
}

func TestMutableExportsCanFail(t *testing.T) {
	src := `package p
import "errors"
var ErrX = errors.New("x")
var Limit = 3
var (a = 1; Table = []int{1})
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range mutableExports(f) {
		names = append(names, n.Name)
	}
	if strings.Join(names, ",") != "Limit,Table" {
		t.Fatalf("mutableExports = %v, want Limit, Table", names)
	}
}
