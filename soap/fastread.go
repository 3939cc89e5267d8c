package soap

import (
	"unicode/utf8"

	"github.com/beevik/etree"
)

// readFast builds the etree document of b without encoding/xml, for the
// plain shape almost every envelope has: UTF-8, an optional leading XML
// declaration, elements, attributes, text with the five predefined
// entities and numeric character references, CDATA sections and comments.
// It returns nil — and Parse then reads b with etree's own reader — for
// anything else: a DOCTYPE, a processing instruction, a carriage return
// (encoding/xml rewrites line ends), a non-ASCII name, an element past
// maxDepth or with more than maxAttrs attributes, a repeated attribute, a
// second root and every malformed input. So every error, and every
// document it does not understand, is etree's; a document it accepts is
// the one etree would build (FuzzReadFast compares them token by token).
//
// It exists because the etree reader costs most of an accepted message's
// CPU (BENCHMARKS.md "## soap").
func readFast(b []byte, maxDepth, maxAttrs int) *etree.Document {
	r := fastReader{b: b, maxDepth: maxDepth, maxAttrs: maxAttrs}
	doc := etree.NewDocument()
	if !r.document(&doc.Element) {
		return nil
	}
	return doc
}

// fastReader is one readFast call: the input, the position and a scratch
// buffer for text with references.
type fastReader struct {
	b                  []byte
	i                  int
	maxDepth, maxAttrs int
	scratch            []byte
	stack              []*etree.Element
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
			doc.AddChild(newText(s))
			continue
		}
		switch {
		case hasPrefixAt(r.b, r.i, "<!--"):
			if !r.comment(doc) {
				return false
			}
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

// element reads one element and everything in it, iteratively, into
// parent.
func (r *fastReader) element(parent *etree.Element) bool {
	r.stack = append(r.stack[:0], parent)
	for {
		if r.i >= len(r.b) {
			return false
		}
		top := r.stack[len(r.stack)-1]
		if r.b[r.i] != '<' {
			s, ok := r.text()
			if !ok {
				return false
			}
			top.AddChild(newText(s))
			continue
		}
		if r.i+1 >= len(r.b) {
			return false
		}
		switch c := r.b[r.i+1]; {
		case c == '/':
			if len(r.stack) == 1 || !r.endTag(top) {
				return false
			}
			r.stack = r.stack[:len(r.stack)-1]
			if len(r.stack) == 1 {
				return true
			}
		case c == '!':
			switch {
			case hasPrefixAt(r.b, r.i, "<!--"):
				if !r.comment(top) {
					return false
				}
			case hasPrefixAt(r.b, r.i, "<![CDATA["):
				if !r.cdata(top) {
					return false
				}
			default:
				return false
			}
		case isNameStart(c):
			if len(r.stack) > r.maxDepth {
				return false
			}
			el, empty, ok := r.startTag()
			if !ok {
				return false
			}
			top.AddChild(el)
			if !empty {
				r.stack = append(r.stack, el)
			} else if len(r.stack) == 1 {
				return true
			}
		default:
			return false
		}
	}
}

// startTag reads `<name attr="v" …>` or `<name …/>` at r.i.
func (r *fastReader) startTag() (el *etree.Element, empty, ok bool) {
	r.i++
	space, local, ok := r.name()
	if !ok {
		return nil, false, false
	}
	el = etree.NewElement(local)
	el.Space = space
	for {
		r.skipSpace()
		if r.i >= len(r.b) {
			return nil, false, false
		}
		switch r.b[r.i] {
		case '>':
			r.i++
			return el, false, true
		case '/':
			if r.i+1 >= len(r.b) || r.b[r.i+1] != '>' {
				return nil, false, false
			}
			r.i += 2
			return el, true, true
		}
		aspace, akey, ok := r.name()
		if !ok || len(el.Attr) >= r.maxAttrs {
			return nil, false, false
		}
		for _, a := range el.Attr {
			if a.Space == aspace && a.Key == akey {
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
		if aspace == "" {
			el.CreateAttr(akey, v)
		} else {
			el.CreateAttr(aspace+":"+akey, v)
		}
	}
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

// name reads an ASCII XML name with at most one colon, neither first nor
// last, as interned strings where possible.
func (r *fastReader) name() (space, local string, ok bool) {
	s, l, ok := r.nameBytes()
	if !ok {
		return "", "", false
	}
	return intern(s), intern(l), true
}

func (r *fastReader) nameBytes() (space, local []byte, ok bool) {
	start, colon := r.i, -1
	for r.i < len(r.b) && isNameByte(r.b[r.i]) {
		if r.b[r.i] == ':' {
			if colon >= 0 {
				return nil, nil, false
			}
			colon = r.i
		}
		r.i++
	}
	// A byte ≥ 0x80 would continue the name for encoding/xml.
	if r.i == start || r.i < len(r.b) && r.b[r.i] >= utf8.RuneSelf || !isNameStart(r.b[start]) {
		return nil, nil, false
	}
	if colon < 0 {
		return nil, r.b[start:r.i], true
	}
	if colon == start || colon == r.i-1 || !isNameStart(r.b[colon+1]) {
		return nil, nil, false
	}
	return r.b[start:colon], r.b[colon+1 : r.i], true
}

// attrValue reads a quoted value; '<' in it is malformed.
func (r *fastReader) attrValue() (string, bool) {
	if r.i >= len(r.b) || r.b[r.i] != '"' && r.b[r.i] != '\'' {
		return "", false
	}
	q := r.b[r.i]
	r.i++
	start := r.i
	plain := true
	for {
		if r.i >= len(r.b) {
			return "", false
		}
		c := r.b[r.i]
		if c == q {
			break
		}
		switch {
		case c == '<' || c == '\r':
			return "", false
		case c == '&':
			plain = false
			r.i++
		case c < 0x20 && c != '\t' && c != '\n':
			return "", false
		case c >= utf8.RuneSelf:
			n, ok := validRune(r.b[r.i:])
			if !ok {
				return "", false
			}
			r.i += n
		default:
			r.i++
		}
	}
	raw := r.b[start:r.i]
	r.i++
	if plain {
		return string(raw), true
	}
	return r.decode(raw)
}

// text reads character data up to the next '<' or the end.
func (r *fastReader) text() (string, bool) {
	start := r.i
	plain := true
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '<':
			return r.textValue(r.b[start:r.i], plain)
		case c == '&':
			plain = false
			r.i++
		case c == ']':
			if hasPrefixAt(r.b, r.i, "]]>") {
				return "", false
			}
			r.i++
		case c == '\r' || c < 0x20 && c != '\t' && c != '\n':
			return "", false
		case c >= utf8.RuneSelf:
			n, ok := validRune(r.b[r.i:])
			if !ok {
				return "", false
			}
			r.i += n
		default:
			r.i++
		}
	}
	return r.textValue(r.b[start:], plain)
}

func (r *fastReader) textValue(raw []byte, plain bool) (string, bool) {
	if plain {
		return internSpace(raw), true
	}
	return r.decode(raw)
}

// decode replaces the references in raw; any other '&' is malformed.
func (r *fastReader) decode(raw []byte) (string, bool) {
	out := r.scratch[:0]
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '&' {
			out = append(out, c)
			i++
			continue
		}
		semi := -1
		for j := i + 1; j < len(raw) && j < i+12; j++ {
			if raw[j] == ';' {
				semi = j
				break
			}
		}
		if semi < 0 {
			return "", false
		}
		ref := raw[i+1 : semi]
		switch string(ref) {
		case "lt":
			out = append(out, '<')
		case "gt":
			out = append(out, '>')
		case "amp":
			out = append(out, '&')
		case "apos":
			out = append(out, '\'')
		case "quot":
			out = append(out, '"')
		default:
			ch, ok := charRef(ref)
			if !ok {
				return "", false
			}
			out = utf8.AppendRune(out, ch)
		}
		i = semi + 1
	}
	r.scratch = out
	return string(out), true
}

// charRef decodes the "#N" or "#xH" of a numeric reference to a character
// XML allows (no surrogates, which encoding/xml would turn into U+FFFD).
func charRef(ref []byte) (rune, bool) {
	if len(ref) < 2 || ref[0] != '#' {
		return 0, false
	}
	digits, base := ref[1:], rune(10)
	if digits[0] == 'x' {
		digits, base = digits[1:], 16
	}
	if len(digits) == 0 || len(digits) > 8 {
		return 0, false
	}
	var n rune
	for _, d := range digits {
		var v rune
		switch {
		case '0' <= d && d <= '9':
			v = rune(d - '0')
		case base == 16 && 'a' <= d && d <= 'f':
			v = rune(d-'a') + 10
		case base == 16 && 'A' <= d && d <= 'F':
			v = rune(d-'A') + 10
		default:
			return 0, false
		}
		n = n*base + v
	}
	inRange := n == 0x09 || n == 0x0A || n == 0x0D || n >= 0x20 && n <= 0xD7FF ||
		n >= 0xE000 && n <= 0xFFFD || n >= 0x10000 && n <= 0x10FFFF
	return n, inRange
}

// comment reads `<!--…-->` at r.i; "--" may only end it. Only printable
// ASCII and white space other than '\r' are taken.
func (r *fastReader) comment(parent *etree.Element) bool {
	start := r.i + 4
	end := indexAt(r.b, start, "--")
	if end < 0 || end+2 >= len(r.b) || r.b[end+2] != '>' {
		return false
	}
	for _, c := range r.b[start:end] {
		if c >= utf8.RuneSelf || c < 0x20 && c != '\t' && c != '\n' {
			return false
		}
	}
	parent.AddChild(etree.NewComment(string(r.b[start:end])))
	r.i = end + 3
	return true
}

// cdata reads `<![CDATA[…]]>` at r.i as text (etree keeps no CDATA flag
// when reading without PreserveCData).
func (r *fastReader) cdata(parent *etree.Element) bool {
	start := r.i + len("<![CDATA[")
	end := indexAt(r.b, start, "]]>")
	if end < 0 {
		return false
	}
	for i := start; i < end; {
		c := r.b[i]
		switch {
		case c == '\r' || c < 0x20 && c != '\t' && c != '\n':
			return false
		case c >= utf8.RuneSelf:
			n, ok := validRune(r.b[i:])
			if !ok {
				return false
			}
			i += n
		default:
			i++
		}
	}
	parent.AddChild(newText(internSpace(r.b[start:end])))
	r.i = end + 3
	return true
}

// newText is a CharData flagged as white space the way etree's reader
// flags it.
func newText(s string) *etree.CharData {
	c := etree.NewText(s)
	c.SetData(s)
	return c
}

// validRune is the length of the UTF-8 character at b[0] when it is valid
// and a character XML allows.
func validRune(b []byte) (int, bool) {
	ch, n := utf8.DecodeRune(b)
	if ch == utf8.RuneError && n <= 1 {
		return 0, false
	}
	return n, ch <= 0xD7FF || ch >= 0xE000 && ch <= 0xFFFD || ch >= 0x10000 && ch <= 0x10FFFF
}

func (r *fastReader) skipSpace() {
	for r.i < len(r.b) && (r.b[r.i] == ' ' || r.b[r.i] == '\t' || r.b[r.i] == '\n') {
		r.i++
	}
}

// isSpaceNoCR is XML white space without '\r', which readFast leaves to
// etree's reader.
func isSpaceNoCR(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

func isSpaceNoCRString(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isSpaceNoCR(s[i]) {
			return false
		}
	}
	return true
}

func isNameStart(c byte) bool { return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || c == '_' }

func isNameByte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '_' || c == ':' || c == '.' || c == '-'
}

func hasPrefixAt(b []byte, i int, p string) bool {
	return i <= len(b) && len(b)-i >= len(p) && string(b[i:i+len(p)]) == p
}

// indexAt is the index of p in b at or after i, or -1.
func indexAt(b []byte, i int, p string) int {
	for j := i; j+len(p) <= len(b); j++ {
		if b[j] == p[0] && string(b[j:j+len(p)]) == p {
			return j
		}
	}
	return -1
}
