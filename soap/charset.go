package soap

// UTF-16 input: XML 1.0 §4.3.3 says every processor reads UTF-8 and
// UTF-16. Both readers (readFast and etree's) read UTF-8 only, so a UTF-16
// envelope is transcoded first and its declaration made to say UTF-8; a
// UTF-8 envelope costs a look at its first two bytes.

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/wsrkit/wsrkit/faults"
)

// isUTF16Charset reports whether a charset parameter names UTF-16.
func isUTF16Charset(cs string) bool {
	switch strings.ToLower(cs) {
	case "utf-16", "utf-16le", "utf-16be":
		return true
	}
	return false
}

// ToUTF8 returns b as UTF-8 (b itself when it is not UTF-16). charset is
// the Content-Type's charset parameter, "" when absent. The byte order
// comes from a BOM (which wins over the parameter, RFC 7303 §3.3), else
// from "utf-16le"/"utf-16be", else from where the zero byte of the first
// '<' is (XML 1.0 appendix F). A transcoded document's XML declaration,
// if any, must declare UTF-16 and is rewritten to declare UTF-8. Problems
// are InvalidRequest faults (rule soap.xml.encoding).
func ToUTF8(b []byte, charset string) ([]byte, error) {
	bigEndian, start, ok := utf16Order(b, charset)
	if !ok {
		return b, nil
	}
	if (len(b)-start)%2 != 0 {
		return nil, encodingFault("UTF-16 envelope has an odd number of bytes")
	}
	out := make([]byte, 0, len(b)/2+16)
	for i := start; i < len(b); i += 2 {
		u := rune(b[i])<<8 | rune(b[i+1])
		if !bigEndian {
			u = rune(b[i+1])<<8 | rune(b[i])
		}
		switch {
		case u >= 0xD800 && u < 0xDC00: // a high surrogate: a low one must follow
			if i+3 >= len(b) {
				return nil, encodingFault("UTF-16 envelope ends inside a surrogate pair")
			}
			l := rune(b[i+2])<<8 | rune(b[i+3])
			if !bigEndian {
				l = rune(b[i+3])<<8 | rune(b[i+2])
			}
			if l < 0xDC00 || l > 0xDFFF {
				return nil, encodingFault("UTF-16 envelope has an unpaired surrogate")
			}
			u = 0x10000 + (u-0xD800)<<10 + (l - 0xDC00)
			i += 2
		case u >= 0xDC00 && u <= 0xDFFF:
			return nil, encodingFault("UTF-16 envelope has an unpaired surrogate")
		}
		out = utf8.AppendRune(out, u)
	}
	return redeclareUTF8(out)
}

// utf16Order tells whether b is UTF-16, its byte order and where its text
// starts (after a BOM).
func utf16Order(b []byte, charset string) (bigEndian bool, start int, ok bool) {
	if len(b) < 2 {
		return false, 0, false
	}
	switch {
	case b[0] == 0xFE && b[1] == 0xFF:
		return true, 2, true
	case b[0] == 0xFF && b[1] == 0xFE:
		return false, 2, true
	case bytes.HasPrefix(b, utf8BOM):
		return false, 0, false
	}
	switch strings.ToLower(charset) {
	case "utf-16be":
		return true, 0, true
	case "utf-16le":
		return false, 0, true
	}
	switch {
	case b[0] == 0 && b[1] != 0:
		return true, 0, true
	case b[0] != 0 && b[1] == 0:
		return false, 0, true
	}
	// "utf-16" without a BOM and without a readable first character: big
	// endian (RFC 2781 §4.3).
	return true, 0, isUTF16Charset(charset)
}

// redeclareUTF8 rewrites the encoding of b's XML declaration (which must
// name UTF-16, XML 1.0 §4.3.3) to UTF-8; b without one is returned as is.
func redeclareUTF8(b []byte) ([]byte, error) {
	if !bytes.HasPrefix(b, []byte("<?xml")) || len(b) < 6 || !isXMLSpace(b[5]) {
		return b, nil
	}
	end := bytes.Index(b, []byte("?>"))
	if end < 0 {
		return b, nil // malformed: the reader says why
	}
	decl := b[:end]
	at := bytes.Index(decl, []byte("encoding"))
	if at < 0 {
		return b, nil
	}
	i := at + len("encoding")
	for i < len(decl) && isXMLSpace(decl[i]) {
		i++
	}
	if i >= len(decl) || decl[i] != '=' {
		return b, nil
	}
	i++
	for i < len(decl) && isXMLSpace(decl[i]) {
		i++
	}
	if i >= len(decl) || decl[i] != '"' && decl[i] != '\'' {
		return b, nil
	}
	q := decl[i]
	j := bytes.IndexByte(decl[i+1:], q)
	if j < 0 {
		return b, nil
	}
	name := string(decl[i+1 : i+1+j])
	if !isUTF16Charset(name) {
		return nil, encodingFault("the envelope is UTF-16 but its XML declaration says " + quote(name))
	}
	out := make([]byte, 0, len(b))
	out = append(out, b[:i+1]...)
	out = append(out, "UTF-8"...)
	return append(out, b[i+1+j:]...), nil
}

func encodingFault(reason string) error {
	return faults.New(faults.InvalidRequest, "soap.xml.encoding", reason)
}
