package soap

// The lexical half of readFast: names, attribute values, text and
// references, each checked the way encoding/xml checks them; anything
// readFast does not model makes it decline.

import (
	"unicode/utf8"
)

// name reads an ASCII XML name with at most one colon, neither first nor
// last, as interned strings where possible.
func (r *fastReader) name() (space, local string, ok bool) {
	s, l, ok := r.nameBytes()
	if !ok {
		return "", "", false
	}
	return r.intern(s), r.intern(l), true
}

// intern is the package's intern, then a look among the last names read
// (a body repeats its own prefixes and names).
func (r *fastReader) intern(b []byte) string {
	if s, ok := internTable[string(b)]; ok {
		return s
	}
	for _, s := range r.names {
		if s == string(b) {
			return s
		}
	}
	s := string(b)
	r.names[r.nameNext] = s
	r.nameNext = (r.nameNext + 1) % len(r.names)
	return s
}

// nameBytes is name without interning. It finds the colon in the same
// pass that finds the name's end: two IndexByte calls per name were 1 % of
// the CPU at 64 groups × 16 in flight (#22).
func (r *fastReader) nameBytes() (space, local []byte, ok bool) {
	b, start := r.b, r.i
	i, colon, colons := start, 0, 0
	for i < len(b) {
		k := nameClass[b[i]]
		if k == 0 {
			break
		}
		if k == nameColon {
			colon = i - start
			colons++
		}
		i++
	}
	r.i = i
	// A byte ≥ 0x80 would continue the name for encoding/xml.
	if i == start || i < len(b) && b[i] >= utf8.RuneSelf || !isNameStart(b[start]) {
		return nil, nil, false
	}
	name := b[start:i]
	switch {
	case colons == 0:
		return nil, name, true
	case colons > 1 || colon == len(name)-1 || !isNameStart(name[colon+1]):
		return nil, nil, false
	}
	return name[:colon], name[colon+1:], true
}

// attrValue reads a quoted value; '<' in it is malformed.
func (r *fastReader) attrValue() (string, bool) {
	raw, plain, ok := r.attrRaw()
	if !ok {
		return "", false
	}
	if plain {
		return internValue(raw), true
	}
	return r.decode(raw)
}

// attrRaw reads a quoted value as it is written; plain when it holds no
// reference (which the caller then decodes, and so checks).
func (r *fastReader) attrRaw() (raw []byte, plain, ok bool) {
	b, i := r.b, r.i
	if i >= len(b) || b[i] != '"' && b[i] != '\'' {
		return nil, false, false
	}
	q := b[i]
	i++
	start := i
	plain = true
	for {
		for i < len(b) && plainAttrByte[b[i]] {
			i++
		}
		if i >= len(b) {
			return nil, false, false
		}
		c := b[i]
		if c == q {
			break
		}
		switch {
		case c == '<':
			return nil, false, false
		case c == '&':
			plain = false
			i++
		default:
			n, ok := charLen(b, i)
			if !ok {
				return nil, false, false
			}
			i += n
		}
	}
	r.i = i + 1
	return b[start:i], plain, true
}

// text reads character data up to the next '<' or the end.
func (r *fastReader) text() (string, bool) {
	raw, plain, ok := r.textRaw()
	if !ok {
		return "", false
	}
	return r.textValue(raw, plain)
}

// textRaw reads character data up to the next '<' or the end as it is
// written; plain when it holds no reference.
func (r *fastReader) textRaw() (raw []byte, plain, ok bool) {
	b, start := r.b, r.i
	i := start
	plain = true
	for i < len(b) {
		if plainTextByte[b[i]] {
			i++
			continue
		}
		c := b[i]
		switch {
		case c == '<':
			r.i = i
			return b[start:i], plain, true
		case c == '&':
			plain = false
			i++
		case c == ']' && hasPrefixAt(b, i, "]]>"):
			return nil, false, false
		default:
			n, ok := charLen(b, i)
			if !ok {
				return nil, false, false
			}
			i += n
		}
	}
	r.i = i
	return b[start:], plain, true
}

func (r *fastReader) textValue(raw []byte, plain bool) (string, bool) {
	if plain {
		return internSpace(raw), true
	}
	return r.decode(raw)
}

// decode replaces the references in raw; any other '&' is malformed.
func (r *fastReader) decode(raw []byte) (string, bool) {
	out, ok := r.decodeBytes(raw)
	if !ok {
		return "", false
	}
	return string(out), true
}

// decodeBytes is decode into r.scratch, valid until the next call.
func (r *fastReader) decodeBytes(raw []byte) ([]byte, bool) {
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
			return nil, false
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
				return nil, false
			}
			out = utf8.AppendRune(out, ch)
		}
		i = semi + 1
	}
	r.scratch = out
	return out, true
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

// charLen is the length of the character at b[i] when it is one readFast
// takes: an XML character other than '\r' (encoding/xml rewrites line
// ends), in valid UTF-8.
func charLen(b []byte, i int) (int, bool) {
	switch c := b[i]; {
	case c == '\r' || c < 0x20 && c != '\t' && c != '\n':
		return 0, false
	case c >= utf8.RuneSelf:
		return validRune(b[i:])
	}
	return 1, true
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

// Lookup tables of the lexer's inner loops: name bytes, and the bytes of
// text and of attribute values that need no look of their own (printable
// ASCII, tab and line feed, but for markup, references, ']' in text and
// quotes in values).
var (
	nameClass     = nameClasses()
	plainTextByte = byteTable(func(c byte) bool {
		return c == '\t' || c == '\n' || c >= 0x20 && c < utf8.RuneSelf && c != '<' && c != '&' && c != ']'
	})
	plainAttrByte = byteTable(func(c byte) bool {
		return c == '\t' || c == '\n' || c >= 0x20 && c < utf8.RuneSelf && c != '<' && c != '&' && c != '"' && c != '\''
	})
)

// nameClass of a byte: not in a name (0), in a name (1), or the colon.
const nameColon = 2

func nameClasses() (t [256]uint8) {
	for c := range 256 {
		if isNameByte(byte(c)) {
			t[c] = 1
		}
	}
	t[':'] = nameColon
	return t
}

func byteTable(f func(byte) bool) (t [256]bool) {
	for c := range 256 {
		t[c] = f(byte(c))
	}
	return t
}

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
