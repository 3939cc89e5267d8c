package soap

// WithoutWSRM and BodyContent from the input's bytes, for an envelope
// parsed under ParseOptions.SkipBody by readFast: its Body's content is not
// in the tree (fastread_skip.go), and the bytes are also what was sent (a
// signed Body stays as it was signed).

import (
	"bytes"
	"sort"

	"github.com/beevik/etree"
)

// splice keeps b without the wsrm blocks of e.Header — without the Header
// when no element is left in it, as WithoutWSRM's tree does — and finds
// the Body's skipped content in it. s are readFast's spans of b. Nothing is
// kept when a block has no span (then WithoutWSRM writes the tree).
func (e *Envelope) splice(b []byte, s *docSpans) {
	var cutBuf [8]elemSpan
	cuts := cutBuf[:0]
	if h := e.Header; h != nil {
		hs, ok := s.find(h)
		if !ok {
			return
		}
		kept := 0
		for _, t := range h.Child {
			el, isEl := t.(*etree.Element)
			switch {
			case !isEl:
			case el.NamespaceURI() != NamespaceWSRM:
				kept++
			default:
				sp, ok := s.find(el)
				if !ok {
					return
				}
				cuts = append(cuts, sp)
			}
		}
		if kept == 0 {
			cuts = append(cuts[:0], hs)
		}
	}
	removed := 0
	for _, c := range cuts {
		removed += c.end - c.start
	}
	out := make([]byte, 0, len(b)-removed)
	at := 0
	for _, c := range cuts {
		out = append(out, b[at:c.start]...)
		at = c.end
	}
	e.spliced = append(out, b[at:]...)
	if body := s.body; body.el != nil && body.el == e.Body {
		before := 0
		for _, c := range cuts {
			if c.end <= body.start {
				before += c.end - c.start
			}
		}
		e.lazyBody, e.bodyFrom, e.bodyTo = true, body.start-before, body.end-before
	}
}

// nsDecl is a namespace declaration: prefix "" is the default namespace.
type nsDecl struct{ prefix, uri string }

// declaration is the prefix a declares ("" for the default namespace), and
// whether a is a namespace declaration at all.
func declaration(a etree.Attr) (prefix string, ok bool) {
	switch {
	case a.Space == "xmlns":
		return a.Key, true
	case a.Space == "" && a.Key == "xmlns":
		return "", true
	}
	return "", false
}

// inScope is every declaration in scope at el, the nearest one of each
// prefix, nearest first.
func inScope(el *etree.Element) []nsDecl {
	var out []nsDecl
	for p := el; p != nil; p = p.Parent() {
		for _, a := range p.Attr {
			if prefix, ok := declaration(a); ok && !hasDecl(out, prefix) {
				out = append(out, nsDecl{prefix, a.Value})
			}
		}
	}
	return out
}

func hasDecl(ds []nsDecl, prefix string) bool {
	for _, d := range ds {
		if d.prefix == prefix {
			return true
		}
	}
	return false
}

// lazyBodyContent is BodyContent of a Body left out of the tree: its
// content as written, each child element's start tag given the
// declarations in scope at the Body that it does not make itself, after
// its own attributes and sorted by prefix, as Standalone writes them.
// The content was read by readFast, so it is well-formed and plain.
func (e *Envelope) lazyBodyContent() []byte {
	content := e.spliced[e.bodyFrom:e.bodyTo]
	if len(content) == 0 {
		return content[:0:0] // an empty Body: nothing to declare (#22)
	}
	scope := inScope(e.Body)
	sort.Slice(scope, func(i, j int) bool { return scope[i].prefix < scope[j].prefix })
	out := make([]byte, 0, len(content)+len(scope)*64)
	var own [][]byte // the prefixes a child element declares
	ownDefault := false
	at, depth := 0, 0
	for i := 0; ; {
		j := bytes.IndexByte(content[i:], '<')
		if j < 0 {
			break
		}
		i += j
		switch {
		case hasPrefixAt(content, i, "<!--"):
			i = indexAt(content, i+4, "-->") + 3
		case hasPrefixAt(content, i, "<![CDATA["):
			i = indexAt(content, i+9, "]]>") + 3
		case hasPrefixAt(content, i, "</"):
			depth--
			i += bytes.IndexByte(content[i:], '>') + 1
		default:
			own, ownDefault = own[:0], false
			end, insert, empty := scanStartTag(content, i, func(name []byte) {
				if string(name) == "xmlns" {
					ownDefault = true
				} else if len(name) > 6 && string(name[:6]) == "xmlns:" {
					own = append(own, name[6:])
				}
			})
			if depth == 0 {
				out = append(out, content[at:insert]...)
				for _, d := range scope {
					if d.prefix == "" && !ownDefault || d.prefix != "" && !declared(own, d.prefix) {
						out = appendDecl(out, d)
					}
				}
				at = insert
			}
			if !empty {
				depth++
			}
			i = end
		}
	}
	return append(out, content[at:]...)
}

// scanStartTag reads the well-formed start tag at tag[i], calling attr
// with each attribute's name: where it ends, where its last attribute (or
// its name) ends, and whether it is empty.
func scanStartTag(tag []byte, i int, attr func(name []byte)) (end, insert int, empty bool) {
	i++
	for isNameByte(tag[i]) {
		i++
	}
	for {
		insert = i
		for isSpaceNoCR(tag[i]) {
			i++
		}
		switch tag[i] {
		case '>':
			return i + 1, insert, false
		case '/':
			return i + 2, insert, true
		}
		name := i
		for isNameByte(tag[i]) {
			i++
		}
		attr(tag[name:i])
		q := bytes.IndexAny(tag[i:], `"'`) + i // past '=' and white space
		i = bytes.IndexByte(tag[q+1:], tag[q]) + q + 2
	}
}

func declared(own [][]byte, prefix string) bool {
	for _, p := range own {
		if string(p) == prefix {
			return true
		}
	}
	return false
}

func appendDecl(dst []byte, d nsDecl) []byte {
	dst = append(dst, " xmlns"...)
	if d.prefix != "" {
		dst = append(dst, ':')
		dst = append(dst, d.prefix...)
	}
	dst = append(dst, '=', '"')
	dst = appendEscaped(dst, d.uri)
	return append(dst, '"')
}
