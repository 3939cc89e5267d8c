package soap

import (
	"github.com/beevik/etree"

	"github.com/wsrkit/wsrkit/faults"
)

// CheckBodyContent checks body as the content of a SOAP Body of version v
// that AppendEnvelope will send: the envelope it travels in is read with
// Parse under o — the reader and limits of an inbound message, so nothing
// is sent that a peer with the same limits refuses (issue 18) — and must
// hold one Body whose content is zero or more elements, with only white
// space and comments between them (SOAP 1.1 §4.3, SOAP 1.2 §5.3). Its
// errors are *faults.Fault, as Parse's. o.MaxBytes does not count the
// envelope around body.
func CheckBodyContent(v Version, body []byte, o ParseOptions) error {
	b, err := AppendEnvelope(nil, v, Headers{}, faults.Extended, body)
	if err != nil {
		return err
	}
	o = o.withDefaults()
	o.MaxBytes = max(o.MaxBytes, len(b))
	env, err := Parse(b, o)
	if err != nil {
		return err
	}
	for _, t := range env.Body.Child {
		if cd, ok := t.(*etree.CharData); ok && !cd.IsWhitespace() {
			return faults.New(faults.InvalidRequest, "soap.body.text",
				"text beside the elements of the Body: its content is zero or more elements")
		}
	}
	return nil
}
