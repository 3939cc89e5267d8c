package soap

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/beevik/etree"
)

// etreeWrite is what appendToken must reproduce.
func etreeWrite(t etree.Token) []byte {
	var buf bytes.Buffer
	t.WriteTo(&buf, &etree.WriteSettings{})
	return buf.Bytes()
}

// textTree is an element holding s as an attribute value and as text,
// plus the other token kinds.
func textTree(s string) *etree.Element {
	root := etree.NewElement("r")
	root.Space = "p"
	root.CreateAttr("xmlns:p", "urn:p")
	root.CreateAttr("p:a", s)
	root.CreateText(s)
	root.CreateCData(s)
	root.CreateComment(s)
	root.CreateProcInst("pi", s)
	root.CreateElement("empty")
	root.CreateDirective("x")
	return root
}

// TestAppendTokenMatchesEtree: byte for byte what etree writes, for the
// example envelopes and for text needing every escape and replacement.
func TestAppendTokenMatchesEtree(t *testing.T) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*.xml"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := etreeRead(b, DefaultMaxDepth)
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range doc.Child {
			if got, want := appendToken(nil, tok), etreeWrite(tok); !bytes.Equal(got, want) {
				t.Errorf("%s:\n got %q\nwant %q", n, got, want)
			}
		}
	}
	for _, s := range []string{"", "plain", `&<>'"`, "\t\n\r", "\x00\x01\x1f\x7f", "é日\U0001F600", "\xff\xfe", "\uFFFD\uFFFE\uFFFF",
		"\xef\xbf", "a]]>b", "--", "x\xed\xa0\x80y"} {
		tree := textTree(s)
		if got, want := appendToken(nil, tree), etreeWrite(tree); !bytes.Equal(got, want) {
			t.Errorf("%q:\n got %q\nwant %q", s, got, want)
		}
	}
}

// FuzzAppendToken: any string, as attribute value and text, is written as
// etree writes it.
func FuzzAppendToken(f *testing.F) {
	for _, s := range []string{"a&b", "\xff", "\uFFFE", "<x>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tree := textTree(s)
		if got, want := appendToken(nil, tree), etreeWrite(tree); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %q\nwant %q", s, got, want)
		}
	})
}
