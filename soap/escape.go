package soap

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// errBadChar is returned for a string that XML 1.0 cannot carry.
var errBadChar = errors.New("soap: value holds invalid UTF-8 or a character XML 1.0 does not allow")

// writer appends to buf and remembers the first error; methods are no-ops
// after an error.
type writer struct {
	buf []byte
	err error
}

func (w *writer) raw(s string) { w.buf = append(w.buf, s...) }

func (w *writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// attrValue appends s escaped for a double-quoted attribute value. Tab, LF
// and CR are written as character references so attribute-value
// normalisation keeps them.
func (w *writer) attrValue(s string) { w.escape(s, true) }

// text appends s escaped as character data.
func (w *writer) text(s string) { w.escape(s, false) }

func (w *writer) escape(s string, inAttr bool) {
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x80 {
			r, size := utf8.DecodeRuneInString(s[i:])
			if (r == utf8.RuneError && size == 1) || (r >= 0xFFFE && r <= 0xFFFF) || (r >= 0xD800 && r <= 0xDFFF) {
				w.fail(errBadChar)
				return
			}
			i += size
			continue
		}
		var esc string
		switch {
		case c == '&':
			esc = "&amp;"
		case c == '<':
			esc = "&lt;"
		case c == '>':
			esc = "&gt;"
		case c == '"' && inAttr:
			esc = "&quot;"
		case c == '\t' && inAttr:
			esc = "&#x9;"
		case c == '\n' && inAttr:
			esc = "&#xA;"
		case c == '\r':
			esc = "&#xD;"
		case c < 0x20 && c != '\t' && c != '\n':
			w.fail(errBadChar)
			return
		default:
			i++
			continue
		}
		w.buf = append(w.buf, s[last:i]...)
		w.buf = append(w.buf, esc...)
		i++
		last = i
	}
	w.buf = append(w.buf, s[last:]...)
}

// attr appends ` key="value"`.
func (w *writer) attr(key, value string) {
	w.buf = append(w.buf, ' ')
	w.buf = append(w.buf, key...)
	w.buf = append(w.buf, '=', '"')
	w.attrValue(value)
	w.buf = append(w.buf, '"')
}

// uintAttr appends ` key="n"`.
func (w *writer) uintAttr(key string, n uint64) {
	w.buf = append(w.buf, ' ')
	w.buf = append(w.buf, key...)
	w.buf = append(w.buf, '=', '"')
	w.buf = strconv.AppendUint(w.buf, n, 10)
	w.buf = append(w.buf, '"')
}
