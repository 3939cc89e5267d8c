package soap

import (
	"errors"
	"strings"
)

// RequestAction returns the action an inbound request was sent with: under
// SOAP 1.2 the action parameter of its Content-Type (ctAction, as
// VersionFromContentType returned it), under SOAP 1.1 the SOAPAction header
// with its quotes and escapes removed (SOAP 1.1 §6.1.1, WS-I BP R2744).
// An empty or absent header gives "".
func RequestAction(v Version, ctAction, soapActionHeader string) string {
	if v == SOAP12 {
		return ctAction
	}
	return unquoteSOAPAction(soapActionHeader)
}

// unquoteSOAPAction undoes SOAPAction: a quoted-string loses its quotes and
// backslash escapes; an unquoted value (some clients send one) is taken as
// it is, trimmed.
func unquoteSOAPAction(h string) string {
	h = strings.TrimSpace(h)
	if len(h) < 2 || h[0] != '"' || h[len(h)-1] != '"' {
		return h
	}
	h = h[1 : len(h)-1]
	if !strings.Contains(h, `\`) {
		return h
	}
	var b strings.Builder
	for i := 0; i < len(h); i++ {
		if h[i] == '\\' && i+1 < len(h) {
			i++
		}
		b.WriteByte(h[i])
	}
	return b.String()
}

// ErrAction is wrapped by CheckAction's errors.
var ErrAction = errors.New("soap: invalid action")

// CheckAction refuses an action that cannot travel in a SOAPAction header
// or an action media-type parameter unchanged: control characters (CR, LF
// would split the header), quotes and backslashes, white space, or more
// than maxLen bytes. An action is a URI (SOAP 1.2 Part 2 §7.1): one without
// a scheme is refused too. The empty action is valid (no action).
func CheckAction(action string, maxLen int) error {
	if action == "" {
		return nil
	}
	if len(action) > maxLen {
		return errors.Join(ErrAction, errors.New("longer than the configured limit"))
	}
	for i := 0; i < len(action); i++ {
		switch c := action[i]; {
		case c <= ' ' || c == 0x7f:
			return errors.Join(ErrAction, errors.New("contains white space or a control character"))
		case c == '"' || c == '\\':
			return errors.Join(ErrAction, errors.New(`contains a quote or a backslash`))
		}
	}
	scheme, _, ok := strings.Cut(action, ":")
	if !ok || scheme == "" || !isScheme(scheme) {
		return errors.Join(ErrAction, errors.New("is not an absolute URI (no scheme)"))
	}
	return nil
}

// isScheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) (RFC 3986 §3.1).
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}
