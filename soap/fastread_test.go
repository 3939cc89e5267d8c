package soap

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// etreeRead is what Parse falls back to: etree's reader with Parse's
// settings.
func etreeRead(b []byte, maxDepth int) (*etree.Document, error) {
	doc := etree.NewDocument()
	doc.ReadSettings = etree.ReadSettings{CharsetReader: refuseCharset, MaxDepth: maxDepth, PreserveDuplicateAttrs: true}
	return doc, doc.ReadFromBytes(b)
}

// sameTree reports the first difference between two documents: token
// kinds, names, attributes (with their owner), text with its white-space
// and CDATA flags, comments, processing instructions, parents and indexes.
func sameTree(got, want *etree.Document) error {
	return sameChildren("document", &got.Element, &want.Element)
}

func sameChildren(path string, got, want *etree.Element) error {
	if len(got.Child) != len(want.Child) {
		return fmt.Errorf("%s: %d children, want %d", path, len(got.Child), len(want.Child))
	}
	for i := range got.Child {
		g, w := got.Child[i], want.Child[i]
		p := fmt.Sprintf("%s/%d", path, i)
		if g.Parent() != got || g.Index() != i {
			return fmt.Errorf("%s: parent or index not set (index %d)", p, g.Index())
		}
		switch w := w.(type) {
		case *etree.Element:
			g, ok := g.(*etree.Element)
			if !ok {
				return fmt.Errorf("%s: %T, want element", p, got.Child[i])
			}
			if g.Space != w.Space || g.Tag != w.Tag {
				return fmt.Errorf("%s: element %q:%q, want %q:%q", p, g.Space, g.Tag, w.Space, w.Tag)
			}
			if len(g.Attr) != len(w.Attr) {
				return fmt.Errorf("%s: %d attributes, want %d", p, len(g.Attr), len(w.Attr))
			}
			for k := range g.Attr {
				ga, wa := g.Attr[k], w.Attr[k]
				if ga.Space != wa.Space || ga.Key != wa.Key || ga.Value != wa.Value || ga.Element() != g {
					return fmt.Errorf("%s: attribute %d %+v, want %+v", p, k, ga, wa)
				}
			}
			if err := sameChildren(p+"/"+w.Tag, g, w); err != nil {
				return err
			}
		case *etree.CharData:
			g, ok := g.(*etree.CharData)
			if !ok || g.Data != w.Data || g.IsCData() != w.IsCData() || g.IsWhitespace() != w.IsWhitespace() {
				return fmt.Errorf("%s: %#v, want text %q (cdata %v, white space %v)", p, got.Child[i], w.Data, w.IsCData(), w.IsWhitespace())
			}
		case *etree.Comment:
			if g, ok := g.(*etree.Comment); !ok || g.Data != w.Data {
				return fmt.Errorf("%s: %#v, want comment %q", p, got.Child[i], w.Data)
			}
		case *etree.ProcInst:
			if g, ok := g.(*etree.ProcInst); !ok || g.Target != w.Target || g.Inst != w.Inst {
				return fmt.Errorf("%s: %#v, want processing instruction %q %q", p, got.Child[i], w.Target, w.Inst)
			}
		default:
			return fmt.Errorf("%s: unexpected %T from etree", p, w)
		}
	}
	return nil
}

// checkReadFast is the property: what readFast accepts, etree reads to the
// same tree.
func checkReadFast(t *testing.T, b []byte) (accepted bool) {
	t.Helper()
	fast := readFast(b, DefaultMaxDepth, DefaultMaxAttributes, DefaultMaxElements)
	if fast == nil {
		return false
	}
	want, err := etreeRead(b, DefaultMaxDepth)
	if err != nil {
		t.Fatalf("readFast accepted what etree refuses (%v):\n%q", err, b)
	}
	if err := sameTree(fast, want); err != nil {
		t.Fatalf("readFast and etree differ: %v\ninput %q", err, b)
	}
	// Parse does not check readFast's documents again.
	if err := checkDocument(fast, ParseOptions{}.withDefaults()); err != nil {
		t.Fatalf("readFast took a document checkDocument refuses (%v):\n%q", err, b)
	}
	return true
}

// writtenEnvelopes are envelopes this package writes: what a wsrkit peer
// sends and answers.
func writtenEnvelopes(t *testing.T) map[string][]byte {
	out := map[string][]byte{}
	body := []byte(`<o:Ping xmlns:o="urn:o">a &amp; b</o:Ping>`)
	for _, v := range []Version{SOAP11, SOAP12} {
		req := &Request{
			MessageID:    MessageID{GroupID: "mid:1@x", Sequence: &SequenceNum{Number: 7}},
			ExpiryTime:   time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
			ReplyPattern: ReplyPattern{Value: group.ReplyCallback, ReplyTo: &ReplyTo{BareURI: "http://x/acks"}},
			Flags:        group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: true},
		}
		b, err := AppendRequestEnvelope(nil, v, req, body)
		if err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("request-%v", v)] = b
		b, err = AppendResponseEnvelope(nil, v, benchAck(), faults.Extended, nil)
		if err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("response-%v", v)] = b
	}
	return out
}

// TestReadFastTakesWhatPeersSend: the fast path is the one taken for every
// example envelope of the digest and everything this package writes, and
// builds etree's tree for each.
func TestReadFastTakesWhatPeersSend(t *testing.T) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*.xml"))
	if len(names) < 5 {
		t.Fatalf("only %d testdata envelopes", len(names))
	}
	inputs := writtenEnvelopes(t)
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		inputs[n] = b
	}
	for name, b := range inputs {
		if !checkReadFast(t, b) {
			t.Errorf("%s: readFast declined it", name)
		}
	}
}

// readFastCases are inputs readFast must take (and read as etree does).
var readFastCases = []string{
	`<a/>`,
	`<a></a>`,
	"\n<a/>\n",
	`<?xml version="1.0"?><a/>`,
	`<?xml version='1.0' encoding='utf-8' standalone='yes'?>` + "\n<a/>",
	`<?xml version="1.0" encoding="UTF-8" ?><a/>`,
	`<!-- c --><a/><!---->`,
	`<p:a xmlns:p="urn:p" p:x="1" x = '2'y="3"><p:b/></p:a >`,
	`<a>&lt;&gt;&amp;&apos;&quot;&#65;&#x42;&#x1F600;&#13;</a>`,
	`<a x="&lt;&#9;" y='"' z="'">t</a>`,
	`<a><![CDATA[]]><![CDATA[ x < y & ]] ]]>tail</a>`,
	"<a>\t \n</a>",
	"<a>héllo — 日本 \U0001F600</a>",
	`<a>]]&gt; ] ]] > </a>`,
	`<a><!-- a - b --></a>`,
	`<a_b.c-d e.f="g"/>`,
}

func TestReadFastCases(t *testing.T) {
	for _, in := range readFastCases {
		if !checkReadFast(t, []byte(in)) {
			t.Errorf("readFast declined %q", in)
		}
	}
}

// TestReadFastDeclines: what readFast leaves to etree's reader — every
// malformed input, and well-formed ones it does not model. Parse still
// answers each as before (etree's reader is the fallback).
func TestReadFastDeclines(t *testing.T) {
	deep := strings.Repeat("<a>", DefaultMaxDepth+1) + strings.Repeat("</a>", DefaultMaxDepth+1)
	var attrs strings.Builder
	attrs.WriteString("<a")
	for i := range DefaultMaxAttributes + 1 {
		fmt.Fprintf(&attrs, ` a%d="1"`, i)
	}
	attrs.WriteString("/>")
	for _, in := range []string{
		``, ` `, `<a>`, `<a></b>`, `<a/><b/>`, `text<a/>`, `<a/>text`, `<a>x`, `<a x=1/>`, `<a x/>`,
		`<a x="1" x="2"/>`, `<a x="<"/>`, `<a>]]></a>`, `<a>&bogus;</a>`, `<a>&#xD800;</a>`, `<a>&#1;</a>`,
		`<a>&amp</a>`, "<a>\r\n</a>", "<a>\x01</a>", "<a>\xff</a>", `<é/>`, `<a:b:c/>`, `<:a/>`, `<a:/>`, `<1a/>`,
		`<!DOCTYPE a><a/>`, `<?pi x?><a/>`, `<a><?pi x?></a>`, `<?xml version="1.1"?><a/>`,
		`<?xml version="1.0" encoding="ISO-8859-1"?><a/>`, ` <?xml version="1.0"?><a/>`,
		`<a><!-- x -- y --></a>`, `<a><!-- x ---></a>`, `<a><![CDATA[x</a>`, deep, attrs.String(),
		`<p:a/>`, `<a p:x="1"/>`, `<a xmlns:p=""/>`, `<a><p:b xmlns:q="urn:q"/></a>`, `<a xmlns:p="urn:p"/><p:b/>`,
	} {
		if readFast([]byte(in), DefaultMaxDepth, DefaultMaxAttributes, DefaultMaxElements) != nil {
			t.Errorf("readFast took %q", in)
		}
	}
	// The fallback keeps etree's answers: a repeated attribute is refused
	// by name, a too deep document by its limit.
	for in, rule := range map[string]string{
		`<S:Envelope xmlns:S="` + NamespaceSOAP11 + `" x="1" x="2"><S:Body/></S:Envelope>`: "soap.xml.duplicate-attribute",
		deep:               "soap.limit.depth",
		`<a></b>`:          "soap.xml.malformed",
		`<!DOCTYPE a><a/>`: "soap.xml.doctype",
	} {
		_, err := Parse([]byte(in), ParseOptions{})
		if f, ok := err.(*faults.Fault); !ok || f.Rule != rule {
			t.Errorf("Parse(%.40q) = %v, want rule %s", in, err, rule)
		}
	}
}

// FuzzReadFast: whatever readFast accepts, etree's reader accepts and reads
// to the same tree.
func FuzzReadFast(f *testing.F) {
	addExamples(f)
	for _, c := range readFastCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkReadFast(t, data)
	})
}

// An attribute value every envelope repeats (a namespace URI,
// mustUnderstand's "1") is read without an allocation; any other is read
// as it is written, whatever its length or prefix (#22).
func TestInternValue(t *testing.T) {
	for _, v := range []string{NamespaceSOAP11, NamespaceSOAP12, NamespaceWSRM, "1", "true"} {
		b := []byte(v)
		if got := internValue(b); got != v {
			t.Fatalf("internValue(%q) = %q", v, got)
		}
		if n := testing.AllocsPerRun(10, func() { internValue(b) }); n != 0 {
			t.Errorf("internValue(%q): %v allocations, want 0", v, n)
		}
	}
	for _, v := range []string{"", "7", "12345", "http://", "http://example.org/x", "urn:uuid:0d5f7c1e", NamespaceSOAP11 + "x"} {
		if got := internValue([]byte(v)); got != v {
			t.Fatalf("internValue(%q) = %q", v, got)
		}
	}
}
