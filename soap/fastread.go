package soap

import (
	"bytes"
	"sync"

	"github.com/beevik/etree"
)

// readFast builds the etree document of b without encoding/xml, for the
// plain shape almost every envelope has: UTF-8, an optional leading XML
// declaration, elements, attributes, text with the five predefined
// entities and numeric character references, CDATA sections and comments.
// It returns nil — and Parse then reads b with etree's own reader — for
// anything else: a DOCTYPE, a processing instruction, a carriage return
// (encoding/xml rewrites line ends), a non-ASCII name, an element past
// maxDepth or with more than maxAttrs attributes, more than maxElems
// elements, comments and CDATA sections, a repeated attribute, an unbound
// prefix, a second root and every malformed input. So every error, and every
// document it does not understand, is etree's; a document it accepts is
// the one etree would build (FuzzReadFast compares them token by token).
//
// It exists because the etree reader costs most of an accepted message's
// CPU (BENCHMARKS.md "## soap"). Elements and text tokens come from slabs,
// and each element's children and attributes are gathered first and
// stored in slices of their exact size.
func readFast(b []byte, maxDepth, maxAttrs, maxElems int) *etree.Document {
	doc, _ := readFastSpans(b, maxDepth, maxAttrs, maxElems, false)
	return doc
}

// readFastSpans is readFast that, with skipBody, leaves the SOAP Body's
// content out of the tree (fastread_skip.go) and returns where the parts
// WithoutWSRM splices lie in b.
func readFastSpans(b []byte, maxDepth, maxAttrs, maxElems int, skipBody bool) (*etree.Document, docSpans) {
	r := fastReader{b: b, maxDepth: maxDepth, maxAttrs: maxAttrs, maxElems: maxElems, skipBody: skipBody}
	if skipBody {
		r.guess = countOutsideBody(b)
	} else {
		r.guess = countTokens(b)
	}
	sc, _ := scratches.Get().(*fastScratch)
	if sc == nil {
		sc = new(fastScratch)
	}
	r.open, r.kids, r.attrs = sc.open[:0], sc.kids[:0], sc.attrs[:0]
	doc := etree.NewDocument()
	ok := r.document(&doc.Element)
	sc.keep(&r)
	if !ok {
		return nil, docSpans{}
	}
	r.spans.read = skipBody
	return doc, r.spans
}

// fastScratch is the memory of a fastReader that no document keeps: its
// open elements, the children gathered for them and the pending
// attributes, pooled so that a parse does not allocate them (three
// allocations a parse, #22).
type fastScratch struct {
	open  []openElement
	kids  []etree.Token
	attrs []pendingAttr
}

var scratches sync.Pool

// maxScratch bounds the slices a pooled fastScratch keeps.
const maxScratch = 1024

// keep takes r's slices back, emptied (their elements referred to the
// document), and returns sc to the pool.
func (sc *fastScratch) keep(r *fastReader) {
	sc.open, sc.kids, sc.attrs = r.open[:0], r.kids[:0], r.attrs[:0]
	if cap(sc.open) > maxScratch || cap(sc.kids) > maxScratch || cap(sc.attrs) > maxScratch {
		return
	}
	clear(sc.open[:cap(sc.open)])
	clear(sc.kids[:cap(sc.kids)])
	clear(sc.attrs[:cap(sc.attrs)])
	scratches.Put(sc)
}

// fastReader is one readFast call.
type fastReader struct {
	b                  []byte
	i                  int
	maxDepth, maxAttrs int
	maxElems, elems    int           // elements, comments and CDATA sections read so far
	boundBy            boundPrefix   // bound's cache
	scratch            []byte        // decoded text
	attrs              []pendingAttr // of the start tag being read
	kids               []etree.Token // children of the open elements, innermost last
	open               []openElement
	guess              tokenCounts     // first slab sizes
	els                []etree.Element // slabs: the document's tokens
	texts              []etree.CharData
	tokSlab            []etree.Token
	attrSlab           []etree.Attr
	names              [8]string // recently read names not in internTable
	nameNext           int
	skipBody           bool     // ParseOptions.SkipBody
	spans              docSpans // under skipBody
}

type pendingAttr struct{ space, key, value string }

// openElement is an element whose end tag is still to come; its children
// so far are kids[start:].
type openElement struct {
	el    *etree.Element
	start int
	at    int // where its start tag begins in b
}

// document reads the whole input into doc: prolog, one root, epilogue.
func (r *fastReader) document(doc *etree.Element) bool {
	if hasPrefixAt(r.b, 0, "<?xml") && len(r.b) > 5 && isSpaceNoCR(r.b[5]) {
		if !r.declaration(doc) {
			return false
		}
	}
	roots := 0
	for r.i < len(r.b) {
		if r.b[r.i] != '<' {
			// Outside the root only white space (Parse refuses the rest).
			s, ok := r.text()
			if !ok || !isSpaceNoCRString(s) {
				return false
			}
			doc.AddChild(r.newText(s))
			continue
		}
		switch {
		case hasPrefixAt(r.b, r.i, "<!--"):
			c, ok := r.comment()
			if !ok || !r.count() {
				return false
			}
			doc.AddChild(c)
		case r.i+1 < len(r.b) && isNameStart(r.b[r.i+1]):
			if roots++; roots > 1 || !r.element(doc) {
				return false
			}
		default:
			return false
		}
	}
	return roots == 1
}

// declaration reads `<?xml version="1.0" [encoding="UTF-8"] [standalone=…]?>`
// exactly; encoding/xml stores what follows the target's white space.
func (r *fastReader) declaration(doc *etree.Element) bool {
	i := 5
	for i < len(r.b) && isSpaceNoCR(r.b[i]) {
		i++
	}
	start := i
	end := indexAt(r.b, i, "?>")
	if end < 0 {
		return false
	}
	content := r.b[start:end]
	j, ok := pseudoAttr(content, 0, "version", func(v []byte) bool { return string(v) == "1.0" })
	if !ok {
		return false
	}
	j, ok = optionalPseudoAttr(content, j, "encoding", isUTF8Name)
	if !ok {
		return false
	}
	j, ok = optionalPseudoAttr(content, j, "standalone", func(v []byte) bool { return string(v) == "yes" || string(v) == "no" })
	if !ok {
		return false
	}
	for ; j < len(content); j++ {
		if !isSpaceNoCR(content[j]) {
			return false
		}
	}
	doc.AddChild(etree.NewProcInst("xml", string(content)))
	r.i = end + 2
	return true
}

// pseudoAttr reads name="value" at content[j:] (white space before it
// unless j is 0) and checks the value.
func pseudoAttr(content []byte, j int, name string, ok func([]byte) bool) (int, bool) {
	if j > 0 {
		k := j
		for k < len(content) && isSpaceNoCR(content[k]) {
			k++
		}
		if k == j {
			return j, false
		}
		j = k
	}
	if !hasPrefixAt(content, j, name) || j+len(name)+1 >= len(content) || content[j+len(name)] != '=' {
		return j, false
	}
	j += len(name) + 1
	q := content[j]
	if q != '"' && q != '\'' {
		return j, false
	}
	end := j + 1
	for end < len(content) && content[end] != q {
		end++
	}
	if end == len(content) || !ok(content[j+1:end]) {
		return j, false
	}
	return end + 1, true
}

// optionalPseudoAttr is pseudoAttr when the name follows, else a no-op.
func optionalPseudoAttr(content []byte, j int, name string, ok func([]byte) bool) (int, bool) {
	k := j
	for k < len(content) && isSpaceNoCR(content[k]) {
		k++
	}
	if !hasPrefixAt(content, k, name) {
		return j, true
	}
	return pseudoAttr(content, j, name, ok)
}

func isUTF8Name(v []byte) bool {
	return len(v) == 5 && v[0]|0x20 == 'u' && v[1]|0x20 == 't' && v[2]|0x20 == 'f' && v[3] == '-' && v[4] == '8'
}

// element reads the root element and everything in it, iteratively, and
// adds it to doc.
func (r *fastReader) element(doc *etree.Element) bool {
	// Sized once: the children of the open elements are at most every
	// token, the open elements few (append still grows both past it).
	if n := min(r.maxDepth, 8); cap(r.open) < n {
		r.open = make([]openElement, 0, n)
	}
	if n := min(r.guess.elements+r.guess.texts, 256); cap(r.kids) < n {
		r.kids = make([]etree.Token, 0, n)
	}
	for {
		if r.i >= len(r.b) {
			return false
		}
		if r.b[r.i] != '<' {
			s, ok := r.text()
			if !ok {
				return false
			}
			r.kids = append(r.kids, r.newText(s))
			continue
		}
		if r.i+1 >= len(r.b) {
			return false
		}
		var tok etree.Token
		ok := true
		switch c := r.b[r.i+1]; {
		case c == '/':
			top := r.open[len(r.open)-1]
			if !r.endTag(top.el) {
				return false
			}
			if r.skipBody {
				r.span(top.el, top.at, len(r.open))
			}
			r.adopt(top.el, r.kids[top.start:])
			r.kids, r.open = r.kids[:top.start], r.open[:len(r.open)-1]
			if len(r.open) == 0 {
				doc.AddChild(top.el)
				return true
			}
			continue
		case hasPrefixAt(r.b, r.i, "<!--"):
			tok, ok = r.comment()
		case hasPrefixAt(r.b, r.i, "<![CDATA["):
			tok, ok = r.cdata()
		case isNameStart(c):
			// etree's limit counts the document as one level.
			if len(r.open)+1 > r.maxDepth || !r.count() {
				return false
			}
			at := r.i
			el, empty, ok := r.startTag()
			switch {
			case !ok:
				return false
			case empty && len(r.open) == 0:
				doc.AddChild(el)
				return true
			case empty:
				r.kids = append(r.kids, el)
				if r.skipBody {
					r.span(el, at, len(r.open)+1)
				}
			default:
				if len(r.open) > 0 {
					r.kids = append(r.kids, el)
				}
				r.open = append(r.open, openElement{el: el, start: len(r.kids), at: at})
				if r.skipBody && r.isSOAPBody(el) && !r.skipContent(el) {
					return false
				}
			}
			continue
		default:
			return false
		}
		if !ok || !r.count() {
			return false
		}
		r.kids = append(r.kids, tok)
	}
}

// count counts one more element, comment or CDATA section; false past
// maxElems.
func (r *fastReader) count() bool {
	r.elems++
	return r.elems <= r.maxElems
}

// bound reports whether the start tag being read may use prefix: it is
// "", "xml", or declared by the tag itself (when it declares any) or by
// an open element (the open elements' attributes are the scope: no state
// but a one-entry cache, so no allocation).
func (r *fastReader) bound(prefix string, declares bool) bool {
	if prefix == "" || prefix == "xml" {
		return true
	}
	if declares {
		for _, a := range r.attrs {
			if a.space == "xmlns" && a.key == prefix {
				return true
			}
		}
	}
	// An envelope's names use a prefix or two declared on the Envelope:
	// remember the open element that declared the last one found.
	if c := &r.boundBy; c.prefix == prefix && c.depth < len(r.open) && r.open[c.depth].el == c.el {
		return true
	}
	for i := len(r.open) - 1; i >= 0; i-- {
		for _, a := range r.open[i].el.Attr {
			if a.Space == "xmlns" && a.Key == prefix {
				// Declarations are checked non-empty when read, so any
				// open one binds the prefix.
				r.boundBy = boundPrefix{prefix, r.open[i].el, i}
				return true
			}
		}
	}
	return false
}

// namesBound checks the prefixes of the start tag being read (its name's,
// its attributes'; no declaration may be empty); etree's reader is left
// to refuse an unbound one by name. The parent's prefix, already checked
// and still in scope, is the common case and costs a comparison.
func (r *fastReader) namesBound(space string) bool {
	parent := ""
	if n := len(r.open); n > 0 {
		parent = r.open[n-1].el.Space
	}
	declares := false
	for i := range r.attrs {
		if a := &r.attrs[i]; a.space == "xmlns" {
			if a.value == "" {
				return false
			}
			declares = true
		}
	}
	if space != parent && !r.bound(space, declares) {
		return false
	}
	for i := range r.attrs {
		if a := &r.attrs[i]; a.space != "" && a.space != space && a.space != parent && a.space != "xmlns" && !r.bound(a.space, declares) {
			return false
		}
	}
	return true
}

// boundPrefix is a prefix found declared by el, open at depth.
type boundPrefix struct {
	prefix string
	el     *etree.Element
	depth  int
}

// adopt makes kids the children of el, in a slice of their exact size
// cut from a slab (full slice expressions: a later append by the caller
// reallocates rather than writing into a neighbour).
func (r *fastReader) adopt(el *etree.Element, kids []etree.Token) {
	n := len(kids)
	if n == 0 {
		return
	}
	el.Child = take(&r.tokSlab, n, r.guess.elements+r.guess.texts)[:0:n]
	for _, k := range kids {
		el.AddChild(k)
	}
}

// startTag reads `<name attr="v" …>` or `<name …/>` at r.i.
func (r *fastReader) startTag() (el *etree.Element, empty, ok bool) {
	r.i++
	space, local, ok := r.name()
	if !ok {
		return nil, false, false
	}
	r.attrs = r.attrs[:0]
	for {
		r.skipSpace()
		if r.i >= len(r.b) {
			return nil, false, false
		}
		switch r.b[r.i] {
		case '>':
			r.i++
			if !r.namesBound(space) {
				return nil, false, false
			}
			return r.newElement(space, local), false, true
		case '/':
			if r.i+1 >= len(r.b) || r.b[r.i+1] != '>' || !r.namesBound(space) {
				return nil, false, false
			}
			r.i += 2
			return r.newElement(space, local), true, true
		}
		aspace, akey, ok := r.name()
		if !ok || len(r.attrs) >= r.maxAttrs {
			return nil, false, false
		}
		for _, a := range r.attrs {
			if a.space == aspace && a.key == akey {
				return nil, false, false // Parse refuses repeats; etree's reader says why
			}
		}
		r.skipSpace()
		if r.i >= len(r.b) || r.b[r.i] != '=' {
			return nil, false, false
		}
		r.i++
		r.skipSpace()
		v, ok := r.attrValue()
		if !ok {
			return nil, false, false
		}
		r.attrs = append(r.attrs, pendingAttr{aspace, akey, v})
	}
}

// newElement is an element from the slab with the pending attributes, in
// a slice of their exact size.
func (r *fastReader) newElement(space, local string) *etree.Element {
	el := &take(&r.els, 1, r.guess.elements)[0]
	el.Space, el.Tag = space, local
	el.Child = make([]etree.Token, 0) // as etree's: empty, not nil
	if n := len(r.attrs); n > 0 {
		el.Attr = take(&r.attrSlab, n, r.guess.attrs)[:0:n]
	} else {
		el.Attr = make([]etree.Attr, 0)
	}
	for _, a := range r.attrs {
		if a.space == "" || r.hasUnprefixed(a.key) {
			// CreateAttr("x") would replace an unprefixed x.
			el.CreateAttr(joinName(a.space, a.key), a.value)
			continue
		}
		el.CreateAttr(a.key, a.value).Space = a.space
	}
	return el
}

func (r *fastReader) hasUnprefixed(key string) bool {
	for _, a := range r.attrs {
		if a.space == "" && a.key == key {
			return true
		}
	}
	return false
}

func joinName(space, key string) string {
	if space == "" {
		return key
	}
	return space + ":" + key
}

// endTag reads `</name>` at r.i; it must close top.
func (r *fastReader) endTag(top *etree.Element) bool {
	r.i += 2
	space, local, ok := r.nameBytes()
	if !ok || string(space) != top.Space || string(local) != top.Tag {
		return false
	}
	r.skipSpace()
	if r.i >= len(r.b) || r.b[r.i] != '>' {
		return false
	}
	r.i++
	return true
}

// comment reads `<!--…-->` at r.i; "--" may only end it. Only printable
// ASCII and white space other than '\r' are taken.
func (r *fastReader) comment() (etree.Token, bool) {
	start, end, ok := r.commentEnd()
	if !ok {
		return nil, false
	}
	return etree.NewComment(string(r.b[start:end])), true
}

// commentEnd reads the comment at r.i and returns its text's span.
func (r *fastReader) commentEnd() (start, end int, ok bool) {
	start = r.i + 4
	end = indexAt(r.b, start, "--")
	if end < 0 || end+2 >= len(r.b) || r.b[end+2] != '>' {
		return 0, 0, false
	}
	for _, c := range r.b[start:end] {
		if c >= 0x80 || c < 0x20 && c != '\t' && c != '\n' {
			return 0, 0, false
		}
	}
	r.i = end + 3
	return start, end, true
}

// cdata reads `<![CDATA[…]]>` at r.i as text (etree keeps no CDATA flag
// when reading without PreserveCData).
func (r *fastReader) cdata() (etree.Token, bool) {
	start, end, ok := r.cdataEnd()
	if !ok {
		return nil, false
	}
	return r.newText(internSpace(r.b[start:end])), true
}

// cdataEnd reads the CDATA section at r.i and returns its text's span.
func (r *fastReader) cdataEnd() (start, end int, ok bool) {
	start = r.i + len("<![CDATA[")
	end = indexAt(r.b, start, "]]>")
	if end < 0 {
		return 0, 0, false
	}
	for i := start; i < end; {
		n, ok := charLen(r.b, i)
		if !ok {
			return 0, 0, false
		}
		i += n
	}
	r.i = end + 3
	return start, end, true
}

// newText is a text token from the slab, flagged as white space the way
// etree's reader flags it.
func (r *fastReader) newText(s string) *etree.CharData {
	c := &take(&r.texts, 1, r.guess.texts)[0]
	c.SetData(s)
	return c
}

// take returns the next n slots of *slab (full slice expression: cap n).
// A full slab is replaced by a new one of first slots, then twice the last
// size (at most 4096), so a document wastes at most about half of what it
// used, and one that is declined early has allocated little.
func take[T any](slab *[]T, n, first int) []T {
	s := *slab
	if len(s)+n > cap(s) {
		size := min(first, 512)
		if cap(s) > 0 {
			size = min(2*cap(s), 4096)
		}
		s = make([]T, 0, max(size, n))
	}
	at := len(s)
	*slab = s[:at+n]
	return s[at : at+n : at+n]
}

// tokenCounts are upper bounds on a document's tokens of each kind, to
// size the first slabs: an element per '<' before a name, a text per '>'
// not followed by '<' (and one at the start, one per CDATA section), an
// attribute per '='.
type tokenCounts struct{ elements, texts, attrs int }

func countTokens(b []byte) tokenCounts {
	c := tokenCounts{texts: 1, attrs: bytes.Count(b, []byte{'='})}
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '<':
			if i+1 < len(b) && (isNameStart(b[i+1]) || b[i+1] == '!') {
				c.elements++
			}
		case '>':
			if i+1 < len(b) && b[i+1] != '<' {
				c.texts++
			}
		}
	}
	return c
}
