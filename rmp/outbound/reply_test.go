package outbound

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/soap"
)

// The business response riding back with an RM-Reply (R73) is the Body's
// content as the receiver wrote it (quotes, CDATA), each element with the
// namespace declarations it had in scope; a Body of white space is none;
// a SOAP Fault is still read (#22: the reply's Body is not built).
func TestParsedReplyKeepsTheBusinessResponsesBytes(t *testing.T) {
	ack := &soap.Response{Replies: []group.Reply{{GroupID: "urn:g", Sequenced: true, Ranges: []group.ReplyRange{{From: 0, To: 0}}}}}
	reply := func(body string) (*soap.Envelope, []byte) {
		t.Helper()
		b, err := soap.AppendResponseEnvelope(nil, soap.SOAP11, ack, faults.Extended, []byte(body))
		require.NoError(t, err)
		env, business, ok := PostResult{Status: 200, Body: b}.WithParsedReply(soap.ParseOptions{}).ParsedReply()
		require.True(t, ok)
		require.NotNil(t, env)
		require.NotNil(t, env.Response, "the ack is read")
		return env, business
	}

	_, business := reply("<r:Answer xmlns:r='urn:x' a='1'>ok &amp; done<![CDATA[<x>]]></r:Answer>")
	require.Equal(t, `<r:Answer xmlns:r='urn:x' a='1' xmlns:S11="`+soap.NamespaceSOAP11+`" xmlns:wsrm="`+soap.NamespaceWSRM+`">ok &amp; done<![CDATA[<x>]]></r:Answer>`,
		string(business))
	for _, empty := range []string{"", " \n\t "} {
		_, business = reply(empty)
		require.Nil(t, business, "a Body of %q carries no business response", empty)
	}

	fault, err := soap.AppendPlainFault(nil, soap.SOAP11, "Server", "down")
	require.NoError(t, err)
	env, business, _ := PostResult{Status: 500, Body: fault}.WithParsedReply(soap.ParseOptions{}).ParsedReply()
	require.NotNil(t, env)
	require.NotNil(t, env.Fault, "a SOAP Fault in the Body is still decoded")
	require.Equal(t, "down", env.Fault.Reason)
	require.Nil(t, business)
}
