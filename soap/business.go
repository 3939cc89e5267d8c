package soap

import (
	"bytes"
	"encoding/xml"
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
func FinalFault(code string) bool {
	switch code {
	case "Client", "Sender", "MustUnderstand", "VersionMismatch", "DataEncodingUnknown":
		return true
	}
	return false
}
