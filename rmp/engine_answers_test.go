package rmp

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/rmp/admin"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
)

const fault11 = `<s:Fault xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><faultcode>s:Client</faultcode><faultstring>order refused</faultstring></s:Fault>`

// A consumer's business fault is its answer (R73): it rides beside the ack
// with the fault status (WS-I BP R1126), and the producer's Acknowledged
// outcome carries it.
func TestEngineBusinessFaultRidesOnTheAck(t *testing.T) {
	s := newSide(t, "sender", engineConfig("s1"))
	r := newSide(t, "receiver", engineConfig("r1"))
	ref, o, a := submitOne(t, epoch, s, r)
	require.NotNil(t, a.Await)
	a = a.WithBusinessResponse([]byte(fault11))
	require.Equal(t, 500, a.Status, "a SOAP 1.1 fault answer is HTTP 500")
	var got []byte
	s.onOutcome = func(o sender.Outcome) {
		if o.Ref == ref {
			got = o.Response
		}
	}
	s.e.SendResult(epoch, o.Ref, outbound.PostResult{Status: a.Status, ContentType: a.ContentType, Body: a.Body}, nil)
	s.drain(epoch)
	require.Equal(t, []string{"0 acknowledged"}, s.outcomes)
	code, ok := soap.BusinessFault(soap.SOAP11, got)
	require.True(t, ok, "the outcome carries the fault: %s", got)
	require.Equal(t, "Client", code)
}

// The answer to a held request-response message waits for its delivery
// (AwaitLater), so that its business response can still ride on it.
func TestEngineHeldMessageAnswerAwaitsItsDelivery(t *testing.T) {
	s := newSide(t, "sender", engineConfig("s1"))
	r := newSide(t, "receiver", engineConfig("r1"))
	for i := range 2 {
		_, err := s.e.Submit(epoch, submission("g", i, false))
		require.NoError(t, err)
	}
	s.drain(epoch)
	require.Len(t, s.sends, 2)
	r.token++
	second := s.sends[1]
	r.e.Receive(epoch, r.token, second.Post.ContentType, second.Post.Body) // number 1 first: held
	r.drain(epoch)
	a := r.answers[r.token]
	require.NotNil(t, a.Await, "a held message's answer waits")
	require.True(t, a.AwaitLater)
	require.EqualValues(t, 1, a.Await.Number)
	require.Empty(t, r.delivered)
	r.token++
	r.e.Receive(epoch, r.token, s.sends[0].Post.ContentType, s.sends[0].Post.Body)
	r.drain(epoch)
	a0 := r.answers[r.token]
	require.NotNil(t, a0.Await)
	require.False(t, a0.AwaitLater, "number 0 is handed out in its own Ready")
	require.Equal(t, []string{"m0", "m1"}, r.delivered)
}

// A peer that is no RMP is told from a dead one: a SOAP-level refusal fails
// the message with its code; 200 without wsrm:Response leaves it pending
// with a last error saying so.
func TestEngineNonRMPPeer(t *testing.T) {
	const mustUnderstand = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault><faultcode>s:MustUnderstand</faultcode><faultstring>Header wsrm:Request not understood</faultstring></s:Fault></s:Body></s:Envelope>`
	const plain = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><r xmlns="urn:r"/></s:Body></s:Envelope>`

	s := newSide(t, "sender", engineConfig("s1"))
	var fault string
	s.onOutcome = func(o sender.Outcome) { fault = o.SOAPFault }
	ref, err := s.e.Submit(epoch, submission("", 0, false))
	require.NoError(t, err)
	s.drain(epoch)
	s.e.SendResult(epoch, s.sends[0].Ref, outbound.PostResult{Status: 500, ContentType: soap.ContentTypeSOAP11, Body: []byte(mustUnderstand)}, nil)
	s.drain(epoch)
	require.Equal(t, []string{"- failed fault-received"}, s.outcomes)
	require.Equal(t, "MustUnderstand", fault)

	s.sends, s.outcomes = nil, nil
	ref, err = s.e.Submit(epoch, submission("", 1, false))
	require.NoError(t, err)
	s.drain(epoch)
	s.e.SendResult(epoch, s.sends[0].Ref, outbound.PostResult{Status: 200, ContentType: soap.ContentTypeSOAP11, Body: []byte(plain)}, nil)
	s.drain(epoch)
	require.Empty(t, s.outcomes)
	v, ok := admin.Message(s.e.Admin(), ref)
	require.True(t, ok)
	require.Equal(t, "pending", v.State)
	require.Equal(t, "HTTP 200 without wsrm:Response", v.LastError)
}
