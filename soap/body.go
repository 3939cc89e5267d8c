package soap

import (
	"bytes"
	"sort"

	"github.com/beevik/etree"
)

// Standalone serialises el as a well-formed fragment that stands on its own:
// a copy of el that also declares every namespace in scope at el (nearest
// declaration wins, sorted by prefix, default namespace first) that el does
// not declare itself. Every in-scope declaration is kept, not only those el's
// names use, because QName values in content need them too. el is unchanged.
func Standalone(el *etree.Element) []byte {
	var buf bytes.Buffer
	writeStandalone(&buf, el)
	return buf.Bytes()
}

func writeStandalone(buf *bytes.Buffer, el *etree.Element) {
	c := el.Copy()
	own := map[string]bool{}
	for _, a := range el.Attr {
		if prefix, ok := declaration(a); ok {
			own[prefix] = true
		}
	}
	type decl struct{ prefix, uri string }
	var add []decl
	for p := el.Parent(); p != nil; p = p.Parent() {
		for _, a := range p.Attr {
			if prefix, ok := declaration(a); ok && !own[prefix] {
				own[prefix] = true
				add = append(add, decl{prefix, a.Value})
			}
		}
	}
	sort.Slice(add, func(i, j int) bool { return add[i].prefix < add[j].prefix })
	for _, d := range add {
		if d.prefix == "" {
			c.CreateAttr("xmlns", d.uri)
		} else {
			c.CreateAttr("xmlns:"+d.prefix, d.uri)
		}
	}
	c.WriteTo(buf, &etree.WriteSettings{})
}

// BodyContent returns the content of the SOAP Body, ready to be handed to a
// consumer or forwarded: each child element is written with Standalone (so
// it carries the namespace declarations it had in scope), text and comments
// are written as they were read. CDATA sections come back as escaped text.
// Under ParseOptions.SkipBody it may instead be the content's own bytes
// (CDATA sections and references as they were written) with the same
// declarations added.
func (e *Envelope) BodyContent() []byte {
	if e.Body == nil {
		return nil
	}
	if e.lazyBody {
		return e.lazyBodyContent()
	}
	if len(e.Body.Child) == 0 {
		return nil // an ack's empty Body, without a buffer (#22)
	}
	var buf bytes.Buffer
	ws := &etree.WriteSettings{}
	for _, t := range e.Body.Child {
		if el, ok := t.(*etree.Element); ok {
			writeStandalone(&buf, el)
			continue
		}
		t.WriteTo(&buf, ws)
	}
	return buf.Bytes()
}

// WithoutWSRM returns the envelope re-serialised without its wsrm header
// blocks (every Header child in the wsrm namespace), for delivery to a
// consumer. A Header left with no element is dropped. Other headers, the
// Body and the namespace declarations stay as they were read. Under
// ParseOptions.SkipBody it may instead be the input's own bytes less those
// blocks, kept by Parse and the same on every call: the caller must not
// modify them.
func (e *Envelope) WithoutWSRM() ([]byte, error) {
	if e.spliced != nil {
		return e.spliced[:len(e.spliced):len(e.spliced)], nil
	}
	// Written from shallow copies of the root and the Header, not from a
	// deep copy of the document: this runs for every delivered message.
	out := make([]byte, 0, e.size)
	root := e.Doc.Root()
	for _, t := range e.Doc.Child {
		if el, ok := t.(*etree.Element); !ok || el != root || e.Header == nil {
			out = appendToken(out, t)
			continue
		}
		r := *root
		r.Child = make([]etree.Token, 0, len(root.Child))
		for _, c := range root.Child {
			if c == etree.Token(e.Header) {
				h, keep := withoutWSRMBlocks(e.Header)
				if !keep {
					continue
				}
				c = h
			}
			r.Child = append(r.Child, c)
		}
		out = appendElement(out, &r)
	}
	return out, nil
}

// withoutWSRMBlocks returns a shallow copy of the Header h without its
// wsrm children, and whether any element is left in it.
func withoutWSRMBlocks(h *etree.Element) (*etree.Element, bool) {
	c := *h
	c.Child = make([]etree.Token, 0, len(h.Child))
	elements := 0
	for _, t := range h.Child {
		if el, ok := t.(*etree.Element); ok {
			if el.NamespaceURI() == NamespaceWSRM {
				continue
			}
			elements++
		}
		c.Child = append(c.Child, t)
	}
	return &c, elements > 0
}
