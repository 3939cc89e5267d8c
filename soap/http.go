package soap

import (
	"errors"
	"mime"
	"strings"

	"github.com/wsrkit/wsrkit/faults"
)

// Content types of the SOAP HTTP bindings (digest §9, R84).
const (
	ContentTypeSOAP11 = "text/xml; charset=utf-8"
	ContentTypeSOAP12 = "application/soap+xml; charset=utf-8"
)

// HTTP statuses of the outcomes of a WS-Reliability exchange (digest §9,
// R85, R86).
const (
	// StatusEnvelope is the status of a response that carries an envelope
	// (an RM-Reply, a business response, a poll answer, a fault indication).
	StatusEnvelope = 200
	// StatusEmpty is the status of a response with an empty entity.
	StatusEmpty = 202
)

// FaultStatus returns the HTTP status of a SOAP Fault carrying c under
// version v (R86): 500 under SOAP 1.1; 400 for Sender and 500 for Receiver
// under SOAP 1.2.
func FaultStatus(v Version, c faults.Code) int { return c.HTTPStatus(v == SOAP12) }

// ContentType returns the Content-Type of an envelope of version v. Under
// SOAP 1.2 a non-empty action becomes the action parameter; under SOAP 1.1
// the action goes in the SOAPAction header instead (see SOAPAction).
func ContentType(v Version, action string) string {
	if v != SOAP12 {
		return ContentTypeSOAP11
	}
	if action == "" {
		return ContentTypeSOAP12
	}
	return mime.FormatMediaType("application/soap+xml", map[string]string{"charset": "utf-8", "action": action})
}

// SOAPAction returns the value of the SOAP 1.1 SOAPAction header: the action
// quoted, `""` for RM-only messages (digest §9, R84). Quotes and backslashes
// in action are escaped.
func SOAPAction(action string) string {
	if !strings.ContainsAny(action, `"\`) {
		return `"` + action + `"`
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(action); i++ {
		if action[i] == '"' || action[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(action[i])
	}
	b.WriteByte('"')
	return b.String()
}

// ErrContentType is returned by VersionFromContentType for a media type that
// is not a SOAP envelope in UTF-8 or UTF-16.
var ErrContentType = errors.New("soap: Content-Type is not text/xml or application/soap+xml in UTF-8 or UTF-16")

// VersionFromContentType tells the SOAP version from a Content-Type header:
// text/xml is SOAP 1.1, application/soap+xml is SOAP 1.2. A charset other
// than UTF-8 or UTF-16 is refused; the SOAP 1.2 action parameter is
// returned.
func VersionFromContentType(ct string) (v Version, action string, err error) {
	v, action, _, err = MediaType(ct)
	return v, action, err
}

// MediaType is VersionFromContentType that also returns the charset
// parameter ("" when absent), for ToUTF8.
func MediaType(ct string) (v Version, action, charset string, err error) {
	// What this package sends, read on every request without
	// mime.ParseMediaType's map (#22).
	switch ct {
	case ContentTypeSOAP11:
		return SOAP11, "", "utf-8", nil
	case ContentTypeSOAP12:
		return SOAP12, "", "utf-8", nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return 0, "", "", ErrContentType
	}
	switch mt {
	case "text/xml":
		v = SOAP11
	case "application/soap+xml":
		v = SOAP12
		action = params["action"]
	default:
		return 0, "", "", ErrContentType
	}
	charset = params["charset"]
	if charset != "" && !strings.EqualFold(charset, "utf-8") && !isUTF16Charset(charset) {
		return 0, "", "", ErrContentType
	}
	return v, action, charset, nil
}
