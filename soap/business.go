package soap

import (
	"bytes"
	"encoding/xml"
	"errors"
	"strings"
)

// A business response is the SOAP Body content a service answered with
// (R73). When that content is a SOAP Fault — a business fault such as a
// refused order — it is still the service's answer: it rides back beside
// the wsrm:Response ack, and the HTTP status says "fault" as SOAP's HTTP
// binding requires (WS-I BP R1126; SOAP 1.2 Part 2 §7.5.1.2).

// BusinessFault reports whether content, a SOAP Body's content as
// Envelope.BodyContent gives it, is a SOAP Fault of version v, and returns
// the local name of its SOAP code (Client, Server, Sender, Receiver,
// MustUnderstand, VersionMismatch, …; for a SOAP 1.1 dotted code such as
// Client.Auth, Client).
func BusinessFault(v Version, content []byte) (code string, ok bool) {
	if !v.Valid() || !bytes.Contains(content, []byte("Fault")) {
		return "", false
	}
	d := xml.NewDecoder(bytes.NewReader(content))
	ns := v.Namespace()
	depth := 0
	inCode := false // in faultcode (1.1) or Code/Value directly (1.2)
	var path []string
	for {
		tok, err := d.Token()
		if err != nil {
			return "", depth > 0 && code != ""
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 1 {
				if t.Name.Local != "Fault" || t.Name.Space != ns {
					return "", false
				}
				ok = true
			}
			path = append(path, t.Name.Local)
			inCode = v == SOAP11 && depth == 2 && t.Name.Local == "faultcode" ||
				v == SOAP12 && depth == 3 && path[1] == "Code" && t.Name.Local == "Value"
		case xml.CharData:
			if inCode && code == "" {
				code = soapCodeLocal(string(t))
			}
		case xml.EndElement:
			depth--
			path = path[:len(path)-1]
			inCode = false
			if depth == 0 {
				return code, ok
			}
		}
	}
}

// soapCodeLocal is the local part of a QName code value, without a SOAP 1.1
// dotted refinement.
func soapCodeLocal(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s = s[:i]
	}
	return s
}

// BusinessStatus is the HTTP status of an answer whose Body is content:
// 200, or for a SOAP Fault 500 (SOAP 1.1) / 400 for Sender, else 500
// (SOAP 1.2).
func BusinessStatus(v Version, content []byte) int {
	code, ok := BusinessFault(v, content)
	switch {
	case !ok:
		return StatusEnvelope
	case v == SOAP12 && code == "Sender":
		return 400
	}
	return 500
}

// FinalFault reports whether a SOAP Fault with the SOAP code code is the
// answer itself rather than a failure to process it: Client/Sender (the
// request is wrong and stays wrong), MustUnderstand, VersionMismatch and
// DataEncodingUnknown (the peer cannot process such a request). Server and
// Receiver faults are transient: the same request may succeed later.
// A SOAP 1.1 dotted refinement (Client.Auth) counts as its base code.
func FinalFault(code string) bool {
	if i := strings.IndexByte(code, '.'); i >= 0 {
		code = code[:i]
	}
	return finalCodes[code]
}

var finalCodes = map[string]bool{"Client": true, "Sender": true, "MustUnderstand": true, "VersionMismatch": true, "DataEncodingUnknown": true}

// isNCName: a non-empty run of letters, digits, '_', '-', '.', not
// starting with a digit, '-' or '.' (the ASCII subset of XML names).
func isNCName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// FaultCode is the local name of v's SOAP code for a fault by the sender of
// a request (Client, Sender) or by its receiver (Server, Receiver).
func FaultCode(v Version, bySender bool) string {
	switch {
	case v == SOAP12 && bySender:
		return "Sender"
	case v == SOAP12:
		return "Receiver"
	case bySender:
		return "Client"
	}
	return "Server"
}

// AppendPlainFault appends a SOAP Fault envelope without a wsrm code: code
// is a local name in the envelope namespace (FaultCode, MustUnderstand…),
// reason the faultstring (1.1) or Reason/Text (1.2). A gateway answers a
// plain SOAP client with it (a /soap/ route). Characters XML cannot carry
// in reason are replaced by U+FFFD.
func AppendPlainFault(dst []byte, v Version, code, reason string) ([]byte, error) {
	if !v.Valid() {
		return dst, errors.New("soap: unknown SOAP version")
	}
	if !isNCName(code) {
		return dst, errors.New("soap: invalid SOAP fault code " + code)
	}
	w := writer{buf: dst}
	p := v.prefix()
	w.raw("<" + p + ":Envelope xmlns:" + p + `="` + v.Namespace() + `"><` + p + ":Body><" + p + ":Fault>")
	if v == SOAP11 {
		w.raw("<faultcode>" + p + ":" + code + "</faultcode><faultstring>")
		w.text(sanitize(reason))
		w.raw("</faultstring>")
	} else {
		w.raw("<" + p + ":Code><" + p + ":Value>" + p + ":" + code + "</" + p + ":Value></" + p + ":Code>")
		w.raw("<" + p + `:Reason><` + p + `:Text xml:lang="en">`)
		w.text(sanitize(reason))
		w.raw("</" + p + ":Text></" + p + ":Reason>")
	}
	w.raw("</" + p + ":Fault></" + p + ":Body></" + p + ":Envelope>")
	if w.err != nil {
		return dst, w.err
	}
	return w.buf, nil
}
