package soap

import (
	"bytes"
	"errors"
	"io"
	"iter"
	"strconv"
	"strings"

	"github.com/beevik/etree"
	"github.com/wsrkit/wsrkit/faults"
)

// Envelope is a parsed SOAP envelope. The wsrm header blocks are decoded into
// structs; everything else stays available as etree elements for the caller.
type Envelope struct {
	// Version is the SOAP version of the envelope.
	Version Version
	// Doc is the parsed document; callers may read it but must not change it
	// while they still use Header or Body.
	Doc *etree.Document
	// Header is the SOAP Header element; nil when absent.
	Header *etree.Element
	// Body is the SOAP Body element; never nil in an Envelope without error.
	// Under ParseOptions.SkipBody it may have no children (read its
	// content with BodyContent).
	Body *etree.Element
	// Request is the wsrm:Request block; nil when absent.
	Request *Request
	// Response is the wsrm:Response block; nil when absent.
	Response *Response
	// PollRequest is the wsrm:PollRequest block; nil when absent.
	PollRequest *PollRequest
	// Fault is the SOAP Fault in the Body; nil when the Body holds none.
	Fault *Fault

	// size is the length of the parsed bytes (a buffer size hint).
	size int
	// Under SkipBody, when readFast read the input (splice): the input
	// without its wsrm blocks, and, when Body was left without its
	// children, its content's place in it.
	spliced          []byte
	lazyBody         bool
	bodyFrom, bodyTo int
}

// Headers returns every header block (element child of Header) in document
// order, the wsrm blocks included.
func (e *Envelope) Headers() []*etree.Element {
	if e.Header == nil {
		return nil
	}
	return e.Header.ChildElements()
}

// OtherHeaders returns the header blocks that are not in the wsrm namespace
// (WS-Security, WS-Addressing, …), in document order, untouched.
func (e *Envelope) OtherHeaders() []*etree.Element {
	var out []*etree.Element
	for _, h := range e.Headers() {
		if h.NamespaceURI() != NamespaceWSRM {
			out = append(out, h)
		}
	}
	return out
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// errEncoding is returned to encoding/xml for any declared encoding other
// than UTF-8 (encoding/xml only asks for non-UTF-8 ones).
var errEncoding = errors.New("soap: only UTF-8 envelopes are accepted")

func refuseCharset(string, io.Reader) (io.Reader, error) { return nil, errEncoding }

// ParseReader reads at most o.MaxBytes+1 bytes from r and parses them with
// Parse. A longer input is refused without reading it all.
func ParseReader(r io.Reader, o ParseOptions) (*Envelope, error) {
	o = o.withDefaults()
	b, err := io.ReadAll(io.LimitReader(r, int64(o.MaxBytes)+1))
	if err != nil {
		return nil, err
	}
	return Parse(b, o)
}

// Parse reads a SOAP 1.1 or 1.2 envelope and decodes its wsrm:Request,
// wsrm:Response and wsrm:PollRequest header blocks and its SOAP Fault.
//
// Every problem is a *faults.Fault with a stable Rule. Whenever the root was a
// SOAP Envelope the returned *Envelope is non-nil, even with an error, so the
// caller can answer in the same SOAP version. When the error has
// ScopeMessage, the message was identified (D7): Envelope.Request holds its
// MessageID and whatever was read before the problem.
func Parse(b []byte, o ParseOptions) (*Envelope, error) {
	o = o.withDefaults()
	if len(b) > o.MaxBytes {
		return nil, faults.New(faults.InvalidRequest, "soap.limit.envelope-size",
			"envelope is larger than "+itoa(uint64(o.MaxBytes))+" bytes")
	}
	b, err := ToUTF8(b, "")
	if err != nil {
		return nil, err
	}
	b = bytes.TrimPrefix(b, utf8BOM)
	doc, spans, err := readDocument(b, o)
	if err != nil {
		return nil, err
	}
	root := doc.Root()
	if root.Tag != "Envelope" {
		return nil, faults.New(faults.InvalidRequest, "soap.envelope.not-envelope", "root element is not a SOAP Envelope")
	}
	env := &Envelope{Version: versionOf(root.NamespaceURI()), Doc: doc, size: len(b)}
	if env.Version == 0 {
		return nil, faults.New(faults.InvalidRequest, "soap.envelope.unknown-version",
			"Envelope is in namespace "+quote(root.NamespaceURI())+", not SOAP 1.1 or 1.2")
	}
	err = env.findParts(root)
	if spans.read {
		env.splice(b, &spans)
	}
	if err != nil {
		return env, err
	}
	if err := env.decodeHeaders(o); err != nil {
		return env, err
	}
	if err := env.decodeFault(); err != nil {
		return env, err
	}
	return env, nil
}

// readDocument builds the document of b: with readFast when it can, else
// with etree's reader, whose errors become faults, and then checkDocument.
// readFast takes only documents that pass checkDocument (FuzzReadFast
// checks it), so its documents are not walked twice. Under o.SkipBody the
// spans of readFast's document come too (none for etree's).
func readDocument(b []byte, o ParseOptions) (*etree.Document, docSpans, error) {
	settings := etree.ReadSettings{
		CharsetReader:          refuseCharset,
		MaxDepth:               o.MaxDepth,
		PreserveDuplicateAttrs: true, // checkTokens refuses duplicates
	}
	if doc, spans := readFastSpans(b, o.MaxDepth, o.MaxAttributes, o.MaxElements, o.SkipBody); doc != nil {
		doc.ReadSettings = settings
		return doc, spans, nil
	}
	// Counted before etree builds anything: its document costs ~40 times
	// the bytes of a body of tiny elements (issue 18).
	if countMarkup(b, o.MaxElements) > o.MaxElements {
		return nil, docSpans{}, faults.New(faults.InvalidRequest, "soap.limit.elements",
			"envelope has more than "+itoa(uint64(o.MaxElements))+" elements, comments and CDATA sections")
	}
	doc := etree.NewDocument()
	doc.ReadSettings = settings
	if err := doc.ReadFromBytes(b); err != nil {
		switch {
		case errors.Is(err, etree.ErrMaxDepth):
			return nil, docSpans{}, faults.New(faults.InvalidRequest, "soap.limit.depth",
				"XML nesting is deeper than "+itoa(uint64(o.MaxDepth)))
		case errors.Is(err, errEncoding):
			return nil, docSpans{}, faults.New(faults.InvalidRequest, "soap.xml.encoding", err.Error())
		}
		return nil, docSpans{}, faults.New(faults.InvalidRequest, "soap.xml.malformed", "not well-formed XML: "+err.Error())
	}
	if err := checkDocument(doc, o); err != nil {
		return nil, docSpans{}, err
	}
	return doc, docSpans{}, nil
}

// checkDocument walks every token once: no DOCTYPE or other directive, no
// processing instruction but a leading XML declaration, no text outside the
// root, exactly one root element (XML 1.0 §2.1), no duplicate attribute, at
// most o.MaxAttributes per element, every prefix bound (Namespaces in XML
// §5: a second envelope or an unbound prefix must not reach a consumer).
func checkDocument(doc *etree.Document, o ParseOptions) error {
	roots := 0
	for i, t := range doc.Child {
		switch t := t.(type) {
		case *etree.ProcInst:
			if t.Target == "xml" && i == 0 {
				continue
			}
		case *etree.CharData:
			if trimXMLSpace(t.Data) != "" {
				return faults.New(faults.InvalidRequest, "soap.xml.malformed", "text outside the root element")
			}
			continue
		case *etree.Element:
			if roots++; roots > 1 {
				return faults.New(faults.InvalidRequest, "soap.xml.second-root",
					"a second element "+quote(t.FullTag())+" follows the root element (a document has exactly one, XML 1.0 §2.1)")
			}
			continue
		}
		if err := checkToken(t, o, nil); err != nil {
			return err
		}
	}
	if doc.Root() == nil {
		return faults.New(faults.InvalidRequest, "soap.xml.malformed", "no root element")
	}
	return checkElement(doc.Root(), o, nil)
}

// checkToken checks t; scope holds the prefixes declared around it.
func checkToken(t etree.Token, o ParseOptions, scope []string) error {
	switch t := t.(type) {
	case *etree.Directive:
		return faults.New(faults.InvalidRequest, "soap.xml.doctype", "DOCTYPE and other directives are not allowed in SOAP")
	case *etree.ProcInst:
		return faults.New(faults.InvalidRequest, "soap.xml.processing-instruction",
			"processing instruction "+quote(t.Target)+" is not allowed in SOAP")
	case *etree.Element:
		return checkElement(t, o, scope)
	}
	return nil
}

func checkElement(e *etree.Element, o ParseOptions, scope []string) error {
	if len(e.Attr) > o.MaxAttributes {
		return faults.New(faults.InvalidRequest, "soap.limit.attributes",
			"element "+quote(e.FullTag())+" has more than "+itoa(uint64(o.MaxAttributes))+" attributes")
	}
	for i := 1; i < len(e.Attr); i++ {
		for j := 0; j < i; j++ {
			if e.Attr[i].Key == e.Attr[j].Key && e.Attr[i].Space == e.Attr[j].Space {
				return faults.New(faults.InvalidRequest, "soap.xml.duplicate-attribute",
					"element "+quote(e.FullTag())+" repeats attribute "+quote(e.Attr[i].FullKey()))
			}
		}
	}
	for _, a := range e.Attr {
		if a.Space == "xmlns" {
			if a.Value == "" {
				return faults.New(faults.InvalidRequest, "soap.xml.unbound-prefix",
					"prefix "+quote(a.Key)+" is declared with an empty namespace name (Namespaces in XML §3)")
			}
			scope = append(scope, a.Key)
		}
	}
	if !prefixBound(e.Space, scope) {
		return unboundPrefix(e.Space, e.FullTag())
	}
	for _, a := range e.Attr {
		if a.Space != "xmlns" && !prefixBound(a.Space, scope) {
			return unboundPrefix(a.Space, a.FullKey())
		}
	}
	for _, c := range e.Child {
		switch c.(type) {
		case *etree.CharData, *etree.Comment:
			continue
		}
		if err := checkToken(c, o, scope); err != nil {
			return err
		}
	}
	return nil
}

// prefixBound reports whether a name's prefix is bound: none, "xml", or
// one of the declared ones (innermost last).
func prefixBound(prefix string, declared []string) bool {
	if prefix == "" || prefix == "xml" {
		return true
	}
	for i := len(declared) - 1; i >= 0; i-- {
		if declared[i] == prefix {
			return true
		}
	}
	return false
}

func unboundPrefix(prefix, name string) error {
	return faults.New(faults.InvalidRequest, "soap.xml.unbound-prefix",
		"prefix "+quote(prefix)+" of "+quote(name)+" is not bound to a namespace (Namespaces in XML §5)")
}

// countMarkup counts the elements, comments, CDATA sections and
// processing instructions of b, stopping once past limit; the '<' inside
// comments, CDATA and processing instructions are skipped, so a
// well-formed document is counted exactly.
func countMarkup(b []byte, limit int) int {
	n := 0
	for i := 0; n <= limit; {
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 {
			break
		}
		i += j
		skip := ""
		switch {
		case hasPrefixAt(b, i, "</"):
			i += 2
			continue
		case hasPrefixAt(b, i, "<!--"):
			skip = "-->"
		case hasPrefixAt(b, i, "<![CDATA["):
			skip = "]]>"
		case hasPrefixAt(b, i, "<?"):
			skip = "?>"
		}
		n++
		i++
		if skip != "" {
			k := bytes.Index(b[i:], []byte(skip))
			if k < 0 {
				break
			}
			i += k + len(skip)
		}
	}
	return n
}

// findParts locates Header and Body among the Envelope's children.
func (env *Envelope) findParts(root *etree.Element) error {
	ns := env.Version.Namespace()
	for el := range childrenIn(root, ns, ns) {
		switch el.Tag {
		case "Header":
			if env.Header != nil {
				return faults.New(faults.InvalidRequest, "soap.envelope.duplicate-header", "Envelope has two Header elements")
			}
			if env.Body != nil {
				return faults.New(faults.InvalidRequest, "soap.envelope.header-after-body", "Header follows Body")
			}
			env.Header = el
		case "Body":
			if env.Body != nil {
				return faults.New(faults.InvalidRequest, "soap.envelope.duplicate-body", "Envelope has two Body elements")
			}
			env.Body = el
		}
	}
	if env.Body == nil {
		return faults.New(faults.InvalidRequest, "soap.envelope.missing-body", "Envelope has no Body")
	}
	return nil
}

// decodeHeaders decodes the wsrm header blocks, matched by namespace URI and
// local name (D4). Foreign and unknown blocks are left alone (R88).
func (env *Envelope) decodeHeaders(o ParseOptions) error {
	if env.Header == nil {
		return nil
	}
	h := env.Header
	hns := env.Version.Namespace()
	for el := range childrenIn(h, hns, NamespaceWSRM) {
		var err error
		switch el.Tag {
		case "Request":
			if env.Request != nil {
				return faults.New(faults.InvalidRequest, "soap.request.duplicate",
					"more than one wsrm:Request header block (R01)")
			}
			env.Request, err = parseRequest(el, env.Version, o)
		case "Response":
			if env.Response != nil {
				return faults.New(faults.InvalidRequest, "soap.response.duplicate",
					"more than one wsrm:Response header block")
			}
			env.Response, err = parseResponse(el, env.Version, o)
		case "PollRequest":
			if env.PollRequest != nil {
				return faults.New(faults.InvalidPollRequest, "soap.poll.duplicate",
					"more than one wsrm:PollRequest header block")
			}
			env.PollRequest, err = parsePollRequest(el, env.Version, o)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// childrenIn yields the child elements of parent, whose own namespace is
// parentNS, that are in namespace ns.
func childrenIn(parent *etree.Element, parentNS, ns string) iter.Seq[*etree.Element] {
	return func(yield func(*etree.Element) bool) {
		for _, c := range parent.Child {
			if el, ok := c.(*etree.Element); ok && nsOf(el, parent.Space, parentNS) == ns && !yield(el) {
				return
			}
		}
	}
}

// nsOf returns the namespace URI of el. When el declares no namespace and
// shares its parent's prefix, that is the parent's URI, which the caller
// already knows; otherwise the in-scope declarations are searched.
func nsOf(el *etree.Element, parentSpace, parentNS string) string {
	if el.Space == parentSpace {
		declares := false
		for i := range el.Attr {
			if el.Attr[i].Space == "xmlns" || (el.Attr[i].Space == "" && el.Attr[i].Key == "xmlns") {
				declares = true
				break
			}
		}
		if !declares {
			return parentNS
		}
	}
	return el.NamespaceURI()
}

// lookupPrefix resolves prefix ("" for the default namespace) in the scope of
// el. The prefix "xml" is bound by definition; an unbound prefix gives "".
func lookupPrefix(el *etree.Element, prefix string) (string, bool) {
	if prefix == "xml" {
		return namespaceXML, true
	}
	for e := el; e != nil; e = e.Parent() {
		for _, a := range e.Attr {
			if (prefix == "" && a.Space == "" && a.Key == "xmlns") || (prefix != "" && a.Space == "xmlns" && a.Key == prefix) {
				return a.Value, true
			}
		}
	}
	return "", false
}

// resolveQName resolves a QName value in the scope of el (D4, R87).
func resolveQName(el *etree.Element, v string) (ns, local string, ok bool) {
	v = trimXMLSpace(v)
	prefix, local := "", v
	if i := strings.IndexByte(v, ':'); i >= 0 {
		prefix, local = v[:i], v[i+1:]
		if prefix == "" {
			return "", "", false
		}
	}
	if local == "" || strings.IndexByte(local, ':') >= 0 {
		return "", "", false
	}
	ns, found := lookupPrefix(el, prefix)
	if !found && prefix != "" {
		return "", "", false
	}
	return ns, local, true
}

// attr returns the value of el's unprefixed attribute key.
func attr(el *etree.Element, key string) (string, bool) {
	for i := range el.Attr {
		if el.Attr[i].Space == "" && el.Attr[i].Key == key {
			return el.Attr[i].Value, true
		}
	}
	return "", false
}

// soapAttr returns the value of el's attribute key in the envelope namespace
// (mustUnderstand).
func soapAttr(el *etree.Element, v Version, key string) (string, bool) {
	for i := range el.Attr {
		a := &el.Attr[i]
		if a.Space != "" && a.Key == key && a.NamespaceURI() == v.Namespace() {
			return a.Value, true
		}
	}
	return "", false
}

// textOf returns the concatenated character data of el; ok is false when el
// has element children.
func textOf(el *etree.Element) (string, bool) {
	if len(el.Child) == 1 {
		if cd, isText := el.Child[0].(*etree.CharData); isText {
			return cd.Data, true
		}
	}
	var sb strings.Builder
	for _, c := range el.Child {
		switch c := c.(type) {
		case *etree.CharData:
			sb.WriteString(c.Data)
		case *etree.Element:
			return "", false
		}
	}
	return sb.String(), true
}

// quote quotes s for an error reason: ASCII only, at most 80 bytes of s.
func quote(s string) string {
	if len(s) > 80 {
		return strconv.QuoteToASCII(s[:80]) + "…"
	}
	return strconv.QuoteToASCII(s)
}
