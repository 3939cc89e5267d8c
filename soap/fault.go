package soap

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/beevik/etree"
	"github.com/wsrkit/wsrkit/faults"
)

// Fault is a SOAP Fault read from a Body (digest §7, §12.5).
type Fault struct {
	// Code is the wsrm fault code the Fault carries, 0 when none: the SOAP
	// 1.2 Subcode, or in SOAP 1.1 either a wsrm faultcode or a wsrm QName at
	// the start of faultstring (A4, both accepted).
	Code faults.Code
	// SOAPCode is the local name of the SOAP-level code in the envelope
	// namespace (Client, Server, Sender, Receiver, MustUnderstand, …). For a
	// SOAP 1.1 faultcode that is a wsrm QName it is Code's SOAP 1.1 mapping.
	SOAPCode string
	// Reason is faultstring (1.1) or the first Reason/Text (1.2).
	Reason string
}

// decodeFault reads a Fault that is the first element of the Body.
func (env *Envelope) decodeFault() error {
	ns := env.Version.Namespace()
	var fe *etree.Element
	for _, t := range env.Body.Child {
		if el, ok := t.(*etree.Element); ok {
			fe = el
			break
		}
	}
	if fe == nil || fe.Tag != "Fault" || nsOf(fe, env.Body.Space, ns) != ns {
		return nil
	}
	f := &Fault{}
	var err error
	if env.Version == SOAP11 {
		err = decodeFault11(fe, f)
	} else {
		err = decodeFault12(fe, f)
	}
	if err != nil {
		return err
	}
	env.Fault = f
	return nil
}

func malformedFault(reason string) error {
	return faults.New(faults.InvalidRequest, "soap.fault.malformed", reason)
}

// decodeFault11 reads faultcode and faultstring (unqualified children).
func decodeFault11(fe *etree.Element, f *Fault) error {
	code, str := lastChildren(fe, "", "faultcode", "faultstring")
	if code == nil {
		return malformedFault("SOAP 1.1 Fault has no faultcode")
	}
	v, ns, local, err := qnameText(code, "faultcode")
	if err != nil {
		return err
	}
	switch ns {
	case NamespaceSOAP11:
		f.SOAPCode = local
	case NamespaceWSRM: // A4: a wsrm QName as the faultcode itself
		c, known := faults.Parse(local)
		if !known {
			return malformedFault("faultcode " + quote(v) + " is not a known wsrm code")
		}
		f.Code, f.SOAPCode = c, c.SOAP11FaultCode()
	default:
		f.SOAPCode = local
	}
	if str != nil {
		f.Reason, _ = textOf(str)
		if f.Code == 0 {
			f.Code = leadingCode(str, f.Reason)
		}
	}
	return nil
}

// leadingCode finds a wsrm code written as "prefix:Name" at the start of a
// SOAP 1.1 faultstring (A4, §12.5). The prefix must be bound to the wsrm
// namespace, or be the conventional unbound "wsrm".
func leadingCode(el *etree.Element, s string) faults.Code {
	s = trimXMLSpace(s)
	end := strings.IndexAny(s, " \t\r\n")
	if end < 0 {
		end = len(s)
	}
	tok := s[:end]
	i := strings.IndexByte(tok, ':')
	if i <= 0 {
		return 0
	}
	ns, bound := lookupPrefix(el, tok[:i])
	if bound && ns != NamespaceWSRM || !bound && tok[:i] != "wsrm" {
		return 0
	}
	c, _ := faults.Parse(tok[i+1:])
	return c
}

// decodeFault12 reads Code/Value, the first wsrm Subcode/Value at any depth,
// and the first Reason/Text.
func decodeFault12(fe *etree.Element, f *Fault) error {
	code, reason := lastChildren(fe, NamespaceSOAP12, "Code", "Reason")
	if code == nil {
		return malformedFault("SOAP 1.2 Fault has no Code")
	}
	level := 0
	for c := code; c != nil; level++ {
		value, sub := lastChildren(c, NamespaceSOAP12, "Value", "Subcode")
		if value == nil {
			return malformedFault("SOAP 1.2 Code or Subcode has no Value")
		}
		_, ns, local, err := qnameText(value, "Code value")
		if err != nil {
			return err
		}
		if level == 0 {
			f.SOAPCode = local
		} else if ns == NamespaceWSRM && f.Code == 0 {
			if k, known := faults.Parse(local); known {
				f.Code = k
			}
		}
		c = sub
	}
	if reason != nil {
		for _, t := range reason.ChildElements() {
			if t.Tag == "Text" && t.NamespaceURI() == NamespaceSOAP12 {
				f.Reason, _ = textOf(t)
				break
			}
		}
	}
	return nil
}

// qnameText reads the text of el, a fault code, as a QName; what names el
// in the error.
func qnameText(el *etree.Element, what string) (v, ns, local string, err error) {
	v, _ = textOf(el)
	ns, local, ok := resolveQName(el, v)
	if !ok {
		return v, "", "", malformedFault(what + " " + quote(v) + " is not a QName with a declared prefix")
	}
	return v, ns, local, nil
}

// lastChildren returns the last child elements of parent named a and b in
// namespace ns; ns "" means unqualified: no namespace and no prefix.
func lastChildren(parent *etree.Element, ns, a, b string) (x, y *etree.Element) {
	for _, c := range parent.ChildElements() {
		if ns == "" && c.Space != "" || c.NamespaceURI() != ns {
			continue
		}
		switch c.Tag {
		case a:
			x = c
		case b:
			y = c
		}
	}
	return x, y
}

// AppendFaultEnvelope appends a SOAP Fault envelope for wsrm code c (after
// dialect d, D6) with a human reason (digest §7, §12.5, A4): SOAP 1.1 gets
// faultcode Client or Server and the wsrm QName at the start of
// faultstring; SOAP 1.2 gets Code/Value Sender or Receiver, the wsrm QName as
// Subcode/Value and the reason as Reason/Text in English. Invalid UTF-8 and
// characters XML cannot carry in reason are replaced by U+FFFD.
func AppendFaultEnvelope(dst []byte, v Version, c faults.Code, reason string, d faults.Dialect) ([]byte, error) {
	if !v.Valid() {
		return dst, errors.New("soap: unknown SOAP version")
	}
	if !c.Valid() {
		return dst, errors.New("soap: invalid fault code " + c.String())
	}
	c = d.Wire(c)
	reason = sanitize(reason)
	w := writer{buf: dst}
	p := v.prefix()
	w.raw("<" + p + ":Envelope xmlns:" + p + `="` + v.Namespace() + `" xmlns:wsrm="` + NamespaceWSRM + `">`)
	w.raw("<" + p + ":Body><" + p + ":Fault>")
	if v == SOAP11 {
		w.raw("<faultcode>" + p + ":" + c.SOAP11FaultCode() + "</faultcode><faultstring>")
		w.raw(c.QName("wsrm"))
		if reason != "" {
			w.raw(" - ")
			w.text(reason)
		}
		w.raw("</faultstring>")
	} else {
		w.raw("<" + p + ":Code><" + p + ":Value>" + p + ":" + c.SOAP12Code() + "</" + p + ":Value>")
		w.raw("<" + p + ":Subcode><" + p + ":Value>" + c.QName("wsrm") + "</" + p + ":Value></" + p + ":Subcode>")
		w.raw("</" + p + ":Code><" + p + `:Reason><` + p + `:Text xml:lang="en">`)
		if reason == "" {
			reason = c.QName("wsrm")
		}
		w.text(reason)
		w.raw("</" + p + ":Text></" + p + ":Reason>")
	}
	w.raw("</" + p + ":Fault></" + p + ":Body></" + p + ":Envelope>")
	if w.err != nil {
		return dst, w.err
	}
	return w.buf, nil
}

// sanitize replaces what XML 1.0 cannot carry with U+FFFD.
func sanitize(s string) string {
	ok := utf8.ValidString(s)
	for _, r := range s {
		if !xmlChar(r) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	return strings.Map(func(r rune) rune {
		if xmlChar(r) {
			return r
		}
		return '\uFFFD'
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

func xmlChar(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return true
	case r < 0x20:
		return false
	case r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE, r == 0xFFFF:
		return false
	}
	return r <= 0x10FFFF
}
