package soap

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/wsrkit/wsrkit/faults"
)

const s11Decl = `xmlns:e="` + NamespaceSOAP11 + `"`

// bothReaders returns in as readFast takes it and, with a carriage return
// readFast leaves to etree's reader, as etree reads it.
func bothReaders(in string) map[string][]byte {
	return map[string][]byte{"fast": []byte(in), "etree": []byte(in + "\r\n")}
}

// Issue 18 item 4: a document has exactly one root (XML 1.0 §2.1); a
// second envelope after the first never reaches a consumer.
func TestParseSingleRoot(t *testing.T) {
	one := `<e:Envelope ` + s11Decl + `><e:Body><p:x xmlns:p="urn:p"/></e:Body></e:Envelope>`
	for name, in := range map[string]string{
		"two envelopes":    one + one,
		"trailing element": one + `<x/>`,
		"after a comment":  one + "<!-- c -->\n" + `<e:Envelope ` + s11Decl + `><e:Body/></e:Envelope>`,
	} {
		for reader, b := range bothReaders(in) {
			_, err := Parse(b, ParseOptions{})
			if f, ok := err.(*faults.Fault); !ok || f.Code != faults.InvalidRequest || f.Rule != "soap.xml.second-root" {
				t.Errorf("%s, %s reader: %v, want InvalidRequest soap.xml.second-root", name, reader, err)
			}
		}
	}
	for reader, b := range bothReaders(one + "\n<!-- c -->\n") {
		if _, err := Parse(b, ParseOptions{}); err != nil {
			t.Errorf("%s: one root and a comment: %v", reader, err)
		}
	}
}

// Issue 18 item 4: every prefix of an element or attribute name is bound
// (Namespaces in XML §5), by both readers.
func TestParseUnboundPrefix(t *testing.T) {
	wrap := func(body string) string {
		return `<e:Envelope ` + s11Decl + `><e:Body>` + body + `</e:Body></e:Envelope>`
	}
	for _, body := range []string{
		`<x:y/>`,
		`<x:y></x:y>`,
		`<a x:b="1"/>`,
		`<p:a xmlns:p="urn:p"/><p:b/>`,                // out of scope after its declaring element
		`<a xmlns:p=""><p:b/></a>`,                    // a prefix cannot be undeclared (Namespaces §3)
		`<a xmlns:p="urn:p"><b xmlns:p=""/></a>`,      // nor re-declared empty
		`<a xmlns:p="urn:p"></a><b><c><p:d/></c></b>`, // a sibling's declaration
	} {
		for reader, b := range bothReaders(wrap(body)) {
			_, err := Parse(b, ParseOptions{})
			f := wantFault(t, err, faults.InvalidRequest, "soap.xml.unbound-prefix", faults.ScopeRequest)
			if !strings.Contains(f.Reason, "prefix") {
				t.Errorf("%s %s: reason %q", reader, body, f.Reason)
			}
		}
	}
	if _, err := Parse([]byte(`<x:Envelope xmlns:e="`+NamespaceSOAP11+`"><e:Body/></x:Envelope>`), ParseOptions{}); err == nil {
		t.Error("an unbound root prefix was accepted")
	}
	for _, body := range []string{
		`<p:a xmlns:p="urn:p"><p:b p:c="1"><p:d/></p:b></p:a>`,
		`<a xml:lang="en" e:mustUnderstand="0"/>`,
		`<p:a xmlns:p="urn:p"/><p:b xmlns:p="urn:q"/>`,
		`<a xmlns="urn:d"><b/></a><c xmlns=""/>`,
	} {
		for reader, b := range bothReaders(wrap(body)) {
			if _, err := Parse(b, ParseOptions{}); err != nil {
				t.Errorf("%s: %s: %v", reader, body, err)
			}
		}
	}
}

// Issue 18 item 2: MaxElements counts elements, comments and CDATA
// sections while reading, on both paths.
func TestParseMaxElements(t *testing.T) {
	body := func(n int, unit string) string {
		// Envelope and Body are two of the limit.
		return `<e:Envelope ` + s11Decl + `><e:Body>` + strings.Repeat(unit, n-2) + `</e:Body></e:Envelope>`
	}
	for _, unit := range []string{`<y/>`, `<!---->`, `<y></y>`, `<![CDATA[<y/><y/>]]>`} {
		for reader, b := range bothReaders(body(50, unit)) {
			if _, err := Parse(b, ParseOptions{MaxElements: 50}); err != nil {
				t.Errorf("%s %s: 50 at a limit of 50: %v", reader, unit, err)
			}
			_, err := Parse(b, ParseOptions{MaxElements: 49})
			wantFault(t, err, faults.InvalidRequest, "soap.limit.elements", faults.ScopeRequest)
		}
	}
	// The default: 10000.
	for _, b := range bothReaders(body(DefaultMaxElements+1, `<y/>`)) {
		_, err := Parse(b, ParseOptions{})
		wantFault(t, err, faults.InvalidRequest, "soap.limit.elements", faults.ScopeRequest)
	}
}

// BenchmarkParseManyElements: an envelope of 900k tiny elements (3.6 MB)
// is refused after reading MaxElements of them; B/op is what it costs.
func BenchmarkParseManyElements(b *testing.B) {
	for reader, data := range bothReaders(`<e:Envelope ` + s11Decl + `><e:Body>` + strings.Repeat(`<y/>`, 900000) + `</e:Body></e:Envelope>`) {
		b.Run(reader, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(data, ParseOptions{MaxBytes: 8 << 20}); err == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}

func utf16Bytes(s string, bigEndian, bom bool) []byte {
	var out []byte
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xFEFF}, units...)
	}
	for _, u := range units {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

// Issue 17 item 5: UTF-16 envelopes (XML 1.0 §4.3.3) are read, by both
// readers, with or without a BOM; what comes out is UTF-8.
func TestParseUTF16(t *testing.T) {
	text := "héllo 日本 \U0001F600"
	for _, decl := range []string{``, `<?xml version="1.0" encoding="UTF-16"?>`, `<?xml version='1.0' encoding='utf-16le'?>` + "\n"} {
		for _, crlf := range []string{"", "\r\n"} {
			doc := decl + `<e:Envelope ` + s11Decl + `><e:Header><r:Request xmlns:r="` + NamespaceWSRM + `" e:mustUnderstand="1">` +
				okMsgID + okExpiry + okPattern + `</r:Request></e:Header>` + crlf +
				`<e:Body><p:x xmlns:p="urn:p">` + text + `</p:x></e:Body></e:Envelope>`
			for _, c := range []struct {
				be, bom bool
				charset string
			}{{true, true, ""}, {false, true, ""}, {true, false, ""}, {false, false, ""}, {false, false, "utf-16le"}, {true, false, "UTF-16"}} {
				in := utf16Bytes(doc, c.be, c.bom)
				b, err := ToUTF8(in, c.charset)
				noErr(t, err, decl, c)
				env, err := Parse(b, ParseOptions{})
				noErr(t, err, decl, c)
				if c.charset == "" { // Parse detects it by itself
					env, err = Parse(in, ParseOptions{})
					noErr(t, err, decl, c)
				}
				equal(t, "mid:g@h", env.Request.MessageID.GroupID)
				out, err := env.WithoutWSRM()
				noErr(t, err)
				contains(t, string(out), text)
				if decl != "" {
					// The declaration is kept and says UTF-8.
					if !bytes.HasPrefix(out, []byte("<?xml")) || !bytes.Contains(out[:50], []byte("UTF-8")) ||
						bytes.Contains(bytes.ToLower(out), []byte("utf-16")) {
						t.Fatalf("output does not declare UTF-8: %s", out)
					}
				}
			}
		}
	}
	// UTF-8 is passed through untouched (the hot path does not copy).
	u8 := []byte(`<a/>`)
	got, err := ToUTF8(u8, "utf-8")
	noErr(t, err)
	if &got[0] != &u8[0] {
		t.Error("ToUTF8 copied a UTF-8 document")
	}
	for name, in := range map[string][]byte{
		"odd length":           append(utf16Bytes(`<a/>`, true, true), 0),
		"lone high surrogate":  append(utf16Bytes(`<a>`, true, true), 0xD8, 0x00, 0, '<'),
		"lone low surrogate":   append(utf16Bytes(`<a>`, false, true), 0x00, 0xDC),
		"declares UTF-8":       utf16Bytes(`<?xml version="1.0" encoding="UTF-8"?><a/>`, true, true),
		"declares ISO-8859-1":  utf16Bytes(`<?xml version="1.0" encoding="ISO-8859-1"?><a/>`, false, true),
		"surrogate at the end": append(utf16Bytes(`<a/>`, true, true), 0xD8, 0x3D),
	} {
		_, err := Parse(in, ParseOptions{})
		if f, ok := err.(*faults.Fault); !ok || f.Rule != "soap.xml.encoding" {
			t.Errorf("%s: %v, want soap.xml.encoding", name, err)
		}
	}
}
