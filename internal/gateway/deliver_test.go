package gateway

import (
	"bytes"
	"testing"

	"github.com/wsrkit/wsrkit/soap"
)

func TestBusinessResponseIsTheBodyOfASOAPAnswer(t *testing.T) {
	cases := []struct{ answer, want string }{
		{"", ""},
		{"ok", ""}, // not SOAP: no business response
		{`<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body/></S:Envelope>`, ""},
		{`<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><q:P xmlns:q="urn:q">1</q:P></S:Body></S:Envelope>`,
			// Standalone: it carries the namespace declarations in scope.
			`<q:P xmlns:q="urn:q" xmlns:S="http://schemas.xmlsoap.org/soap/envelope/">1</q:P>`},
		// As the service wrote it (a signed response stays signed), plus the
		// declarations in scope (#22).
		{`<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><q:P xmlns:q='urn:q'  a="&#65;"><![CDATA[<1>]]></q:P ></S:Body></S:Envelope>`,
			`<q:P xmlns:q='urn:q'  a="&#65;" xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><![CDATA[<1>]]></q:P >`},
	}
	for _, c := range cases {
		resp, err := serviceAnswer("http://svc", 200, []byte(c.answer))
		if got := string(resp); err != nil || got != c.want {
			t.Errorf("business response of %q = %q (%v), want %q", c.answer, got, err, c.want)
		}
	}
}

// A -deliver target's answer means what SOAP says (#17 item 2): a fault
// that refuses the request is taken and is the business response; a
// Server fault, another status or no envelope is retried.
func TestServiceAnswerClasses(t *testing.T) {
	const (
		e11 = `<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body>`
		e12 = `<E:Envelope xmlns:E="http://www.w3.org/2003/05/soap-envelope"><E:Body>`
	)
	fault11 := func(code string) string {
		return e11 + `<S:Fault><faultcode>S:` + code + `</faultcode><faultstring>no</faultstring></S:Fault></S:Body></S:Envelope>`
	}
	fault12 := func(code string) string {
		return e12 + `<E:Fault><E:Code><E:Value>E:` + code + `</E:Value></E:Code><E:Reason><E:Text xml:lang="en">no</E:Text></E:Reason></E:Fault></E:Body></E:Envelope>`
	}
	cases := []struct {
		name   string
		status int
		answer string
		taken  bool
		fault  bool // the business response is a Fault
	}{
		{"2xx with a body", 200, e11 + `<r/></S:Body></S:Envelope>`, true, false},
		{"202 empty", 202, "", true, false},
		{"Client fault 500", 500, fault11("Client"), true, true},
		{"Client fault 200", 200, fault11("Client"), true, true},
		{"Client.Auth fault", 500, fault11("Client.Auth"), true, true},
		{"MustUnderstand", 500, fault11("MustUnderstand"), true, true},
		{"VersionMismatch", 500, fault11("VersionMismatch"), true, true},
		{"Sender fault 1.2", 400, fault12("Sender"), true, true},
		{"Server fault", 500, fault11("Server"), false, false},
		{"Receiver fault 1.2", 500, fault12("Receiver"), false, false},
		{"503 without envelope", 503, "busy", false, false},
		{"429 without envelope", 429, "", false, false},
		{"404 plain", 404, "not found", false, false},
	}
	for _, c := range cases {
		resp, err := serviceAnswer("http://svc", c.status, []byte(c.answer))
		if (err == nil) != c.taken {
			t.Errorf("%s: taken=%v (err %v), want %v", c.name, err == nil, err, c.taken)
			continue
		}
		if isFault := bytes.Contains(resp, []byte(":Fault")); isFault != c.fault {
			t.Errorf("%s: business response %q, want a fault: %v", c.name, resp, c.fault)
		}
	}
}

// The delivery POST carries the action the way its SOAP version does.
func TestPayloadVersion(t *testing.T) {
	if v := payloadVersion([]byte(`<?xml version="1.0"?><e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope"/>`)); v != soap.SOAP12 {
		t.Errorf("1.2 envelope read as %v", v)
	}
	// A SOAP 1.1 envelope that merely mentions the 1.2 namespace stays 1.1.
	if v := payloadVersion([]byte(`<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><x>http://www.w3.org/2003/05/soap-envelope</x></s:Body></s:Envelope>`)); v != soap.SOAP11 {
		t.Errorf("1.1 envelope read as %v", v)
	}
}
