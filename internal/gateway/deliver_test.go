package gateway

import "testing"

func TestBusinessResponseIsTheBodyOfASOAPAnswer(t *testing.T) {
	cases := []struct{ answer, want string }{
		{"", ""},
		{"ok", ""}, // not SOAP: no business response
		{`<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body/></S:Envelope>`, ""},
		{`<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><q:P xmlns:q="urn:q">1</q:P></S:Body></S:Envelope>`,
			// Standalone: it carries the namespace declarations in scope.
			`<q:P xmlns:q="urn:q" xmlns:S="http://schemas.xmlsoap.org/soap/envelope/">1</q:P>`},
	}
	for _, c := range cases {
		if got := string(businessResponse([]byte(c.answer))); got != c.want {
			t.Errorf("businessResponse(%q) = %q, want %q", c.answer, got, c.want)
		}
	}
}
