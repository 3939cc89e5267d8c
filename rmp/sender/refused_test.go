package sender

import (
	"testing"
	"time"
)

// A peer that answers with a SOAP-level refusal (no wsrm code) is not
// resent to: the message fails at once with the SOAP code, the rest of its
// ordered group is aborted (D16), and the outcome keeps the code across a
// restart (D27).
func TestSOAPRefusalIsFinal(t *testing.T) {
	h := newHarness(t, testConfig())
	r0 := h.submit(Submission{GroupKey: "k", Flags: ordered})
	h.submit(Submission{GroupKey: "k", Flags: ordered})
	h.apply(h.s.Sent(h.now, r0, TransportResult{Kind: TransportRefused, Status: 500, SOAPCode: "MustUnderstand"}))
	eq(t, h.outcomesOf(r0.GroupID), []outcomeLine{
		{0, Failed, ReasonFaultReceived, ""}, {1, Failed, ReasonGroupAborted, ""}}, "outcomes")
	var soapFault string
	for _, o := range h.outcomes {
		if o.Ref == r0 {
			soapFault = o.SOAPFault
		}
	}
	eq(t, soapFault, "MustUnderstand", "SOAP code on the outcome")
	h.at(time.Minute)
	eq(t, len(h.sendsOf(r0.GroupID, 0)), 1, "never resent")

	// A transient answer is recorded with its detail and resent.
	h2 := newHarness(t, testConfig())
	r := h2.submit(Submission{Flags: ackReq})
	h2.apply(h2.s.Sent(h2.now, r, TransportResult{Kind: TransportSent, Status: 200, Detail: "HTTP 200 without wsrm:Response"}))
	res, ok := h2.s.LastResult(r)
	eq(t, ok, true, "recorded")
	eq(t, res.Detail, "HTTP 200 without wsrm:Response", "detail")
	eq(t, len(h2.outcomesOf(r.GroupID)), 0, "no outcome yet")
}
