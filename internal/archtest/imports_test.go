package archtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/wsrkit/wsrkit"

type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// listPackages runs `go list -json` over the module.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports", module+"/...")
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

// effectStd reports whether a standard-library package brings the OS, the
// network or randomness into a package (what the pure layers must not reach).
func effectStd(path string) bool {
	switch {
	case path == "os", strings.HasPrefix(path, "os/"),
		path == "net", strings.HasPrefix(path, "net/"),
		path == "io/fs", path == "syscall", path == "math/rand", path == "math/rand/v2",
		path == "crypto/rand":
		return true
	}
	return false
}

// layer orders the module: non-test code imports only packages of a lower
// layer (pure core → soap → outbound calls → store → rmp → drivers → gateway → cmd), and
// test-support packages only where its rule names them.
type layer int

const (
	codes     layer = iota // the fault codes: standard library only
	base                   // vocabulary: standard library and the fault codes
	core                   // the pure state machines
	wire                   // SOAP envelopes in and out
	calls                  // the outbound HTTP POSTs, over the wire layer
	contract               // the persistence contract
	storeImpl              // key layout shared by the stores
	stores                 // the store implementations
	engine                 // Engine and the Node driver
	driver                 // other drivers of the engine
	gateway                // the HTTP gateway
	command                // the binary
	support                // test kits and tools; above everything, imported only where named
)

// rule says what one package may import.
type rule struct {
	layer layer
	// uses lists the module packages its non-test files may import.
	uses []string
	// effects allows the standard-library packages of effectStd.
	effects bool
	// ext lists the third-party import path prefixes its files may import,
	// test files included (see testExt for what any test may import).
	ext []string
	// testUses lists module packages its tests may import beyond itself,
	// its uses, lower layers and support packages.
	testUses []string
	why      string
}

var (
	pureCore = []string{"faults", "rmp/group", "rmp/receiver", "rmp/sender"}
	allStore = []string{"store", "store/memstore", "store/pebblestore", "store/etcdstore"}
)

func with(lists ...[]string) []string {
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	return all
}

// rules has one entry for every package of the module: a package without
// one fails TestImportRules.
var rules = map[string]rule{
	"faults": {layer: codes, why: "the fault codes: standard library only, no I/O"},
	"rmp/group": {layer: base, uses: []string{"faults"},
		why: "the vocabulary of groups, replies included (a reply carries a fault code): standard library and faults, no I/O"},
	"rmp/receiver": {layer: core, uses: []string{"rmp/group", "faults"}, why: "a pure state machine over group and faults; never the sender (STYLE.md)"},
	"rmp/sender":   {layer: core, uses: []string{"rmp/group", "faults"}, why: "a pure state machine over group and faults; never the receiver (STYLE.md)"},
	"soap": {layer: wire, uses: []string{"rmp/group", "faults"}, ext: []string{"github.com/beevik/etree"},
		why: "a codec over the vocabulary, never the state machines: no I/O, the only importer of etree"},
	"store": {layer: contract, uses: []string{"rmp/group"}, why: "the persistence contract: interfaces and keys over group, no I/O"},
	"store/internal/kvplan": {layer: storeImpl, uses: []string{"store", "rmp/group"},
		why: "the key layout the stores share: pure"},
	"store/internal/callgate": {layer: storeImpl, uses: []string{"store"},
		why: "admits a store's calls until Close, which waits for them: no I/O"},
	"store/memstore": {layer: stores, uses: []string{"store", "store/internal/kvplan", "rmp/group"},
		why: "the memory store: pure, behind the contract"},
	"store/pebblestore": {layer: stores, uses: []string{"store", "store/internal/callgate", "store/internal/kvplan", "rmp/group"}, effects: true,
		ext: []string{"github.com/cockroachdb/pebble"}, why: "the disk store: the only importer of pebble"},
	"store/etcdstore": {layer: stores, uses: []string{"store", "store/internal/callgate", "store/internal/kvplan", "rmp/group"}, effects: true,
		ext: []string{"go.etcd.io/"}, testUses: []string{"store/pebblestore"},
		why: "the shared store: etcd stays behind it"},
	"rmp/httpbody": {layer: wire, effects: true,
		why: "reading HTTP request bodies within limits and a shared budget: standard library only"},
	"internal/heapfloor": {layer: base,
		why: "the process's GC heap floor, which wsrkit serve and demo set: standard library only, no I/O"},
	"rmp/clock": {layer: base, ext: []string{"github.com/benbjohnson/clock"},
		why: "the Node's time source, the interface wsrkit owns over benbjohnson/clock (its only importer): no I/O"},
	"rmp/peer": {layer: wire, effects: true,
		why: "the verified identity of a TLS peer, which the engine and the transport share: standard library only"},
	"rmp/outbound": {layer: calls, uses: []string{"soap", "rmp/peer"}, effects: true,
		why: "the outbound POSTs: the transport (it parses replies with soap, names the server's certificate with peer) and the policy for URLs peers and producers chose"},
	"rmp/admin": {layer: wire, uses: pureCore,
		why: "the management views and counters over the pure core, kept off rmp's front page (#20)"},
	"rmp": {layer: engine, uses: with(pureCore, []string{"soap", "store", "rmp/admin", "rmp/httpbody", "rmp/outbound", "rmp/peer", "rmp/clock"}), effects: true,
		why: "the engine joins core, soap and the store contract; it never picks a store implementation"},
	"rmp/sim": {layer: driver, uses: with(pureCore, []string{"rmp", "rmp/admin", "rmp/outbound"}, allStore[:3]), effects: true,
		why: "a simulation driving rmp over real stores"},
	"conformance": {layer: driver, uses: with(pureCore, []string{"soap", "rmp", "rmp/outbound"}, allStore[:3]), effects: true,
		why: "the scenario runner drives the engine over real stores"},
	"internal/console": {layer: driver, effects: true, ext: []string{"github.com/chromedp/"},
		testUses: []string{"internal/gateway"},
		why:      "the web console: templates over the gateway's JSON API, which it reads in process; standard library only (chromedp drives its browser test)"},
	"internal/gateway": {layer: gateway, uses: with(pureCore, []string{"soap", "rmp", "rmp/admin", "rmp/httpbody", "rmp/outbound", "rmp/peer", "rmp/clock", "internal/console"}, allStore), effects: true,
		ext: []string{"golang.org/x/net/"}, why: "the HTTP gateway over the engine and the stores"},
	"cmd/wsrkit": {layer: command, uses: []string{"internal/gateway", "internal/heapfloor", "conformance", "rmp", "rmp/admin", "faults", "internal/faultnet"}, effects: true,
		why: "the binary: flags and wiring over the gateway and the runner"},

	"internal/archtest":        {layer: support, why: "these tests"},
	"internal/benchkit":        {layer: support, uses: []string{"rmp/group", "soap"}, effects: true, why: "benchmark fixtures"},
	"internal/benchreport":     {layer: support, effects: true, why: "the benchmark report tool"},
	"internal/faultnet":        {layer: support, effects: true, why: "a lossy HTTP link for tests and the demo"},
	"internal/interop":         {layer: support, why: "interoperability tests with outside SOAP software"},
	"internal/lbtest":          {layer: support, effects: true, why: "a load balancer for tests"},
	"internal/testpki":         {layer: support, effects: true, why: "certificates for tests"},
	"internal/testtool":        {layer: support, effects: true, why: "optional outside tools for tests"},
	"store/storetest":          {layer: support, uses: []string{"store", "rmp/group"}, effects: true, why: "the store contract kit"},
	"store/etcdstore/etcdtest": {layer: support, effects: true, ext: []string{"go.etcd.io/"}, why: "an embedded etcd for tests"},
}

// testExt lists third-party path prefixes any test file may import: testify;
// etree, which benchmarks elsewhere use as their parsing ceiling; and a DNS
// message codec for tests that answer name lookups themselves.
var testExt = []string{"github.com/stretchr/testify/", "github.com/beevik/etree", "golang.org/x/net/dns/dnsmessage"}

func hasPrefix(prefixes []string, path string) bool {
	for _, p := range prefixes {
		p = strings.TrimSuffix(p, "/")
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// prodProblem says why a non-test file of a package under r may not import
// path, or "" when it may.
func prodProblem(r rule, path string) string {
	switch {
	case isStd(path):
		if effectStd(path) && !r.effects {
			return "no OS, network or randomness here"
		}
	case strings.HasPrefix(path, module+"/") || path == module:
		if !slices.Contains(r.uses, rel(path)) {
			return "not in its rule's uses"
		}
	default:
		if !hasPrefix(r.ext, path) {
			return "third-party package not in its rule's ext"
		}
	}
	return ""
}

// testProblem is prodProblem for the test files of package self.
func testProblem(rs map[string]rule, self string, r rule, path string) string {
	if prodProblem(r, path) == "" {
		return ""
	}
	switch {
	case isStd(path):
		return "" // tests may use the OS, the network (loopback) and seeded randomness
	case strings.HasPrefix(path, module+"/") || path == module:
		p := rel(path)
		if o, ok := rs[p]; p == self || slices.Contains(r.testUses, p) || ok && (o.layer < r.layer || o.layer == support) {
			return ""
		}
		return "a test may import only lower layers, support packages and its rule's testUses"
	default:
		if hasPrefix(testExt, path) {
			return ""
		}
		return "third-party package not in its rule's ext"
	}
}

// violations lists the forbidden imports of p under rs.
func violations(rs map[string]rule, p pkg) []string {
	name := rel(p.ImportPath)
	r, ok := rs[name]
	if !ok {
		return []string{fmt.Sprintf("%s has no rule: add one to rules in internal/archtest/imports_test.go", name)}
	}
	var out []string
	for _, imp := range p.Imports {
		if why := prodProblem(r, imp); why != "" {
			out = append(out, fmt.Sprintf("%s imports %s: %s (%s)", name, imp, why, r.why))
		}
	}
	for _, imp := range append(slices.Clone(p.TestImports), p.XTestImports...) {
		if why := testProblem(rs, name, r, imp); why != "" {
			out = append(out, fmt.Sprintf("%s test imports %s: %s (%s)", name, imp, why, r.why))
		}
	}
	return out
}

// tableProblems checks that the table itself points downward: every package
// a rule uses has a rule and sits in a lower layer (or is a support package).
func tableProblems(rs map[string]rule) []string {
	var out []string
	for name, r := range rs {
		for _, u := range r.uses {
			o, ok := rs[u]
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("rule %s uses %s, which has no rule", name, u))
			case o.layer >= r.layer && o.layer != support:
				out = append(out, fmt.Sprintf("rule %s (layer %d) uses %s (layer %d): imports point downward only", name, r.layer, u, o.layer))
			}
		}
		for _, u := range r.testUses {
			if _, ok := rs[u]; !ok {
				out = append(out, fmt.Sprintf("rule %s testUses %s, which has no rule", name, u))
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestImportRules(t *testing.T) {
	for _, p := range tableProblems(rules) {
		t.Error(p)
	}
	seen := map[string]bool{}
	for _, p := range listPackages(t) {
		seen[rel(p.ImportPath)] = true
		for _, v := range violations(rules, p) {
			t.Error(v)
		}
	}
	for name := range rules {
		if !seen[name] {
			t.Errorf("rule for %s, which is not a package of the module: remove or rename it", name)
		}
	}
}

func TestRulesCanFail(t *testing.T) {
	// The rules must reject what STYLE.md forbids, or the test above proves nothing.
	m := func(p string) string { return module + "/" + p }
	bad := []struct {
		pkg  pkg
		want string
	}{
		{pkg{ImportPath: m("rmp/receiver"), Imports: []string{m("rmp/sender")}}, "not in its rule's uses"},
		{pkg{ImportPath: m("rmp/sender"), Imports: []string{m("soap")}}, "not in its rule's uses"},
		{pkg{ImportPath: m("rmp/group"), Imports: []string{"os"}}, "no OS"},
		{pkg{ImportPath: m("faults"), Imports: []string{"net/http"}}, "no OS"},
		{pkg{ImportPath: m("soap"), Imports: []string{m("store")}}, "not in its rule's uses"},
		{pkg{ImportPath: m("soap"), Imports: []string{m("rmp/receiver")}}, "not in its rule's uses"},
		{pkg{ImportPath: m("soap"), Imports: []string{"net/http"}}, "no OS"},
		{pkg{ImportPath: m("store"), Imports: []string{m("rmp")}}, "not in its rule's uses"},
		{pkg{ImportPath: m("store"), Imports: []string{m("soap")}}, "not in its rule's uses"},
		{pkg{ImportPath: m("store/memstore"), Imports: []string{"os"}}, "no OS"},
		{pkg{ImportPath: m("rmp"), Imports: []string{m("store/pebblestore")}}, "not in its rule's uses"},
		{pkg{ImportPath: m("rmp"), Imports: []string{m("internal/gateway")}}, "not in its rule's uses"},
		{pkg{ImportPath: m("rmp"), Imports: []string{m("internal/testpki")}}, "not in its rule's uses"},
		{pkg{ImportPath: m("internal/gateway"), Imports: []string{m("cmd/wsrkit")}}, "not in its rule's uses"},
		{pkg{ImportPath: m("rmp"), Imports: []string{"go.etcd.io/etcd/client/v3"}}, "third-party"},
		{pkg{ImportPath: m("internal/gateway"), Imports: []string{"github.com/cockroachdb/pebble/v2"}}, "third-party"},
		{pkg{ImportPath: m("rmp"), Imports: []string{"github.com/beevik/etree"}}, "third-party"},
		{pkg{ImportPath: m("rmp"), Imports: []string{"github.com/benbjohnson/clock"}}, "third-party"},
		{pkg{ImportPath: m("rmp/receiver"), TestImports: []string{m("soap")}}, "a test may import only"},
		{pkg{ImportPath: m("rmp/receiver"), XTestImports: []string{m("rmp/sender")}}, "a test may import only"},
		{pkg{ImportPath: m("store"), TestImports: []string{m("rmp")}}, "a test may import only"},
		{pkg{ImportPath: m("rmp"), TestImports: []string{"github.com/cockroachdb/pebble/v2"}}, "third-party"},
		{pkg{ImportPath: m("rmp/nosuch")}, "has no rule"},
	}
	for _, b := range bad {
		got := violations(rules, b.pkg)
		if len(got) != 1 || !strings.Contains(got[0], b.want) {
			t.Errorf("violations(%s %v %v %v) = %q, want one containing %q",
				rel(b.pkg.ImportPath), b.pkg.Imports, b.pkg.TestImports, b.pkg.XTestImports, got, b.want)
		}
	}
	good := []pkg{
		{ImportPath: m("rmp/receiver"), Imports: []string{m("rmp/group"), m("faults"), "time"}, TestImports: []string{"github.com/beevik/etree"}},
		{ImportPath: m("soap"), Imports: []string{"github.com/beevik/etree"}, TestImports: []string{m("internal/testtool"), "os"}},
		{ImportPath: m("rmp"), Imports: []string{m("store"), "net/http", m("rmp/clock")}, TestImports: []string{m("store/pebblestore")}},
		{ImportPath: m("rmp/clock"), Imports: []string{"time", "github.com/benbjohnson/clock"}},
		{ImportPath: m("store/pebblestore"), TestImports: []string{"github.com/cockroachdb/pebble/v2/vfs"}},
	}
	for _, p := range good {
		if got := violations(rules, p); len(got) != 0 {
			t.Errorf("violations(%s) = %q, want none", rel(p.ImportPath), got)
		}
	}

	// The table check refuses an upward or unknown edge.
	upward := map[string]rule{
		"rmp/group":    {layer: base, uses: []string{"rmp/sender"}},
		"rmp/sender":   {layer: core, uses: []string{"rmp/group", "rmp/receiver"}},
		"rmp/receiver": {layer: core, testUses: []string{"gone"}},
	}
	want := []string{
		"rule rmp/group (layer 1) uses rmp/sender (layer 2): imports point downward only",
		"rule rmp/receiver testUses gone, which has no rule",
		"rule rmp/sender (layer 2) uses rmp/receiver (layer 2): imports point downward only",
	}
	if got := tableProblems(upward); !slices.Equal(got, want) {
		t.Errorf("tableProblems = %q, want %q", got, want)
	}
}
