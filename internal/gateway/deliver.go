package gateway

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/soap"
)

// Headers of a delivery POST (-deliver).
const (
	HeaderGroupID        = "WSRKit-Group-Id"
	HeaderSequenceNumber = "WSRKit-Sequence-Number"
)

const soap12NS = "http://www.w3.org/2003/05/soap-envelope"

// httpConsumer POSTs each delivered message (the envelope with its wsrm
// headers removed) to a URL, with the action it arrived with (SOAPAction
// under SOAP 1.1, the action parameter under SOAP 1.2). The answer means
// what SOAP says it means (SPEC-NOTES "Service answers"):
//   - 2xx: taken; its SOAP Body content is the business response (R73);
//   - a SOAP Fault whose code says the request itself is refused (Client,
//     Sender, MustUnderstand, VersionMismatch: soap.FinalFault), with any
//     status: taken, and the Fault is the business response — the service
//     answered, so the operation is never run again;
//   - a Server/Receiver fault, any other status, or no answer: not taken;
//     the Node offers it again with the receiver's DeliveryRetry back-off
//     until its ExpiryTime (D12, D26).
type httpConsumer struct {
	url    string
	client *http.Client
}

func (c *httpConsumer) Deliver(ctx context.Context, d rmp.Delivery) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(d.Payload))
	if err != nil {
		return nil, err
	}
	v := payloadVersion(d.Payload)
	req.Header.Set("Content-Type", soap.ContentType(v, d.Action))
	if v == soap.SOAP11 {
		req.Header.Set("SOAPAction", soap.SOAPAction(d.Action))
	}
	req.Header.Set(HeaderGroupID, d.Ref.Group.GroupID)
	if d.Ref.HasNumber {
		req.Header.Set(HeaderSequenceNumber, strconv.FormatUint(d.Ref.Number, 10))
	}
	if t := fenceToken(ctx); t != "" {
		req.Header.Set(HeaderFence, t)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBusinessResponse+1))
	resp.Body.Close()
	return serviceAnswer(c.url, resp.StatusCode, body)
}

// serviceAnswer classifies a -deliver target's answer (see httpConsumer):
// the business response when the message was taken, else an error.
func serviceAnswer(url string, status int, body []byte) ([]byte, error) {
	env := parseAnswer(body)
	if env != nil && env.Fault != nil {
		if soap.FinalFault(env.Fault.SOAPCode) {
			return bodyContent(env), nil
		}
		return nil, fmt.Errorf("deliver %s: HTTP %d, SOAP Fault %s: %s", outbound.Redact(url), status, env.Fault.SOAPCode, env.Fault.Reason)
	}
	if status/100 != 2 {
		return nil, fmt.Errorf("deliver %s: HTTP %d", outbound.Redact(url), status)
	}
	return bodyContent(env), nil
}

// maxBusinessResponse bounds a business response read from -deliver.
const maxBusinessResponse = 1 << 20

// parseAnswer parses a service's answer; nil when it is empty, oversized
// or not a SOAP envelope.
func parseAnswer(answer []byte) *soap.Envelope {
	if len(answer) == 0 || len(answer) > maxBusinessResponse {
		return nil
	}
	// Only the Fault and BodyContent are read: the Body's tree is not
	// needed, and its content is kept as the service wrote it (#22).
	env, err := soap.Parse(answer, soap.ParseOptions{SkipBody: true})
	if err != nil || env.Body == nil {
		return nil
	}
	return env
}

// bodyContent is env's SOAP Body content, nil when there is none: the
// business response of a request-response operation, which rides back with
// the RM-Reply under the Response pattern (R73) and is cached for
// duplicates (D18, R45). An empty, oversized or non-SOAP answer (env nil)
// gives none.
func bodyContent(env *soap.Envelope) []byte {
	if env == nil {
		return nil
	}
	content := bytes.TrimSpace(env.BodyContent())
	if len(content) == 0 {
		return nil
	}
	return content
}

// payloadVersion is the SOAP version of a stored envelope, read from its
// root element's namespace; SOAP 1.1 when it cannot be read.
func payloadVersion(env []byte) soap.Version {
	d := xml.NewDecoder(bytes.NewReader(env))
	for {
		tok, err := d.Token()
		if err != nil {
			return soap.SOAP11
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Space == soap12NS {
				return soap.SOAP12
			}
			return soap.SOAP11
		}
	}
}
