package soap

import (
	"bytes"
	"unicode/utf8"

	"github.com/beevik/etree"
)

// appendToken appends t as etree's WriteTo writes it with the default
// WriteSettings, byte for byte, without etree's per-element string
// concatenations and per-escape allocations (WithoutWSRM runs for every
// delivered message). Elements and plain text are written here; CDATA
// sections, comments, processing instructions and directives, which
// readFast's envelopes rarely hold, are left to etree.
func appendToken(dst []byte, t etree.Token) []byte {
	switch t := t.(type) {
	case *etree.Element:
		return appendElement(dst, t)
	case *etree.CharData:
		if !t.IsCData() {
			return appendEscaped(dst, t.Data)
		}
	}
	var buf bytes.Buffer
	t.WriteTo(&buf, &etree.WriteSettings{})
	return append(dst, buf.Bytes()...)
}

func appendElement(dst []byte, e *etree.Element) []byte {
	dst = append(dst, '<')
	dst = appendName(dst, e.Space, e.Tag)
	for i := range e.Attr {
		a := &e.Attr[i]
		dst = append(dst, ' ')
		dst = appendName(dst, a.Space, a.Key)
		dst = append(dst, '=', '"')
		dst = appendEscaped(dst, a.Value)
		dst = append(dst, '"')
	}
	if len(e.Child) == 0 {
		return append(dst, '/', '>')
	}
	dst = append(dst, '>')
	for _, c := range e.Child {
		dst = appendToken(dst, c)
	}
	dst = append(dst, '<', '/')
	dst = appendName(dst, e.Space, e.Tag)
	return append(dst, '>')
}

func appendName(dst []byte, space, local string) []byte {
	if space != "" {
		dst = append(dst, space...)
		dst = append(dst, ':')
	}
	return append(dst, local...)
}

// appendEscaped is etree's escapeString in its normal mode: & < > ' " as
// references, '\t' '\n' '\r' as they are, and U+FFFD for invalid UTF-8 and
// characters XML does not allow.
func appendEscaped(dst []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		var esc string
		n := 1 // bytes replaced by esc
		switch {
		case c == '&':
			esc = "&amp;"
		case c == '<':
			esc = "&lt;"
		case c == '>':
			esc = "&gt;"
		case c == '\'':
			esc = "&apos;"
		case c == '"':
			esc = "&quot;"
		case c == '\t' || c == '\n' || c == '\r' || c >= 0x20 && c < utf8.RuneSelf:
			i++
			continue
		case c < 0x20:
			esc = "\uFFFD"
		default:
			// Multi-byte UTF-8 is kept unless invalid (one byte at a
			// time, as DecodeRune reports it) or U+FFFE/U+FFFF.
			r, w := utf8.DecodeRuneInString(s[i:])
			if w > 1 && r != 0xFFFE && r != 0xFFFF {
				i += w
				continue
			}
			esc, n = "\uFFFD", w
		}
		dst = append(dst, s[last:i]...)
		dst = append(dst, esc...)
		i += n
		last = i
	}
	return append(dst, s[last:]...)
}
