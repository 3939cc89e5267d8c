package soap

import (
	"strings"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// env11 wraps header blocks in a SOAP 1.1 envelope that binds the wsrm
// namespace to the prefix "r" (not "wsrm": matching is by URI, D4).
func env11(headers string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>
<e:Envelope xmlns:e="` + NamespaceSOAP11 + `" xmlns:r="` + NamespaceWSRM + `"><e:Header>` + headers + `</e:Header><e:Body><p:x xmlns:p="urn:p"/></e:Body></e:Envelope>`)
}

// request builds an r:Request from its parts; empty parts are left out.
func request(msgID, expiry, pattern, flags string) string {
	return `<r:Request e:mustUnderstand="1">` + msgID + expiry + pattern + flags + `</r:Request>`
}

const (
	okMsgID   = `<r:MessageId groupId="mid:g@h"><r:SequenceNum number="7"/></r:MessageId>`
	okExpiry  = `<r:ExpiryTime>2025-01-01T11:00:00Z</r:ExpiryTime>`
	okPattern = `<r:ReplyPattern><r:Value>Response</r:Value></r:ReplyPattern>`
)

func TestParseRequestByNamespaceNotPrefix(t *testing.T) {
	// Prefix "wsrm" bound to another URI must not match; "r" bound to the
	// wsrm URI must, and default-namespace children too.
	b := []byte(`<S:Envelope xmlns:S="` + NamespaceSOAP12 + `" xmlns:wsrm="urn:not-wsrm"><S:Header>
<wsrm:Request><wsrm:MessageId groupId="x"/></wsrm:Request>
<Request xmlns="` + NamespaceWSRM + `" S:mustUnderstand="true"><MessageId groupId=" mid:a@b "/>
<ExpiryTime>2025-01-01T12:00:00+01:00</ExpiryTime><foreign:Thing xmlns:foreign="urn:f"/>
<ReplyPattern><Value>Poll</Value></ReplyPattern><AckRequested/></Request>
<sec:Security xmlns:sec="urn:sec"/></S:Header><S:Body/></S:Envelope>`)
	env, err := Parse(b, ParseOptions{})
	noErr(t, err)
	equal(t, &Request{MustUnderstand: true, MessageID: MessageID{GroupID: "mid:a@b"},
		ExpiryTime: time.Date(2025, 1, 1, 11, 0, 0, 0, time.UTC), ReplyPattern: ReplyPattern{Value: group.ReplyPoll},
		Flags: group.Flags{AckRequested: true}}, env.Request)
	others := env.OtherHeaders()
	equal(t, 2, len(others))
	equal(t, "Request", others[0].Tag) // the urn:not-wsrm one
	equal(t, "Security", others[1].Tag)
	equal(t, 3, len(env.Headers()))
}

func TestParseRequestFaults(t *testing.T) {
	const seqID = `<r:MessageId groupId="g"><r:SequenceNum number="3"/></r:MessageId>`
	cases := []struct {
		name, hdr string
		code      faults.Code
		rule      string
		scope     faults.Scope
	}{
		{"no MessageId", request("", okExpiry, okPattern, ""), faults.InvalidRequest, "soap.request.missing-message-id", faults.ScopeRequest},
		{"two MessageId", request(okMsgID+okMsgID, okExpiry, okPattern, ""), faults.InvalidRequest, "soap.request.duplicate-element", faults.ScopeRequest},
		{"no groupId", request(`<r:MessageId/>`, okExpiry, okPattern, ""), faults.InvalidRequest, "soap.request.missing-group-id", faults.ScopeRequest},
		{"blank groupId", request(`<r:MessageId groupId="  "/>`, okExpiry, okPattern, ""), faults.InvalidRequest, "soap.request.missing-group-id", faults.ScopeRequest},
		{"no number", request(`<r:MessageId groupId="g"><r:SequenceNum/></r:MessageId>`, okExpiry, okPattern, ""), faults.InvalidRequest, "soap.sequence.missing-number", faults.ScopeRequest},
		{"negative number", request(`<r:MessageId groupId="g"><r:SequenceNum number="-1"/></r:MessageId>`, okExpiry, okPattern, ""), faults.InvalidRequest, "soap.sequence.bad-number", faults.ScopeRequest},
		{"huge number", request(`<r:MessageId groupId="g"><r:SequenceNum number="18446744073709551616"/></r:MessageId>`, okExpiry, okPattern, ""), faults.InvalidRequest, "soap.sequence.bad-number", faults.ScopeRequest},
		{"two SequenceNum", request(`<r:MessageId groupId="g"><r:SequenceNum number="1"/><r:SequenceNum number="2"/></r:MessageId>`, okExpiry, okPattern, ""), faults.InvalidRequest, "soap.sequence.duplicate", faults.ScopeRequest},
		{"two ExpiryTime", request(seqID, okExpiry+okExpiry, okPattern, ""), faults.InvalidRequest, "soap.request.duplicate-element", faults.ScopeMessage},
		{"no ExpiryTime", request(seqID, "", okPattern, ""), faults.InvalidExpiryTime, "soap.expiry.missing", faults.ScopeMessage},
		{"no offset", request(seqID, `<r:ExpiryTime>2025-01-01T11:00:00</r:ExpiryTime>`, okPattern, ""), faults.InvalidExpiryTime, "soap.expiry.no-offset", faults.ScopeMessage},
		{"bad expiry", request(seqID, `<r:ExpiryTime>tomorrow</r:ExpiryTime>`, okPattern, ""), faults.InvalidExpiryTime, "soap.expiry.bad-lexical", faults.ScopeMessage},
		{"expiry with element", request(seqID, `<r:ExpiryTime><x/></r:ExpiryTime>`, okPattern, ""), faults.InvalidExpiryTime, "soap.expiry.bad-lexical", faults.ScopeMessage},
		{"group expiry no offset", request(`<r:MessageId groupId="g"><r:SequenceNum number="3" groupExpiryTime="2025-01-01T11:00:00"/></r:MessageId>`, okExpiry, okPattern, ""), faults.InvalidExpiryTime, "soap.group-expiry.no-offset", faults.ScopeMessage},
		{"group expiry bad", request(`<r:MessageId groupId="g"><r:SequenceNum number="3" groupExpiryTime="soon"/></r:MessageId>`, okExpiry, okPattern, ""), faults.InvalidExpiryTime, "soap.group-expiry.bad-lexical", faults.ScopeMessage},
		{"bad last", request(`<r:MessageId groupId="g"><r:SequenceNum number="3" last="yes"/></r:MessageId>`, okExpiry, okPattern, ""), faults.InvalidRequest, "soap.sequence.bad-last", faults.ScopeMessage},
		{"bad max idle", request(`<r:MessageId groupId="g"><r:SequenceNum number="3" groupMaxIdleDuration="30m"/></r:MessageId>`, okExpiry, okPattern, ""), faults.InvalidRequest, "soap.sequence.bad-max-idle", faults.ScopeMessage},
		{"negative max idle", request(`<r:MessageId groupId="g"><r:SequenceNum number="3" groupMaxIdleDuration="-PT30M"/></r:MessageId>`, okExpiry, okPattern, ""), faults.InvalidMessageParameters, "soap.sequence.negative-max-idle", faults.ScopeMessage},
		{"no pattern", request(seqID, okExpiry, "", ""), faults.InvalidReplyPattern, "soap.reply-pattern.missing", faults.ScopeMessage},
		{"no value", request(seqID, okExpiry, `<r:ReplyPattern/>`, ""), faults.InvalidReplyPattern, "soap.reply-pattern.missing-value", faults.ScopeMessage},
		{"lowercase value", request(seqID, okExpiry, `<r:ReplyPattern><r:Value>callback</r:Value></r:ReplyPattern>`, ""), faults.InvalidReplyPattern, "soap.reply-pattern.bad-value", faults.ScopeMessage},
		{"padded value", request(seqID, okExpiry, `<r:ReplyPattern><r:Value> Poll</r:Value></r:ReplyPattern>`, ""), faults.InvalidReplyPattern, "soap.reply-pattern.bad-value", faults.ScopeMessage},
		{"two values", request(seqID, okExpiry, `<r:ReplyPattern><r:Value>Poll</r:Value><r:Value>Poll</r:Value></r:ReplyPattern>`, ""), faults.InvalidReplyPattern, "soap.reply-pattern.duplicate-element", faults.ScopeMessage},
		{"callback without ReplyTo", request(seqID, okExpiry, `<r:ReplyPattern><r:Value>Callback</r:Value></r:ReplyPattern>`, ""), faults.InvalidReplyPattern, "soap.reply-pattern.callback-without-reply-to", faults.ScopeMessage},
		{"empty ReplyTo", request(seqID, okExpiry, `<r:ReplyPattern><r:Value>Callback</r:Value><r:ReplyTo/></r:ReplyPattern>`, ""), faults.InvalidReplyPattern, "soap.reply-to.missing-bare-uri", faults.ScopeMessage},
		{"EPR ReplyTo", request(seqID, okExpiry, `<r:ReplyPattern><r:Value>Callback</r:Value><r:ReplyTo reference-scheme="urn:wsa"><a:EndpointReference xmlns:a="urn:wsa"/></r:ReplyTo></r:ReplyPattern>`, ""), faults.InvalidReplyPattern, "soap.reply-to.unsupported-reference", faults.ScopeMessage},
		{"two children ReplyTo", request(seqID, okExpiry, `<r:ReplyPattern><r:Value>Callback</r:Value><r:ReplyTo><r:BareURI>http://a</r:BareURI><r:BareURI>http://b</r:BareURI></r:ReplyTo></r:ReplyPattern>`, ""), faults.InvalidReplyPattern, "soap.reply-to.many-children", faults.ScopeMessage},
		{"blank BareURI", request(seqID, okExpiry, `<r:ReplyPattern><r:Value>Callback</r:Value><r:ReplyTo><r:BareURI> </r:BareURI></r:ReplyTo></r:ReplyPattern>`, ""), faults.InvalidReplyPattern, "soap.reply-to.empty-bare-uri", faults.ScopeMessage},
		{"relative BareURI", request(seqID, okExpiry, `<r:ReplyPattern><r:Value>Callback</r:Value><r:ReplyTo><r:BareURI>/acks</r:BareURI></r:ReplyTo></r:ReplyPattern>`, ""), faults.InvalidReplyPattern, "soap.reply-to.not-absolute", faults.ScopeMessage},
		{"order without sequence", request(`<r:MessageId groupId="g"/>`, okExpiry, okPattern, `<r:MessageOrder/>`), faults.InvalidMessageParameters, "soap.request.order-without-sequence", faults.ScopeMessage},
		{"two requests", request(okMsgID, okExpiry, okPattern, "") + request(okMsgID, okExpiry, okPattern, ""), faults.InvalidRequest, "soap.request.duplicate", faults.ScopeRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, err := Parse(env11(c.hdr), ParseOptions{})
			f := wantFault(t, err, c.code, c.rule, c.scope)
			if env == nil || env.Version != SOAP11 {
				t.Fatalf("want the envelope and its version with the fault, got %+v", env)
			}
			if c.scope == faults.ScopeMessage {
				// D7: identifiable, so the fault says which message.
				equal(t, "g", f.GroupID)
				if f.HasNumber {
					equal(t, uint64(3), f.From)
					equal(t, uint64(3), f.To)
				}
				equal(t, "g", env.Request.MessageID.GroupID)
			} else {
				equal(t, "", f.GroupID)
			}
		})
	}
}

func TestParseRequestFaultKeepsWhatWasRead(t *testing.T) {
	hdr := request(`<r:MessageId groupId="g"><r:SequenceNum number="3"/></r:MessageId>`,
		`<r:ExpiryTime>2025-01-01T11:00:00</r:ExpiryTime>`,
		`<r:ReplyPattern><r:Value>Callback</r:Value><r:ReplyTo><r:BareURI>http://cb</r:BareURI></r:ReplyTo></r:ReplyPattern>`, "")
	env, err := Parse(env11(hdr), ParseOptions{})
	f := wantFault(t, err, faults.InvalidExpiryTime, "soap.expiry.no-offset", faults.ScopeMessage)
	equal(t, true, f.HasNumber)
	// The reply pattern was read first, so the engine can route the fault.
	equal(t, "http://cb", env.Request.ReplyPattern.ReplyTo.BareURI)
}

func TestParseSequenceNumAttributes(t *testing.T) {
	hdr := request(`<r:MessageId groupId="g"><r:SequenceNum number="+0018446744073709551615" last=" 1 "
  groupExpiryTime="2025-01-01T12:00:00.25-02:00" groupMaxIdleDuration="P1DT0.5S"/></r:MessageId>`, okExpiry, okPattern,
		`<r:MessageOrder/><r:DuplicateElimination/>`)
	env, err := Parse(env11(hdr), ParseOptions{})
	noErr(t, err)
	equal(t, &SequenceNum{Number: 18446744073709551615, Last: true, Timing: group.Timing{
		Expiry:  time.Date(2025, 1, 1, 14, 0, 0, 250_000_000, time.UTC),
		MaxIdle: group.Duration{Days: 1, Clock: 500 * time.Millisecond}, HasMaxIdle: true,
	}}, env.Request.MessageID.Sequence)
	equal(t, group.Flags{DuplicateElimination: true, MessageOrder: true}, env.Request.Flags)
}

func TestParseResponse(t *testing.T) {
	// fault QNames resolved through in-scope declarations, any prefix (R87).
	hdr := `<r:Response><x:Ext xmlns:x="urn:x"/><r:NonSequenceReply groupId="a" xmlns:q="` + NamespaceWSRM + `" fault="q:MessageExpired"/>
<r:SequenceReplies groupId="b"><r:ReplyRange from="1" to="2" fault=" r:MessageStoreOverflow "/><r:ReplyRange from="+5" to="5"/></r:SequenceReplies>
<r:NonSequenceReply groupId="c" xmlns="` + NamespaceWSRM + `" fault="GroupAborted"/></r:Response>`
	env, err := Parse(env11(hdr), ParseOptions{})
	noErr(t, err)
	equal(t, &Response{Replies: []group.Reply{
		{GroupID: "a", Fault: faults.MessageExpired},
		{GroupID: "b", Sequenced: true, Ranges: []group.ReplyRange{{From: 1, To: 2, Fault: faults.MessageStoreOverflow}, {From: 5, To: 5}}},
		{GroupID: "c", Fault: faults.GroupAborted},
	}}, env.Response)

	// A14: an empty Response is accepted on input.
	env, err = Parse(env11(`<r:Response/>`), ParseOptions{})
	noErr(t, err)
	equal(t, 0, len(env.Response.Replies))

	for _, c := range []struct{ hdr, rule string }{
		{`<r:Response><r:NonSequenceReply/></r:Response>`, "soap.response.missing-group-id"},
		{`<r:Response><r:NonSequenceReply groupId="a" fault="wsrm:GroupAborted"/></r:Response>`, "soap.response.bad-fault"}, // wsrm unbound here
		{`<r:Response><r:NonSequenceReply groupId="a" fault="e:GroupAborted"/></r:Response>`, "soap.response.bad-fault"},    // bound to SOAP
		{`<r:Response><r:NonSequenceReply groupId="a" fault="r:NoSuchCode"/></r:Response>`, "soap.response.bad-fault"},
		{`<r:Response><r:NonSequenceReply groupId="a" fault="GroupAborted"/></r:Response>`, "soap.response.bad-fault"}, // default ns is none
		{`<r:Response><r:SequenceReplies groupId="a"/></r:Response>`, "soap.response.no-ranges"},
		{`<r:Response><r:SequenceReplies groupId="a"><r:ReplyRange from="3" to="2"/></r:SequenceReplies></r:Response>`, "soap.response.reversed-range"},
		{`<r:Response><r:SequenceReplies groupId="a"><r:ReplyRange from="3"/></r:SequenceReplies></r:Response>`, "soap.response.missing-bound"},
		{`<r:Response><r:SequenceReplies groupId="a"><r:ReplyRange from="x" to="2"/></r:SequenceReplies></r:Response>`, "soap.response.bad-bound"},
		{`<r:Response/><r:Response/>`, "soap.response.duplicate"},
	} {
		_, err := Parse(env11(c.hdr), ParseOptions{})
		wantFault(t, err, faults.InvalidRequest, c.rule, faults.ScopeRequest)
	}
}

func TestParsePollRequest(t *testing.T) {
	hdr := `<r:PollRequest e:mustUnderstand="0"><r:RefToMessageIds groupId="a"><r:SequenceNumRange from="0" to="9"/><r:SequenceNumRange from="12" to="12"/></r:RefToMessageIds>
<r:RefToMessageIds groupId="s"/><r:ReplyTo reference-scheme="urn:bare"><r:BareURI> https://p/acks </r:BareURI></r:ReplyTo></r:PollRequest>`
	env, err := Parse(env11(hdr), ParseOptions{})
	noErr(t, err)
	equal(t, &PollRequest{Refs: []group.PollRef{
		{GroupID: "a", Ranges: []group.Range{{From: 0, To: 9}, {From: 12, To: 12}}},
		{GroupID: "s"},
	}, ReplyTo: &ReplyTo{ReferenceScheme: "urn:bare", BareURI: "https://p/acks"}}, env.PollRequest)

	for _, c := range []struct{ hdr, rule string }{
		{`<r:PollRequest/>`, "soap.poll.no-refs"},
		{`<r:PollRequest><r:RefToMessageIds/></r:PollRequest>`, "soap.poll.missing-group-id"},
		{`<r:PollRequest><r:RefToMessageIds groupId="a"><r:SequenceNumRange from="2" to="1"/></r:RefToMessageIds></r:PollRequest>`, "soap.poll.reversed-range"},
		{`<r:PollRequest><r:RefToMessageIds groupId="a"><r:SequenceNumRange to="1"/></r:RefToMessageIds></r:PollRequest>`, "soap.poll.missing-bound"},
		{`<r:PollRequest><r:RefToMessageIds groupId="a"/><r:ReplyTo/></r:PollRequest>`, "soap.reply-to.missing-bare-uri"},
		{`<r:PollRequest><r:RefToMessageIds groupId="a"/><r:ReplyTo><r:BareURI>http://x</r:BareURI></r:ReplyTo><r:ReplyTo><r:BareURI>http://x</r:BareURI></r:ReplyTo></r:PollRequest>`, "soap.poll.duplicate-reply-to"},
		{`<r:PollRequest><r:RefToMessageIds groupId="a"/></r:PollRequest><r:PollRequest><r:RefToMessageIds groupId="a"/></r:PollRequest>`, "soap.poll.duplicate"},
	} {
		_, err := Parse(env11(c.hdr), ParseOptions{})
		wantFault(t, err, faults.InvalidPollRequest, c.rule, faults.ScopeRequest)
	}
}

func TestParseEnvelopeProblems(t *testing.T) {
	const s11 = `xmlns:e="` + NamespaceSOAP11 + `"`
	for _, c := range []struct{ in, rule string }{
		{`<e:Envelope ` + s11 + `><e:Body/>`, "soap.xml.malformed"},
		{``, "soap.xml.malformed"},
		{`<e:Envelope ` + s11 + `/>`, "soap.envelope.missing-body"},
		{`<e:Envelope xmlns:e="urn:other"><e:Body/></e:Envelope>`, "soap.envelope.unknown-version"},
		{`<e:Envelop ` + s11 + `><e:Body/></e:Envelop>`, "soap.envelope.not-envelope"},
		{`<e:Envelope ` + s11 + `><e:Body/><e:Body/></e:Envelope>`, "soap.envelope.duplicate-body"},
		{`<e:Envelope ` + s11 + `><e:Header/><e:Header/><e:Body/></e:Envelope>`, "soap.envelope.duplicate-header"},
		{`<e:Envelope ` + s11 + `><e:Body/><e:Header/></e:Envelope>`, "soap.envelope.header-after-body"},
		{`<!DOCTYPE e [<!ENTITY x "y">]><e:Envelope ` + s11 + `><e:Body/></e:Envelope>`, "soap.xml.doctype"},
		{`<e:Envelope ` + s11 + `><e:Body><!DOCTYPE x></e:Body></e:Envelope>`, "soap.xml.doctype"},
		{`<?xml-stylesheet href="x"?><e:Envelope ` + s11 + `><e:Body/></e:Envelope>`, "soap.xml.processing-instruction"},
		{`<e:Envelope ` + s11 + `><e:Body><?php x?></e:Body></e:Envelope>`, "soap.xml.processing-instruction"},
		{` <?xml version="1.0"?><e:Envelope ` + s11 + `><e:Body/></e:Envelope>`, "soap.xml.processing-instruction"},
		{`<?xml version="1.0" encoding="ISO-8859-1"?><e:Envelope ` + s11 + `><e:Body/></e:Envelope>`, "soap.xml.encoding"},
		{`<e:Envelope ` + s11 + `><e:Body a="1" a="2"/></e:Envelope>`, "soap.xml.duplicate-attribute"},
		{`<e:Envelope ` + s11 + `><e:Body/></e:Envelope>trailing`, "soap.xml.malformed"},
		{"<e:Envelope " + s11 + "><e:Body>\xff</e:Body></e:Envelope>", "soap.xml.malformed"},
		{`<e:Envelope ` + s11 + `><e:Body><x:y/></e:Body></e:Envelope>`, "soap.xml.unbound-prefix"}, // issue 18: not delivered
	} {
		_, err := Parse([]byte(c.in), ParseOptions{})
		if c.rule == "" {
			noErr(t, err, c.in)
			continue
		}
		wantFault(t, err, faults.InvalidRequest, c.rule, faults.ScopeRequest)
	}
	// A UTF-8 byte order mark and an XML declaration are fine.
	_, err := Parse(append([]byte{0xEF, 0xBB, 0xBF}, `<?xml version="1.0" encoding="utf-8"?><e:Envelope `+s11+`><e:Body/></e:Envelope>`...), ParseOptions{})
	noErr(t, err)
}

func TestParseLimits(t *testing.T) {
	base := env11(request(okMsgID, okExpiry, okPattern, ""))
	_, err := Parse(base, ParseOptions{MaxBytes: len(base)})
	noErr(t, err)
	_, err = Parse(base, ParseOptions{MaxBytes: len(base) - 1})
	wantFault(t, err, faults.InvalidRequest, "soap.limit.envelope-size", faults.ScopeRequest)
	_, err = ParseReader(strings.NewReader(string(base)+strings.Repeat(" ", 100)), ParseOptions{MaxBytes: len(base) + 10})
	wantFault(t, err, faults.InvalidRequest, "soap.limit.envelope-size", faults.ScopeRequest)
	env, err := ParseReader(strings.NewReader(string(base)), ParseOptions{})
	noErr(t, err)
	equal(t, "mid:g@h", env.Request.MessageID.GroupID)

	deep := `<e:Envelope xmlns:e="` + NamespaceSOAP11 + `"><e:Body>` + strings.Repeat("<a>", 10) + strings.Repeat("</a>", 10) + `</e:Body></e:Envelope>`
	_, err = Parse([]byte(deep), ParseOptions{MaxDepth: 12})
	noErr(t, err)
	_, err = Parse([]byte(deep), ParseOptions{MaxDepth: 11})
	wantFault(t, err, faults.InvalidRequest, "soap.limit.depth", faults.ScopeRequest)
	// The default (64) refuses a deeper body.
	deeper := `<e:Envelope xmlns:e="` + NamespaceSOAP11 + `"><e:Body>` + strings.Repeat("<a>", 63) + strings.Repeat("</a>", 63) + `</e:Body></e:Envelope>`
	_, err = Parse([]byte(deeper), ParseOptions{})
	wantFault(t, err, faults.InvalidRequest, "soap.limit.depth", faults.ScopeRequest)

	long := strings.Repeat("g", 40)
	_, err = Parse(env11(request(`<r:MessageId groupId="`+long+`"/>`, okExpiry, okPattern, "")), ParseOptions{MaxIDLength: 39})
	wantFault(t, err, faults.InvalidRequest, "soap.limit.id-length", faults.ScopeRequest)
	_, err = Parse(env11(request(`<r:MessageId groupId="`+long+`"/>`, okExpiry, okPattern, "")), ParseOptions{MaxIDLength: 40})
	noErr(t, err)

	resp := `<r:Response><r:SequenceReplies groupId="a"><r:ReplyRange from="1" to="1"/><r:ReplyRange from="3" to="3"/></r:SequenceReplies></r:Response>`
	_, err = Parse(env11(resp), ParseOptions{MaxEntries: 3})
	noErr(t, err)
	_, err = Parse(env11(resp), ParseOptions{MaxEntries: 2})
	wantFault(t, err, faults.InvalidRequest, "soap.limit.entries", faults.ScopeRequest)
	poll := `<r:PollRequest><r:RefToMessageIds groupId="a"/><r:RefToMessageIds groupId="b"/></r:PollRequest>`
	_, err = Parse(env11(poll), ParseOptions{MaxEntries: 1})
	wantFault(t, err, faults.InvalidPollRequest, "soap.limit.entries", faults.ScopeRequest)

	attrs := `<e:Envelope xmlns:e="` + NamespaceSOAP11 + `"><e:Body a="1" b="2" c="3"/></e:Envelope>`
	_, err = Parse([]byte(attrs), ParseOptions{MaxAttributes: 3})
	noErr(t, err)
	_, err = Parse([]byte(attrs), ParseOptions{MaxAttributes: 2})
	wantFault(t, err, faults.InvalidRequest, "soap.limit.attributes", faults.ScopeRequest)
}
