package soap

// readFast under ParseOptions.SkipBody: the SOAP Body's content is read
// with every check element() makes — the same characters, references,
// names, attributes, limits and prefix bindings, so that it declines
// exactly what element() declines — but nothing of it is built; docSpans
// remembers where the Body's content and the Header's blocks lie, so that
// WithoutWSRM and BodyContent work from the bytes (issue #22: the Body is
// most of a delivered message's tree, and nobody on the receiver's path
// reads it).

import (
	"bytes"

	"github.com/beevik/etree"
)

// docSpans are where, in the bytes readFast read, the parts lie that
// WithoutWSRM splices: every Envelope child named Header and its element
// children, and the content of the SOAP Body left out of the tree.
type docSpans struct {
	read    bool // readFast read the document under skipBody
	headers []elemSpan
	body    elemSpan // el is nil when no Body's content was skipped
}

// elemSpan is el's bytes b[start:end] (for the Body: its content's).
type elemSpan struct {
	el         *etree.Element
	start, end int
}

func (s *docSpans) find(el *etree.Element) (elemSpan, bool) {
	for _, sp := range s.headers {
		if sp.el == el {
			return sp, true
		}
	}
	return elemSpan{}, false
}

// span records el, read from b[start:r.i] at depth (the Envelope is 1),
// when it is an Envelope child named Header or a child of one.
func (r *fastReader) span(el *etree.Element, start, depth int) {
	if depth == 2 && el.Tag == "Header" || depth == 3 && r.open[1].el.Tag == "Header" {
		if r.spans.headers == nil {
			r.spans.headers = make([]elemSpan, 0, 8) // a Header and a few blocks
		}
		r.spans.headers = append(r.spans.headers, elemSpan{el, start, r.i})
	}
}

// isSOAPBody reports whether el, just opened, is the first Body child of
// the Envelope in the Envelope's namespace (the one findParts takes).
func (r *fastReader) isSOAPBody(el *etree.Element) bool {
	return len(r.open) == 2 && el.Tag == "Body" && r.spans.body.el == nil &&
		r.openNamespace(el.Space, 2) == r.openNamespace(r.open[0].el.Space, 1)
}

// openNamespace resolves prefix ("" for the default namespace) among the
// declarations of the outermost depth open elements, as etree's
// NamespaceURI does.
func (r *fastReader) openNamespace(prefix string, depth int) string {
	for i := depth - 1; i >= 0; i-- {
		for _, a := range r.open[i].el.Attr {
			if prefix == "" && a.Space == "" && a.Key == "xmlns" || prefix != "" && a.Space == "xmlns" && a.Key == prefix {
				return a.Value
			}
		}
	}
	return ""
}

// skimOpen is an element of the skipped content whose end tag is still to
// come; the prefixes it declares are skimDecls[decls:] of the time.
type skimOpen struct {
	space, local []byte
	decls        int
}

// skimAttr is an attribute of the start tag being skimmed.
type skimAttr struct{ space, key, value []byte }

// skipContent reads the content of body, just opened, up to its end tag,
// which it leaves at r.i for element() to read; false when element()
// would decline it. When the first element of the content is named Fault
// (decodeFault reads it) nothing is skipped: r.i is where it was, and
// element() builds the content.
func (r *fastReader) skipContent(body *etree.Element) bool {
	start, elems := r.i, r.elems
	// body's prefix as written, so that comparing with it allocates nothing
	at := r.open[len(r.open)-1].at + 1
	bodySpace := r.b[at : at+len(body.Space)]
	var stackBuf [16]skimOpen
	var declBuf [16][]byte
	var attrBuf [8]skimAttr
	stack, decls, attrs := stackBuf[:0], declBuf[:0], attrBuf[:0]
	first := true
	for {
		if r.i >= len(r.b) {
			return false
		}
		if r.b[r.i] != '<' {
			raw, plain, ok := r.textRaw()
			if !ok || !plain && !r.checkRefs(raw) {
				return false
			}
			continue
		}
		if r.i+1 >= len(r.b) {
			return false
		}
		switch c := r.b[r.i+1]; {
		case c == '/':
			if len(stack) == 0 {
				r.spans.body = elemSpan{body, start, r.i}
				return true
			}
			top := stack[len(stack)-1]
			r.i += 2
			space, local, ok := r.nameBytes()
			if !ok || !bytes.Equal(space, top.space) || !bytes.Equal(local, top.local) {
				return false
			}
			r.skipSpace()
			if r.i >= len(r.b) || r.b[r.i] != '>' {
				return false
			}
			r.i++
			stack, decls = stack[:len(stack)-1], decls[:top.decls]
		case hasPrefixAt(r.b, r.i, "<!--"):
			if _, _, ok := r.commentEnd(); !ok || !r.count() {
				return false
			}
		case hasPrefixAt(r.b, r.i, "<![CDATA["):
			if _, _, ok := r.cdataEnd(); !ok || !r.count() {
				return false
			}
		case isNameStart(c):
			if len(r.open)+len(stack)+1 > r.maxDepth || !r.count() {
				return false
			}
			r.i++
			space, local, ok := r.nameBytes()
			if !ok {
				return false
			}
			if first {
				first = false
				if string(local) == "Fault" {
					r.i, r.elems = start, elems
					return true
				}
			}
			var empty bool
			if attrs, empty, ok = r.skimStartTag(attrs[:0]); !ok {
				return false
			}
			parent := bodySpace
			if len(stack) > 0 {
				parent = stack[len(stack)-1].space
			}
			if !r.skimNamesBound(space, parent, attrs, decls) {
				return false
			}
			if !empty {
				n := len(decls)
				for _, a := range attrs {
					if string(a.space) == "xmlns" {
						decls = append(decls, a.key)
					}
				}
				stack = append(stack, skimOpen{space: space, local: local, decls: n})
			}
		default:
			return false
		}
	}
}

// skimStartTag reads the attributes and the end of a start tag whose name
// was just read, as startTag does, into attrs.
func (r *fastReader) skimStartTag(attrs []skimAttr) (_ []skimAttr, empty, ok bool) {
	for {
		r.skipSpace()
		if r.i >= len(r.b) {
			return attrs, false, false
		}
		switch r.b[r.i] {
		case '>':
			r.i++
			return attrs, false, true
		case '/':
			if r.i+1 >= len(r.b) || r.b[r.i+1] != '>' {
				return attrs, false, false
			}
			r.i += 2
			return attrs, true, true
		}
		aspace, akey, ok := r.nameBytes()
		if !ok || len(attrs) >= r.maxAttrs {
			return attrs, false, false
		}
		for _, a := range attrs {
			if bytes.Equal(a.space, aspace) && bytes.Equal(a.key, akey) {
				return attrs, false, false
			}
		}
		r.skipSpace()
		if r.i >= len(r.b) || r.b[r.i] != '=' {
			return attrs, false, false
		}
		r.i++
		r.skipSpace()
		v, plain, ok := r.attrRaw()
		if !ok || !plain && !r.checkRefs(v) {
			return attrs, false, false
		}
		attrs = append(attrs, skimAttr{aspace, akey, v})
	}
}

// checkRefs reports whether the references in raw decode (decode's check).
func (r *fastReader) checkRefs(raw []byte) bool {
	_, ok := r.decodeBytes(raw)
	return ok
}

// skimNamesBound is namesBound for a skimmed start tag: parent is the
// enclosing element's prefix, decls the prefixes the enclosing skimmed
// elements declare. (A declared value is one without references or with
// some: either way it is empty only when raw is, as for namesBound.)
func (r *fastReader) skimNamesBound(space, parent []byte, attrs []skimAttr, decls [][]byte) bool {
	declares := false
	for _, a := range attrs {
		if string(a.space) == "xmlns" {
			if len(a.value) == 0 {
				return false
			}
			declares = true
		}
	}
	if !bytes.Equal(space, parent) && !r.skimBound(space, declares, attrs, decls) {
		return false
	}
	for _, a := range attrs {
		if len(a.space) > 0 && !bytes.Equal(a.space, space) && !bytes.Equal(a.space, parent) &&
			string(a.space) != "xmlns" && !r.skimBound(a.space, declares, attrs, decls) {
			return false
		}
	}
	return true
}

// skimBound is bound for a skimmed start tag.
func (r *fastReader) skimBound(prefix []byte, declares bool, attrs []skimAttr, decls [][]byte) bool {
	if len(prefix) == 0 || string(prefix) == "xml" {
		return true
	}
	if declares {
		for _, a := range attrs {
			if string(a.space) == "xmlns" && bytes.Equal(a.key, prefix) {
				return true
			}
		}
	}
	for _, d := range decls {
		if bytes.Equal(d, prefix) {
			return true
		}
	}
	for i := len(r.open) - 1; i >= 0; i-- {
		for _, a := range r.open[i].el.Attr {
			if a.Space == "xmlns" && a.Key == string(prefix) {
				return true
			}
		}
	}
	return false
}

// countOutsideBody is countTokens for the part of b before its Body's
// start tag, where the tree's tokens under skipBody are (about: a guess
// for slab sizes).
func countOutsideBody(b []byte) tokenCounts {
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte("Body"))
		if j < 0 {
			return countTokens(b)
		}
		i += j
		if i > 0 && (b[i-1] == '<' || b[i-1] == ':') {
			c := countTokens(b[:i])
			c.elements += 2
			c.texts += 2
			return c
		}
		i += 4
	}
}
