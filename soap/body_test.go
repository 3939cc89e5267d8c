package soap

import (
	"mime"
	"strings"
	"testing"

	"github.com/beevik/etree"
)

const forwardEnv = `<?xml version="1.0"?>
<S:Envelope xmlns:S="` + NamespaceSOAP11 + `" xmlns:o="urn:orders" xmlns="urn:default"><S:Header>
<wsrm:Request xmlns:wsrm="` + NamespaceWSRM + `"><wsrm:MessageId groupId="g"/><wsrm:ExpiryTime>2025-01-01T00:00:00Z</wsrm:ExpiryTime><wsrm:ReplyPattern><wsrm:Value>Response</wsrm:Value></wsrm:ReplyPattern></wsrm:Request>
<sec:Security xmlns:sec="urn:sec">token</sec:Security>
</S:Header><S:Body>text &amp; <o:Order xsi:type="o:T" xmlns:xsi="urn:xsi"><Item/></o:Order><!--c--><![CDATA[<raw>]]></S:Body></S:Envelope>`

func TestBodyContentIsStandalone(t *testing.T) {
	env, err := Parse([]byte(forwardEnv), ParseOptions{})
	noErr(t, err)
	got := string(env.BodyContent())
	// In-scope declarations travel with the element (the o: QName value
	// and the default namespace of Item need them).
	want := `text &amp; <o:Order xsi:type="o:T" xmlns:xsi="urn:xsi" xmlns="urn:default" xmlns:S="` + NamespaceSOAP11 +
		`" xmlns:o="urn:orders"><Item/></o:Order><!--c-->&lt;raw&gt;`
	equal(t, want, got)
	// Wrapped in any envelope, it parses to the same namespaces.
	out, err := AppendEnvelope(nil, SOAP12, Headers{}, 0, env.BodyContent())
	noErr(t, err)
	again, err := Parse(out, ParseOptions{})
	noErr(t, err)
	order := again.Body.ChildElements()[0]
	equal(t, "urn:orders", order.NamespaceURI())
	equal(t, "urn:default", order.ChildElements()[0].NamespaceURI())
}

func TestStandaloneHeader(t *testing.T) {
	env, err := Parse([]byte(forwardEnv), ParseOptions{})
	noErr(t, err)
	sec := env.OtherHeaders()[0]
	equal(t, `<sec:Security xmlns:sec="urn:sec" xmlns="urn:default" xmlns:S="`+NamespaceSOAP11+`" xmlns:o="urn:orders">token</sec:Security>`,
		string(Standalone(sec)))
	// The document is unchanged.
	equal(t, 1, len(sec.Attr))
}

func TestWithoutWSRM(t *testing.T) {
	env, err := Parse([]byte(forwardEnv), ParseOptions{})
	noErr(t, err)
	out, err := env.WithoutWSRM()
	noErr(t, err)
	stripped, err := Parse(out, ParseOptions{})
	noErr(t, err)
	equal(t, (*Request)(nil), stripped.Request)
	equal(t, 1, len(stripped.Headers()))
	equal(t, "Security", stripped.Headers()[0].Tag)
	equal(t, string(env.BodyContent()), string(stripped.BodyContent()))
	// The original is untouched.
	equal(t, 2, len(env.Headers()))

	// A Header holding only wsrm blocks goes away entirely.
	only, err := Parse(env11(request(okMsgID, okExpiry, okPattern, "")), ParseOptions{})
	noErr(t, err)
	out, err = only.WithoutWSRM()
	noErr(t, err)
	stripped, err = Parse(out, ParseOptions{})
	noErr(t, err)
	if stripped.Header != nil {
		t.Fatalf("empty Header kept: %s", out)
	}
	equal(t, `<p:x xmlns:p="urn:p" xmlns:e="`+NamespaceSOAP11+`" xmlns:r="`+NamespaceWSRM+`"/>`, string(stripped.BodyContent()))
}

// withoutWSRMByCopy is the reference WithoutWSRM: deep-copy the document,
// drop the wsrm blocks (and a Header left without elements), write it.
func withoutWSRMByCopy(t testing.TB, e *Envelope) []byte {
	doc := e.Doc.Copy()
	if e.Header != nil {
		root := doc.Root()
		h := root.Child[e.Header.Index()].(*etree.Element)
		var keep []etree.Token
		for _, tok := range h.Child {
			if el, ok := tok.(*etree.Element); ok && el.NamespaceURI() == NamespaceWSRM {
				continue
			}
			keep = append(keep, tok)
		}
		h.Child = keep
		h.ReindexChildren()
		if len(h.ChildElements()) == 0 {
			root.RemoveChildAt(h.Index())
		}
	}
	doc.WriteSettings = etree.WriteSettings{}
	b, err := doc.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWithoutWSRMMatchesCopy: the shallow-copy writer gives the bytes of
// the deep-copy reference, for envelopes with and without other headers,
// comments and text around the blocks, a prolog, and both SOAP versions.
func TestWithoutWSRMMatchesCopy(t *testing.T) {
	req := request(okMsgID, okExpiry, okPattern, "")
	for name, raw := range map[string]string{
		"forward":   forwardEnv,
		"only wsrm": string(env11(req)),
		"prolog and comments": `<?xml version="1.0" encoding="UTF-8"?>
<!-- before --><e:Envelope xmlns:e="` + NamespaceSOAP11 + `" xmlns:r="` + NamespaceWSRM + `">
  <e:Header> <!-- in header -->` + req + ` text <x:H xmlns:x="urn:x">v</x:H>
  </e:Header>
  <e:Body><p:x xmlns:p="urn:p">&lt;b&gt;</p:x></e:Body></e:Envelope><!-- after -->`,
		"no header": `<e:Envelope xmlns:e="` + NamespaceSOAP12 + `"><e:Body><p:x xmlns:p="urn:p"/></e:Body></e:Envelope>`,
	} {
		env, err := Parse([]byte(raw), ParseOptions{})
		if err != nil && env == nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := env.WithoutWSRM()
		noErr(t, err)
		if want := withoutWSRMByCopy(t, env); string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
		if strings.Contains(string(got), "MessageId") {
			t.Errorf("%s: wsrm block kept: %s", name, got)
		}
	}
}

func TestHTTPHelpers(t *testing.T) {
	equal(t, "text/xml; charset=utf-8", ContentType(SOAP11, "urn:ignored"))
	equal(t, "application/soap+xml; charset=utf-8", ContentType(SOAP12, ""))
	equal(t, `application/soap+xml; action="urn:a/b c"; charset=utf-8`, ContentType(SOAP12, "urn:a/b c"))
	equal(t, `""`, SOAPAction(""))
	equal(t, `"urn:example:orders/PlaceOrder"`, SOAPAction("urn:example:orders/PlaceOrder"))
	equal(t, `"a\"b\\c"`, SOAPAction(`a"b\c`))

	for ct, want := range map[string]Version{
		"text/xml; charset=utf-8": SOAP11,
		"text/xml":                SOAP11,
		"Text/XML; Charset=UTF-8": SOAP11,
		"application/soap+xml":    SOAP12,
		`application/soap+xml; charset="utf-8"; action="urn:x"`: SOAP12,
		"application/soap+xml; charset=utf-16":                  SOAP12, // XML 1.0 §4.3.3
		"text/xml; charset=UTF-16LE":                            SOAP11,
	} {
		v, _, err := VersionFromContentType(ct)
		noErr(t, err, ct)
		equal(t, want, v, ct)
	}
	_, action, err := VersionFromContentType(ContentType(SOAP12, "urn:a/b c"))
	noErr(t, err)
	equal(t, "urn:a/b c", action)
	for _, ct := range []string{"", "application/json", "text/xml; charset=iso-8859-1", "text/xml; charset=us-ascii", "text/"} {
		if _, _, err := VersionFromContentType(ct); err != ErrContentType {
			t.Errorf("VersionFromContentType(%q) = %v", ct, err)
		}
	}
	equal(t, 200, StatusEnvelope)
	equal(t, 202, StatusEmpty)
}

// The Content-Types this package sends are read without allocating, to
// what mime.ParseMediaType reads them as (#22).
func TestMediaTypeOfOwnContentTypes(t *testing.T) {
	for _, ct := range []string{ContentTypeSOAP11, ContentTypeSOAP12} {
		mt, params, err := mime.ParseMediaType(ct)
		noErr(t, err, ct)
		v, action, charset, err := MediaType(ct)
		noErr(t, err, ct)
		equal(t, map[string]Version{"text/xml": SOAP11, "application/soap+xml": SOAP12}[mt], v, ct)
		equal(t, params["action"], action, ct)
		equal(t, params["charset"], charset, ct)
		if n := testing.AllocsPerRun(10, func() { MediaType(ct) }); n != 0 {
			t.Errorf("MediaType(%q): %v allocations", ct, n)
		}
	}
}

func TestVersion(t *testing.T) {
	equal(t, "SOAP 1.1", SOAP11.String())
	equal(t, "SOAP 1.2", SOAP12.String())
	equal(t, "Version(7)", Version(7).String())
	equal(t, false, Version(0).Valid())
	equal(t, NamespaceSOAP12, SOAP12.Namespace())
}

// An empty Body (an ack's) has no content, and reading it allocates
// nothing, with or without SkipBody (#22).
func TestEmptyBodyContentIsEmpty(t *testing.T) {
	for _, skip := range []bool{false, true} {
		for _, body := range []string{`<S:Body/>`, `<S:Body></S:Body>`} {
			env, err := Parse([]byte(`<S:Envelope xmlns:S="`+NamespaceSOAP11+`">`+body+`</S:Envelope>`), ParseOptions{SkipBody: skip})
			noErr(t, err)
			if got := env.BodyContent(); len(got) != 0 {
				t.Fatalf("SkipBody %v, %s: content %q, want none", skip, body, got)
			}
			if n := testing.AllocsPerRun(10, func() { env.BodyContent() }); n != 0 {
				t.Errorf("SkipBody %v, %s: %v allocations, want 0", skip, body, n)
			}
		}
	}
}
