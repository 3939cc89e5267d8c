package rmp

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wsrkit/wsrkit/soap"
)

// TestInboundPayloadIsTheSentBytes: the payload stored and delivered is
// the request as sent less its wsrm block, byte for byte (other header
// blocks and the Body unchanged, so a signature over them still holds),
// and it does not share the request's buffer, which ReadRequest gives back
// to its pool (issue #22).
func TestInboundPayloadIsTheSentBytes(t *testing.T) {
	wsrm := `<r:Request xmlns:r="` + soap.NamespaceWSRM + `"><r:MessageId groupId="mid:1@x"/>` +
		`<r:ExpiryTime>2099-01-01T00:00:00Z</r:ExpiryTime><r:ReplyPattern><r:Value>Response</r:Value></r:ReplyPattern></r:Request>`
	keep := `<?xml version='1.0'?>` + "\n" + `<S:Envelope xmlns:S='` + soap.NamespaceSOAP11 + `'><S:Header>` +
		"\n  " + `<ds:Signature xmlns:ds="urn:ds" Id='s'>v</ds:Signature>` + "\n  "
	rest := "\n" + `</S:Header><S:Body Id="b"><o:Order xmlns:o='urn:o'  n="&#65;"><![CDATA[<x>]]></o:Order ></S:Body></S:Envelope>`
	body := []byte(keep + wsrm + rest)
	in := parseInbound(soap.ContentType(soap.SOAP11, ""), `""`, body, soap.ParseOptions{})
	if _, _, err := in.Envelope(); err != nil || in.payloadErr != nil {
		t.Fatalf("parse: %v, %v", err, in.payloadErr)
	}
	want := keep + rest
	for i := range body {
		body[i] = 'x' // the pooled buffer is reused
	}
	if string(in.payload) != want {
		t.Fatalf("payload\n got %s\nwant %s", in.payload, want)
	}
	env, _, _ := in.Envelope()
	if got := string(env.BodyContent()); !strings.HasPrefix(got, `<o:Order xmlns:o='urn:o'  n="&#65;" xmlns:S="`) ||
		!bytes.HasSuffix([]byte(got), []byte(`><![CDATA[<x>]]></o:Order >`)) {
		t.Fatalf("BodyContent %s", got)
	}
}
