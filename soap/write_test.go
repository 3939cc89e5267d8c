package soap

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// fullRequest uses every element and attribute of wsrm:Request.
func fullRequest() *Request {
	return &Request{
		MustUnderstand: true,
		MessageID: MessageID{GroupID: `mid:a&b<"c">@h`, Sequence: &SequenceNum{
			Number: 18446744073709551615, Last: true,
			Timing: group.Timing{Expiry: time.Date(2025, 1, 1, 12, 0, 0, 5, time.UTC),
				MaxIdle: group.Duration{Months: 1, Clock: 30 * time.Minute}, HasMaxIdle: true},
		}},
		ExpiryTime: time.Date(2025, 1, 1, 11, 0, 0, 0, time.FixedZone("X", -3600)).UTC(),
		ReplyPattern: ReplyPattern{Value: group.ReplyCallback,
			ReplyTo: &ReplyTo{ReferenceScheme: "urn:x\ty", BareURI: "http://p/acks?a=1&b=<2>"}},
		Flags: group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: true},
	}
}

func fullResponse() *Response {
	return &Response{MustUnderstand: true, Replies: []group.Reply{
		{GroupID: "g1", Sequenced: true, Ranges: []group.ReplyRange{{From: 0, To: 4}, {From: 6, To: 6, Fault: faults.MessageExpired}}},
		{GroupID: "g2"},
		{GroupID: "g3", Fault: faults.MessageStoreOverflow},
		{GroupID: "g4", Sequenced: true, Ranges: []group.ReplyRange{{From: 9, To: 9, Fault: faults.GroupAborted}}},
	}}
}

func fullPoll() *PollRequest {
	return &PollRequest{MustUnderstand: true, Refs: []group.PollRef{
		{GroupID: "g1", Ranges: []group.Range{{From: 0, To: 9}, {From: 20, To: 30}}},
		{GroupID: "s1"},
	}, ReplyTo: &ReplyTo{BareURI: "https://p/poll"}}
}

func TestAppendRequestEnvelopeExactBytes(t *testing.T) {
	r := &Request{MessageID: MessageID{GroupID: "mid:1@h", Sequence: &SequenceNum{Number: 2}},
		ExpiryTime:   time.Date(2025, 1, 1, 11, 0, 0, 0, time.UTC),
		ReplyPattern: ReplyPattern{Value: group.ReplyResponse}, Flags: group.Flags{AckRequested: true}}
	got, err := AppendRequestEnvelope([]byte("prefix|"), SOAP11, r, []byte(`<b:x xmlns:b="urn:b"/>`))
	noErr(t, err)
	// R02 order, R03 mustUnderstand="1", D3 Z time, wsrm declared.
	want := `prefix|<S11:Envelope xmlns:S11="` + NamespaceSOAP11 + `" xmlns:wsrm="` + NamespaceWSRM + `"><S11:Header>` +
		`<wsrm:Request S11:mustUnderstand="1"><wsrm:MessageId groupId="mid:1@h"><wsrm:SequenceNum number="2"/></wsrm:MessageId>` +
		`<wsrm:ExpiryTime>2025-01-01T11:00:00Z</wsrm:ExpiryTime><wsrm:ReplyPattern><wsrm:Value>Response</wsrm:Value></wsrm:ReplyPattern>` +
		`<wsrm:AckRequested/></wsrm:Request></S11:Header><S11:Body><b:x xmlns:b="urn:b"/></S11:Body></S11:Envelope>`
	equal(t, want, string(got))

	got12, err := AppendRequestEnvelope(nil, SOAP12, r, nil)
	noErr(t, err)
	contains(t, string(got12), `<wsrm:Request S12:mustUnderstand="true">`)
	contains(t, string(got12), `<S12:Body/></S12:Envelope>`)
}

func TestWriteIsDeterministic(t *testing.T) {
	// R10: a resend is byte-identical; the reused buffer changes nothing.
	buf := make([]byte, 0, 64)
	a, err := AppendRequestEnvelope(buf[:0], SOAP11, fullRequest(), []byte("<x/>"))
	noErr(t, err)
	first := string(a)
	for i := 0; i < 3; i++ {
		a, err = AppendRequestEnvelope(a[:0], SOAP11, fullRequest(), []byte("<x/>"))
		noErr(t, err)
		equal(t, first, string(a))
	}
}

func TestWriteEscapesAndRoundTrips(t *testing.T) {
	for _, v := range []Version{SOAP11, SOAP12} {
		out, err := AppendEnvelope(nil, v, Headers{fullRequest(), fullResponse(), fullPoll()}, faults.Extended, nil)
		noErr(t, err)
		contains(t, string(out), `groupId="mid:a&amp;b&lt;&quot;c&quot;&gt;@h"`)
		contains(t, string(out), `reference-scheme="urn:x&#x9;y"`)
		contains(t, string(out), `groupMaxIdleDuration="P1MT30M"`)
		contains(t, string(out), `groupExpiryTime="2025-01-01T12:00:00.000000005Z"`)
		contains(t, string(out), `<wsrm:ExpiryTime>2025-01-01T12:00:00Z</wsrm:ExpiryTime>`)
		env, err := Parse(out, ParseOptions{})
		noErr(t, err, string(out))
		equal(t, fullRequest(), env.Request)
		equal(t, fullResponse(), env.Response)
		equal(t, fullPoll(), env.PollRequest)
	}
}

func TestWriteDialect(t *testing.T) {
	// D6: strict maps the two extra codes onto schema codes; extended keeps them.
	ext, err := AppendResponseHeader(nil, SOAP11, fullResponse(), faults.Extended)
	noErr(t, err)
	contains(t, string(ext), `fault="wsrm:MessageExpired"`)
	contains(t, string(ext), `fault="wsrm:MessageStoreOverflow"`)
	strict, err := AppendResponseHeader(nil, SOAP11, fullResponse(), faults.Strict11)
	noErr(t, err)
	s := string(strict)
	if strings.Contains(s, "MessageExpired") || strings.Contains(s, "MessageStoreOverflow") {
		t.Fatalf("strict dialect leaked an extended code: %s", s)
	}
	contains(t, s, `<wsrm:ReplyRange from="6" to="6" fault="wsrm:PermanentProcessingFailure"/>`)
	contains(t, s, `<wsrm:NonSequenceReply groupId="g3" fault="wsrm:MessageProcessingFailure"/>`)
	contains(t, s, `fault="wsrm:GroupAborted"`)
}

func TestWriteNothingToWrite(t *testing.T) {
	// A14, R70: never an empty Response.
	for _, r := range []*Response{nil, {}} {
		out, err := AppendResponseEnvelope([]byte("x"), SOAP11, r, faults.Extended, nil)
		if !errors.Is(err, ErrNothingToWrite) || string(out) != "x" {
			t.Fatalf("AppendResponseEnvelope(%v) = %q, %v", r, out, err)
		}
		out, err = AppendResponseHeader([]byte("x"), SOAP12, r, faults.Extended)
		if !errors.Is(err, ErrNothingToWrite) || string(out) != "x" {
			t.Fatalf("AppendResponseHeader(%v) = %q, %v", r, out, err)
		}
	}
	_, err := AppendEnvelope(nil, SOAP11, Headers{Response: &Response{}}, faults.Extended, []byte("<x/>"))
	if !errors.Is(err, ErrNothingToWrite) {
		t.Fatal(err)
	}
	// No header blocks at all: an envelope without Header (A16 business response).
	out, err := AppendEnvelope(nil, SOAP11, Headers{}, faults.Extended, []byte("<x/>"))
	noErr(t, err)
	equal(t, `<S11:Envelope xmlns:S11="`+NamespaceSOAP11+`" xmlns:wsrm="`+NamespaceWSRM+`"><S11:Body><x/></S11:Body></S11:Envelope>`, string(out))
}

func TestWriteRefusesInvalidInput(t *testing.T) {
	mod := func(f func(r *Request)) *Request { r := fullRequest(); f(r); return r }
	for name, r := range map[string]*Request{
		"empty group":         mod(func(r *Request) { r.MessageID.GroupID = " " }),
		"zero expiry":         mod(func(r *Request) { r.ExpiryTime = time.Time{} }),
		"year 10000":          mod(func(r *Request) { r.ExpiryTime = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }),
		"bad pattern":         mod(func(r *Request) { r.ReplyPattern.Value = 9 }),
		"callback no replyto": mod(func(r *Request) { r.ReplyPattern.ReplyTo = nil }),
		"empty bare uri":      mod(func(r *Request) { r.ReplyPattern.ReplyTo.BareURI = "" }),
		"order no sequence":   mod(func(r *Request) { r.MessageID.Sequence = nil }),
		"negative idle":       mod(func(r *Request) { r.MessageID.Sequence.Timing.MaxIdle.Negative = true }),
		"negative idle part":  mod(func(r *Request) { r.MessageID.Sequence.Timing.MaxIdle.Days = -1 }),
		"nul in group":        mod(func(r *Request) { r.MessageID.GroupID = "a\x00b" }),
		"bad utf8":            mod(func(r *Request) { r.MessageID.GroupID = "a\xffb" }),
		"U+FFFE":              mod(func(r *Request) { r.ReplyPattern.ReplyTo.BareURI = "http://a/\uFFFE" }),
	} {
		out, err := AppendRequestEnvelope([]byte("keep"), SOAP11, r, nil)
		if err == nil || string(out) != "keep" {
			t.Errorf("%s: got %q, %v; want an error and dst unchanged", name, out, err)
		}
	}
	for name, r := range map[string]*Response{
		"reversed":         {Replies: []group.Reply{{GroupID: "g", Sequenced: true, Ranges: []group.ReplyRange{{From: 2, To: 1}}}}},
		"no ranges":        {Replies: []group.Reply{{GroupID: "g", Sequenced: true}}},
		"ranges on single": {Replies: []group.Reply{{GroupID: "g", Ranges: []group.ReplyRange{{}}}}},
		"fault on seq":     {Replies: []group.Reply{{GroupID: "g", Sequenced: true, Fault: faults.GroupAborted, Ranges: []group.ReplyRange{{}}}}},
		"bad code":         {Replies: []group.Reply{{GroupID: "g", Fault: 99}}},
		"no group":         {Replies: []group.Reply{{}}},
	} {
		if _, err := AppendResponseHeader(nil, SOAP11, r, faults.Extended); err == nil {
			t.Errorf("%s: written", name)
		}
	}
	for name, p := range map[string]*PollRequest{
		"nil":      nil,
		"no refs":  {},
		"reversed": {Refs: []group.PollRef{{GroupID: "g", Ranges: []group.Range{{From: 3, To: 1}}}}},
		"no group": {Refs: []group.PollRef{{}}},
	} {
		if _, err := AppendPollRequestEnvelope(nil, SOAP12, p); err == nil {
			t.Errorf("%s: written", name)
		}
	}
	if _, err := AppendRequestHeader(nil, 0, fullRequest()); err == nil {
		t.Error("version 0 written")
	}
}

func TestFaultEnvelopes(t *testing.T) {
	// Digest §12.5 shapes, read back by our own parser (both A4 forms).
	out, err := AppendFaultEnvelope(nil, SOAP11, faults.InvalidRequest, "wsrm:MessageId is missing", faults.Extended)
	noErr(t, err)
	contains(t, string(out), `<faultcode>S11:Client</faultcode><faultstring>wsrm:InvalidRequest - wsrm:MessageId is missing</faultstring>`)
	env, err := Parse(out, ParseOptions{})
	noErr(t, err)
	equal(t, &Fault{Code: faults.InvalidRequest, SOAPCode: "Client", Reason: "wsrm:InvalidRequest - wsrm:MessageId is missing"}, env.Fault)
	equal(t, 500, FaultStatus(SOAP11, faults.InvalidRequest))

	out, err = AppendFaultEnvelope(nil, SOAP12, faults.MessageExpired, "a < b & \x00", faults.Strict11)
	noErr(t, err)
	contains(t, string(out), `<S12:Value>S12:Receiver</S12:Value><S12:Subcode><S12:Value>wsrm:PermanentProcessingFailure</S12:Value>`)
	contains(t, string(out), `<S12:Text xml:lang="en">a &lt; b &amp; `+"\uFFFD"+`</S12:Text>`)
	env, err = Parse(out, ParseOptions{})
	noErr(t, err)
	equal(t, &Fault{Code: faults.PermanentProcessingFailure, SOAPCode: "Receiver", Reason: "a < b & \uFFFD"}, env.Fault)

	out, err = AppendFaultEnvelope(nil, SOAP12, faults.InvalidPollRequest, "", faults.Extended)
	noErr(t, err)
	env, err = Parse(out, ParseOptions{})
	noErr(t, err)
	equal(t, &Fault{Code: faults.InvalidPollRequest, SOAPCode: "Sender", Reason: "wsrm:InvalidPollRequest"}, env.Fault)
	equal(t, 400, FaultStatus(SOAP12, faults.InvalidPollRequest))
	equal(t, 500, FaultStatus(SOAP12, faults.MessageProcessingFailure))

	if _, err := AppendFaultEnvelope(nil, SOAP11, 0, "", faults.Extended); err == nil {
		t.Error("code 0 written")
	}
}

func TestParseFaultForms(t *testing.T) {
	// A4: a SOAP 1.1 faultcode that is itself a wsrm QName, any prefix.
	in := `<e:Envelope xmlns:e="` + NamespaceSOAP11 + `"><e:Body><e:Fault xmlns:q="` + NamespaceWSRM + `">
<faultcode>q:GroupAborted</faultcode><faultstring>gone</faultstring></e:Fault></e:Body></e:Envelope>`
	env, err := Parse([]byte(in), ParseOptions{})
	noErr(t, err)
	equal(t, &Fault{Code: faults.GroupAborted, SOAPCode: "Server", Reason: "gone"}, env.Fault)

	// A faultstring prefix bound to another namespace is not a wsrm code.
	in = `<e:Envelope xmlns:e="` + NamespaceSOAP11 + `" xmlns:wsrm="urn:other"><e:Body><e:Fault>
<faultcode>e:Server</faultcode><faultstring>wsrm:GroupAborted</faultstring></e:Fault></e:Body></e:Envelope>`
	env, err = Parse([]byte(in), ParseOptions{})
	noErr(t, err)
	equal(t, &Fault{SOAPCode: "Server", Reason: "wsrm:GroupAborted"}, env.Fault)

	// SOAP 1.2 MustUnderstand fault, no wsrm subcode.
	in = `<e:Envelope xmlns:e="` + NamespaceSOAP12 + `"><e:Body><e:Fault><e:Code><e:Value>e:MustUnderstand</e:Value></e:Code>
<e:Reason><e:Text xml:lang="en">no</e:Text></e:Reason></e:Fault></e:Body></e:Envelope>`
	env, err = Parse([]byte(in), ParseOptions{})
	noErr(t, err)
	equal(t, &Fault{SOAPCode: "MustUnderstand", Reason: "no"}, env.Fault)

	for _, bad := range []string{
		`<e:Envelope xmlns:e="` + NamespaceSOAP11 + `"><e:Body><e:Fault><faultstring>x</faultstring></e:Fault></e:Body></e:Envelope>`,
		`<e:Envelope xmlns:e="` + NamespaceSOAP11 + `"><e:Body><e:Fault><faultcode>nope:Client</faultcode></e:Fault></e:Body></e:Envelope>`,
		`<e:Envelope xmlns:e="` + NamespaceSOAP12 + `"><e:Body><e:Fault><e:Reason/></e:Fault></e:Body></e:Envelope>`,
		`<e:Envelope xmlns:e="` + NamespaceSOAP12 + `"><e:Body><e:Fault><e:Code><e:Subcode/></e:Code></e:Fault></e:Body></e:Envelope>`,
	} {
		_, err := Parse([]byte(bad), ParseOptions{})
		wantFault(t, err, faults.InvalidRequest, "soap.fault.malformed", faults.ScopeRequest)
	}
}
