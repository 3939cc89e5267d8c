package soap

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/wsrkit/wsrkit/faults"
)

// scanAll writes b to a new Scanner in pieces of size n (all at once when
// n ≤ 0) and returns its error and how many bytes it took to refuse.
func scanAll(b []byte, o ParseOptions, charset string, n int) (error, int) {
	s := NewScanner(o, charset)
	if n <= 0 {
		n = len(b) + 1
	}
	for i := 0; i < len(b); i += n {
		if _, err := s.Write(b[i:min(i+n, len(b))]); err != nil {
			return err, min(i+n, len(b))
		}
	}
	return nil, len(b)
}

// The Scanner refuses each limit where Parse does, with Parse's rule, and
// stops right after the markup that crossed it; at the limit it accepts.
func TestScannerLimits(t *testing.T) {
	envOf := func(body string) string {
		return `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<e:Envelope xmlns:e="` + NamespaceSOAP11 + `"><e:Body>` + body + `</e:Body></e:Envelope>`
	}
	o := ParseOptions{MaxElements: 10, MaxDepth: 5, MaxAttributes: 3}
	cases := []struct {
		name, doc string
		rule      string // "" accepted
	}{
		// Envelope, Body and 8 more: 10 (the declaration is not counted).
		{"elements at the limit", envOf(strings.Repeat("<y/>", 7) + "<!--c-->"), ""},
		{"elements past", envOf(strings.Repeat("<y/>", 7) + "<![CDATA[<a><b>]]><y/>"), "soap.limit.elements"},
		{"comment hides markup", envOf("<!-- <a><a><a><a><a><a><a><a><a><a> -->"), ""},
		{"depth at the limit", envOf("<a><b><c a='>'/></b></a>"), ""},
		{"depth past", envOf("<a><b><c><d/></c></b></a>"), "soap.limit.depth"},
		{"attributes at the limit", envOf(`<a x="=" y = '"' z="1"/>`), ""},
		{"attributes past", envOf(`<a x="1" y="2" z="3" w="4"/>`), "soap.limit.attributes"},
		{"namespace declarations count", envOf(`<a xmlns:p="u" xmlns:q="v" p:x="1" q:y="2"/>`), "soap.limit.attributes"},
		{"a DOCTYPE stops depth tracking", `<!DOCTYPE x><a><b><c><d><e><f/></e></d></c></b></a>`, ""},
	}
	for _, c := range cases {
		for _, enc := range []string{"utf-8", "utf-16le", "utf-16be", "utf-16 bom"} {
			doc, charset := []byte(c.doc), ""
			switch enc {
			case "utf-16le":
				doc, charset = utf16Bytes(c.doc, false, false), "utf-16le"
			case "utf-16be":
				doc, charset = utf16Bytes(c.doc, true, false), "utf-16be"
			case "utf-16 bom":
				doc = utf16Bytes(c.doc, false, true)
			}
			for _, n := range []int{0, 1, 7} {
				err, _ := scanAll(doc, o, charset, n)
				if c.rule == "" {
					if err != nil {
						t.Errorf("%s (%s, pieces of %d): refused %v", c.name, enc, n, err)
					}
					continue
				}
				var f *faults.Fault
				if !errors.As(err, &f) || f.Code != faults.InvalidRequest || f.Rule != c.rule {
					t.Errorf("%s (%s, pieces of %d): want %s, got %v", c.name, enc, n, c.rule, err)
				}
			}
		}
		// Parse agrees (UTF-8; the DOCTYPE case is refused by Parse itself).
		_, err := Parse([]byte(c.doc), o)
		switch {
		case c.rule == "" && strings.HasPrefix(c.doc, "<!DOCTYPE"):
		case c.rule == "" && err != nil:
			t.Errorf("%s: Parse refused %v", c.name, err)
		case c.rule != "":
			wantFault(t, err, faults.InvalidRequest, c.rule, faults.ScopeRequest)
		}
	}
}

// The parse bomb of issue 18 is refused after ~40 KB of its 3.6 MB.
func TestScannerStopsEarly(t *testing.T) {
	bomb := []byte(envOfMany(900_000))
	err, read := scanAll(bomb, ParseOptions{}, "", 4096)
	wantFault(t, err, faults.InvalidRequest, "soap.limit.elements", faults.ScopeRequest)
	if read > 48<<10 {
		t.Fatalf("refused after %d bytes of %d", read, len(bomb))
	}
	// A declaration with a CR is not readFast's: counted, as countMarkup does.
	_, err = Parse([]byte("<?xml version=\"1.0\"?>\r\n"+envOfMany(DefaultMaxElements-2)), ParseOptions{})
	wantFault(t, err, faults.InvalidRequest, "soap.limit.elements", faults.ScopeRequest)
	err, _ = scanAll([]byte("<?xml\rversion=\"1.0\"?>"+envOfMany(DefaultMaxElements-2)), ParseOptions{}, "", 0)
	wantFault(t, err, faults.InvalidRequest, "soap.limit.elements", faults.ScopeRequest)
	// The same with a space is readFast's: 10000, accepted.
	good := "<?xml version=\"1.0\"?>\n" + envOfMany(DefaultMaxElements-2)
	if _, err := Parse([]byte(good), ParseOptions{}); err != nil {
		t.Fatal(err)
	}
	if err, _ := scanAll([]byte(good), ParseOptions{}, "", 3); err != nil {
		t.Fatal(err)
	}
}

// envOfMany is an envelope of n empty elements in its Body (n+2 elements).
func envOfMany(n int) string {
	return `<s:Envelope xmlns:s="` + NamespaceSOAP11 + `"><s:Body>` + strings.Repeat("<y/>", n) + `</s:Body></s:Envelope>`
}

// FuzzScanner: whatever the input and however it is split, the Scanner
// refuses only what Parse refuses; an element count it refuses is Parse's
// refusal too (rule soap.limit.elements); the split changes nothing.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		envOfMany(3), envOfMany(4), "<?xml version='1.0'?><a><!--x--><b/></a>", "<?xml?><a/>",
		"<a b='<' c=\">\"><b><c/></b></a>", "<!DOCTYPE a [<!ENTITY x '<y/>'>]><a>&x;</a>",
		"<a><![CDATA[]]]]><b/>]]></a>", "<?pi?><a/><?x ?>", "\xef\xbb\xbf<a><b/></a>", "<<a/>", "<!-->",
	} {
		f.Add([]byte(s), uint8(1))
	}
	names, _ := filepath.Glob(filepath.Join("testdata", "*.xml"))
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil {
			f.Add(b, uint8(5))
		}
	}
	o := ParseOptions{MaxElements: 4, MaxDepth: 3, MaxAttributes: 2}
	f.Fuzz(func(t *testing.T, data []byte, piece uint8) {
		whole, _ := scanAll(data, o, "", 0)
		split, _ := scanAll(data, o, "", int(piece))
		if (whole == nil) != (split == nil) || whole != nil && whole.Error() != split.Error() {
			t.Fatalf("whole: %v; in pieces of %d: %v", whole, piece, split)
		}
		if whole == nil {
			return
		}
		_, err := Parse(data, o)
		if err == nil {
			t.Fatalf("the Scanner refused (%v) what Parse accepts: %q", whole, data)
		}
		var sf, pf *faults.Fault
		errors.As(whole, &sf)
		if sf.Rule == "soap.limit.elements" && (!errors.As(err, &pf) || pf.Rule != sf.Rule && pf.Rule != "soap.xml.encoding") {
			t.Fatalf("the Scanner refused %s, Parse %v: %q", sf.Rule, err, data)
		}
	})
}

// A first piece that holds the three bytes the encoding is told by is
// scanned where it is: writing a whole envelope allocates a small part of
// its size (it was copied once per request, #22).
func TestScannerDoesNotCopyTheFirstPiece(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "bench-request-s11.xml"))
	if err != nil {
		t.Fatal(err)
	}
	const runs = 50
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		if _, err := NewScanner(ParseOptions{}, "").Write(data); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per >= uint64(len(data))/2 {
		t.Fatalf("NewScanner and one Write of %d bytes allocate %d bytes", len(data), per)
	}
}
