package soap

// Checking an envelope's structural limits while its bytes arrive, so that
// a body past one of them is refused after its first ~40 KB instead of
// being read and buffered whole (issue 18: a flood of 3.6 MB bodies of
// 900k `<y/>` cost every other client its latency). The Scanner refuses
// only what Parse refuses: its element count is countMarkup's (by which
// Parse decides) less a leading XML declaration, which readFast does not
// count, and depth and attributes are tracked only while the markup is
// well-formed. FuzzScanner checks both, for any split into pieces.

import (
	"bytes"

	"github.com/wsrkit/wsrkit/faults"
)

// A Scanner checks the MaxElements, MaxDepth and MaxAttributes limits of
// ParseOptions over an envelope written to it in pieces of any size. Write
// returns the fault Parse answers for the first limit crossed (rules
// soap.limit.elements, soap.limit.depth, soap.limit.attributes), and the
// same fault from then on: the rest of the envelope need not be read.
// UTF-8 and UTF-16, told apart as ToUTF8 does, are both scanned.
type Scanner struct {
	o       ParseOptions
	charset string
	err     error // the limit crossed; sticky

	head  []byte // the first bytes, until the encoding is known
	enc   int    // encUnknown, encUTF8, encUTF16LE, encUTF16BE
	unit  []byte // a UTF-16 code unit's first byte
	boms  int    // UTF-16: leading U+FEFF seen after the byte order mark
	pos   int64  // bytes (UTF-16: code units) scanned
	pend  []byte // a '<' and what follows it, until countMarkup's case is known
	first bool   // pend's '<' is the first byte

	// countMarkup's walk.
	skip  string  // the terminator of the comment, CDATA section or PI skipped; "" outside one
	last  [2]byte // the last two bytes of the section skipped
	decl  []byte  // a PI at the start: its first bytes, to tell an XML declaration
	elems int

	// Start and end tags, for depth and attributes.
	lost  bool // the markup is not well-formed: no longer tracked (Parse refuses it)
	depth int  // elements open
	inTag bool // inside a start tag
	quote byte // the quote of the attribute value being read; 0 outside one
	slash bool // the tag's last byte outside a value was '/'
	attrs int  // '=' outside values: the tag's attributes
}

const (
	encUnknown = iota
	encUTF8
	encUTF16LE
	encUTF16BE
)

// NewScanner returns a Scanner for an envelope under o; charset is the
// Content-Type's charset parameter ("" when absent), as for ToUTF8.
func NewScanner(o ParseOptions, charset string) *Scanner {
	return &Scanner{o: o.withDefaults(), charset: charset}
}

// Write scans p; it returns len(p) and the fault of a limit crossed.
func (s *Scanner) Write(p []byte) (int, error) {
	n := len(p)
	if s.err != nil {
		return n, s.err
	}
	if s.enc == encUnknown {
		// utf16Order reads at most the first three bytes. A first piece
		// that holds them is scanned where it is, not copied.
		if len(s.head) > 0 || len(p) < 3 {
			if s.head = append(s.head, p...); len(s.head) < 3 {
				return n, nil
			}
			p, s.head = s.head, nil
		}
		bigEndian, start, utf16 := utf16Order(p, s.charset)
		switch {
		case !utf16:
			s.enc = encUTF8
			if hasPrefixAt(p, 0, string(utf8BOM)) {
				p = p[len(utf8BOM):]
			}
		case bigEndian:
			s.enc, p = encUTF16BE, p[start:]
		default:
			s.enc, p = encUTF16LE, p[start:]
		}
	}
	if s.enc == encUTF8 {
		s.utf8(p)
		return n, s.err
	}
	// UTF-16: markup is made of ASCII characters only, so each code unit
	// is scanned as its ASCII byte, or as 0x80 when it is any other.
	for i := 0; i < len(p) && s.err == nil; i++ {
		if s.unit = append(s.unit, p[i]); len(s.unit) < 2 {
			continue
		}
		u := uint16(s.unit[0]) | uint16(s.unit[1])<<8
		if s.enc == encUTF16BE {
			u = uint16(s.unit[0])<<8 | uint16(s.unit[1])
		}
		s.unit = s.unit[:0]
		if u == 0xFEFF && s.pos == 0 && s.boms == 0 {
			s.boms++ // transcoded, it is the UTF-8 BOM Parse trims
			continue
		}
		c := byte(0x80)
		if u < 0x80 {
			c = byte(u)
		}
		s.pos++
		s.walk(c)
	}
	return n, s.err
}

// utf8 scans UTF-8 bytes: walk, byte by byte, but for the runs of text,
// tag names and attribute values that change nothing but where the walk
// is, and for the '<' of start and end tags, which need not wait in pend.
// Scanned in pieces of one byte (FuzzScanner) it is walk alone.
func (s *Scanner) utf8(p []byte) {
	for i := 0; i < len(p) && s.err == nil; {
		if s.skip == "" && len(s.pend) == 0 {
			if !s.inTag {
				j := bytes.IndexByte(p[i:], '<')
				if j < 0 {
					s.pos += int64(len(p) - i)
					return
				}
				s.pos, i = s.pos+int64(j), i+j
				if i+1 < len(p) {
					switch c := p[i+1]; {
					case c == '/':
						s.pos, i = s.pos+2, i+2
						s.endTag()
						continue
					case isNameStart(c) || c == ':' || c >= 0x80:
						s.pos, i = s.pos+2, i+2
						if s.count(); s.err == nil {
							s.startTag(c)
						}
						continue
					}
				}
			} else if n := s.tagRun(p[i:]); n > 0 {
				s.pos, i = s.pos+int64(n), i+n
				continue
			}
		}
		s.pos++
		s.walk(p[i])
		i++
	}
}

// tagRun is how many bytes at the start of p, in a start tag, tag only
// changes slash for: name bytes, white space, an attribute value's bytes.
func (s *Scanner) tagRun(p []byte) int {
	if s.quote != 0 {
		if j := bytes.IndexByte(p, s.quote); j >= 0 {
			return j
		}
		return len(p)
	}
	for i, c := range p {
		switch c {
		case '"', '\'', '=', '>', '<', '/':
			if i > 0 {
				s.slash = false
			}
			return i
		}
	}
	s.slash = false
	return len(p)
}

// walk scans one byte as countMarkup does: a '<' counts unless it starts
// an end tag; a comment, CDATA section or PI is skipped from the byte
// after its '<' to its terminator; after any other '<' the walk goes on
// from the next byte. Start and end tags are followed beside it.
func (s *Scanner) walk(c byte) {
	switch {
	case s.skip != "":
		s.skipping(c)
	case len(s.pend) > 0:
		s.pend = append(s.pend, c)
		s.classify()
	default:
		if s.inTag {
			s.tag(c)
		}
		if c == '<' {
			s.pend, s.first = append(s.pend[:0], c), s.pos == 1
		}
	}
}

// classify decides the case of the '<' in pend once enough of what
// follows it is read.
func (s *Scanner) classify() {
	p := string(s.pend)
	switch {
	case p == "<!" || p == "<!-" || len(p) < len("<![CDATA[") && p == "<![CDATA["[:len(p)]:
		return // undecided
	case p == "</":
		s.pend = s.pend[:0]
		s.endTag()
	case p == "<!--":
		s.pend = s.pend[:0]
		s.startSkip("-->", '-', '-')
		s.count()
	case p == "<![CDATA[":
		s.pend = s.pend[:0]
		s.startSkip("]]>", 'A', '[')
		s.count()
	case p == "<?":
		s.pend = s.pend[:0]
		s.startSkip("?>", 0, '?')
		if s.first {
			s.decl = []byte{} // counted unless it is "<?xml" and a space
			return
		}
		s.count()
	default:
		var buf [len("<![CDATA[")]byte
		after := buf[:copy(buf[:], s.pend[1:])]
		s.pend = s.pend[:0]
		if s.count(); s.err != nil {
			return
		}
		s.startTag(after[0])
		for _, c := range after {
			if s.err == nil {
				s.walk(c)
			}
		}
	}
}

// startSkip enters a skipped section whose last two bytes read so far are
// a and b.
func (s *Scanner) startSkip(end string, a, b byte) {
	s.skip, s.last = end, [2]byte{a, b}
	s.inTag = false // a section inside a start tag: lost already (tag)
}

// skipping reads a byte of a skipped section.
func (s *Scanner) skipping(c byte) {
	if s.decl != nil {
		// readFast's declaration: "<?xml" and a space other than CR.
		if s.decl = append(s.decl, c); len(s.decl) == 4 {
			if string(s.decl[:3]) != "xml" || !isSpaceNoCR(s.decl[3]) {
				s.count()
			}
			s.decl = nil
		}
	}
	end := s.skip
	done := c == '>' && s.last[1] == end[len(end)-2] && (len(end) == 2 || s.last[0] == end[0])
	s.last = [2]byte{s.last[1], c}
	if !done {
		return
	}
	s.skip = ""
	if s.decl != nil {
		s.decl = nil
		s.count() // "<?…?>" ended before "xml" and a space
	}
}

// count counts one more markup.
func (s *Scanner) count() {
	if s.elems++; s.elems > s.o.MaxElements {
		s.err = faults.New(faults.InvalidRequest, "soap.limit.elements",
			"envelope has more than "+itoa(uint64(s.o.MaxElements))+" elements, comments and CDATA sections")
	}
}

// startTag begins the start tag whose name starts with c.
func (s *Scanner) startTag(c byte) {
	switch {
	case s.lost:
		return
	case !(isNameStart(c) || c == ':' || c >= 0x80):
		s.lost = true // a DOCTYPE, or not XML: Parse says which
		return
	case s.depth+1 > s.o.MaxDepth:
		s.err = faults.New(faults.InvalidRequest, "soap.limit.depth",
			"XML nesting is deeper than "+itoa(uint64(s.o.MaxDepth)))
		return
	}
	s.inTag, s.quote, s.slash, s.attrs = true, 0, false, 0
}

// tag reads a byte of a start tag (its name's first byte included).
func (s *Scanner) tag(c byte) {
	switch {
	case s.quote != 0:
		if c == s.quote {
			s.quote = 0
		}
		return
	case c == '"' || c == '\'':
		s.quote = c
	case c == '=':
		if s.attrs++; s.attrs > s.o.MaxAttributes {
			s.err = faults.New(faults.InvalidRequest, "soap.limit.attributes",
				"an element has more than "+itoa(uint64(s.o.MaxAttributes))+" attributes")
		}
	case c == '>':
		s.inTag = false
		if !s.slash {
			s.depth++
		}
		return
	case c == '<':
		s.lost, s.inTag = true, false // not well-formed
		return
	}
	s.slash = c == '/'
}

// endTag closes the innermost element.
func (s *Scanner) endTag() {
	if s.inTag {
		s.lost, s.inTag = true, false
	}
	if s.lost {
		return
	}
	if s.depth--; s.depth < 0 {
		s.lost = true
	}
}
