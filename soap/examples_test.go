package soap

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	noErr(t, err)
	return b
}

func parseFile(t testing.TB, name string) *Envelope {
	t.Helper()
	env, err := Parse(readTestdata(t, name), ParseOptions{})
	noErr(t, err, name)
	return env
}

const (
	g5f60 = "mid:7f3c2a10-8e5b-4c1e-9d2a-1b2c3d4e5f60@producer.example.com"
	g0005 = "mid:0a1b2c3d-0000-4000-8000-000000000005@producer.example.com"
	g0002 = "mid:0a1b2c3d-0000-4000-8000-000000000002@producer.example.com"
	g0003 = "mid:0a1b2c3d-0000-4000-8000-000000000003@producer.example.com"
	g0004 = "mid:0a1b2c3d-0000-4000-8000-000000000004@producer.example.com"
)

// Digest §12.1: an ordered exactly-once Callback request.
func TestExample121Request(t *testing.T) {
	env := parseFile(t, "12.1-request-s11.xml")
	equal(t, SOAP11, env.Version)
	equal(t, (*Response)(nil), env.Response)
	equal(t, (*PollRequest)(nil), env.PollRequest)
	equal(t, (*Fault)(nil), env.Fault)
	want := &Request{
		MustUnderstand: true,
		MessageID: MessageID{GroupID: g5f60, Sequence: &SequenceNum{
			Number: 0,
			Timing: group.Timing{Expiry: time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)},
		}},
		ExpiryTime: time.Date(2025, 1, 1, 11, 0, 0, 0, time.UTC),
		ReplyPattern: ReplyPattern{Value: group.ReplyCallback,
			ReplyTo: &ReplyTo{BareURI: "http://producer.example.com/rmp/acks"}},
		Flags: group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: true},
	}
	equal(t, want, env.Request)
	equal(t, `<o:PlaceOrder xmlns:o="urn:example:orders" xmlns:S11="http://schemas.xmlsoap.org/soap/envelope/" xmlns:wsrm="`+NamespaceWSRM+`"><o:Item sku="A-1" qty="2"/></o:PlaceOrder>`,
		string(trimSpaceBytes(env.BodyContent())))
}

func trimSpaceBytes(b []byte) []byte { return []byte(trimXMLSpace(string(b))) }

// Digest §12.2: a callback RM-Reply batching acks and faults.
func TestExample122CallbackReply(t *testing.T) {
	env := parseFile(t, "12.2-callback-reply-s11.xml")
	equal(t, (*Request)(nil), env.Request)
	want := &Response{MustUnderstand: true, Replies: []group.Reply{
		{GroupID: g5f60, Sequenced: true, Ranges: []group.ReplyRange{{From: 0, To: 4}}},
		{GroupID: g0005, Sequenced: true, Ranges: []group.ReplyRange{{From: 0, To: 2}, {From: 5, To: 5}}},
		{GroupID: g0002, Sequenced: true, Ranges: []group.ReplyRange{{From: 3, To: 3, Fault: faults.MessageProcessingFailure}}},
		{GroupID: g0003},
		{GroupID: g0004, Fault: faults.InvalidExpiryTime},
	}}
	equal(t, want, env.Response)
	equal(t, "", string(trimSpaceBytes(env.BodyContent())))
}

// Digest §12.3: Response pattern on a request-response operation.
func TestExample123ResponseWithBody(t *testing.T) {
	env := parseFile(t, "12.3-response-with-body-s11.xml")
	equal(t, &Response{MustUnderstand: true, Replies: []group.Reply{
		{GroupID: "mid:5d0e9c4e-1111-4aaa-8bbb-222233334444@producer.example.com"},
	}}, env.Response)
	contains(t, string(env.BodyContent()), `<q:Price>12.5</q:Price>`)
}

// Digest §12.4: a SOAP 1.2 PollRequest and its answer.
func TestExample124Poll(t *testing.T) {
	env := parseFile(t, "12.4-poll-request-s12.xml")
	equal(t, SOAP12, env.Version)
	equal(t, &PollRequest{MustUnderstand: true, Refs: []group.PollRef{
		{GroupID: g5f60, Ranges: []group.Range{{From: 0, To: 9}}},
		{GroupID: g0003},
	}}, env.PollRequest)

	ans := parseFile(t, "12.4-poll-answer-s12.xml")
	equal(t, &Response{MustUnderstand: true, Replies: []group.Reply{
		{GroupID: g5f60, Sequenced: true, Ranges: []group.ReplyRange{{From: 0, To: 4}}},
		{GroupID: g0003},
	}}, ans.Response)
}

// Digest §12.5: SOAP Faults for an unidentifiable request, both versions
// (A4: the 1.1 form keeps S11:Client and names the wsrm code in
// faultstring, without declaring the wsrm prefix).
func TestExample125Faults(t *testing.T) {
	env := parseFile(t, "12.5-fault-s12.xml")
	equal(t, &Fault{Code: faults.InvalidRequest, SOAPCode: "Sender",
		Reason: "wsrm:Request is not valid: wsrm:MessageId is missing"}, env.Fault)

	env = parseFile(t, "12.5-fault-s11.xml")
	equal(t, &Fault{Code: faults.InvalidRequest, SOAPCode: "Client",
		Reason: "wsrm:InvalidRequest - wsrm:MessageId is missing"}, env.Fault)
}

// The examples survive parse → write → parse with equal structs.
func TestExamplesRoundTrip(t *testing.T) {
	for _, name := range []string{"12.1-request-s11.xml", "12.2-callback-reply-s11.xml",
		"12.3-response-with-body-s11.xml", "12.4-poll-request-s12.xml", "12.4-poll-answer-s12.xml"} {
		t.Run(name, func(t *testing.T) {
			env := parseFile(t, name)
			out, err := AppendEnvelope(nil, env.Version, Headers{env.Request, env.Response, env.PollRequest},
				faults.Extended, env.BodyContent())
			noErr(t, err)
			again, err := Parse(out, ParseOptions{})
			noErr(t, err, string(out))
			equal(t, env.Request, again.Request)
			equal(t, env.Response, again.Response)
			equal(t, env.PollRequest, again.PollRequest)
		})
	}
}
