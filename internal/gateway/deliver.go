package gateway

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/soap"
)

// Headers of a delivery POST (-deliver).
const (
	HeaderGroupID        = "WSRKit-Group-Id"
	HeaderSequenceNumber = "WSRKit-Sequence-Number"
)

const soap12NS = "http://www.w3.org/2003/05/soap-envelope"

// httpConsumer POSTs each delivered message (the envelope with its wsrm
// headers removed) to a URL; a 2xx answer means taken, anything else or no
// answer makes the Node offer it again with the receiver's DeliveryRetry
// back-off until its ExpiryTime (D12, D26).
type httpConsumer struct {
	url    string
	client *http.Client
}

func (c *httpConsumer) Deliver(ctx context.Context, d rmp.Delivery) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(d.Payload))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", envelopeContentType(d.Payload))
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
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("deliver %s: HTTP %d", c.url, resp.StatusCode)
	}
	return businessResponse(body), nil
}

// maxBusinessResponse bounds a business response read from -deliver.
const maxBusinessResponse = 1 << 20

// businessResponse returns the SOAP Body content of a -deliver target's
// answer: the business response of a request-response operation, which
// rides back with the RM-Reply under the Response pattern (R73) and is
// cached for duplicates (D18, R45). An empty, oversized or non-SOAP answer
// gives none.
func businessResponse(answer []byte) []byte {
	if len(answer) == 0 || len(answer) > maxBusinessResponse {
		return nil
	}
	env, err := soap.Parse(answer, soap.ParseOptions{})
	if err != nil || env.Body == nil {
		return nil
	}
	content := bytes.TrimSpace(env.BodyContent())
	if len(content) == 0 {
		return nil
	}
	return content
}

// envelopeContentType tells SOAP 1.2 envelopes from SOAP 1.1 ones by the
// envelope namespace.
func envelopeContentType(env []byte) string {
	if bytes.Contains(env, []byte(soap12NS)) {
		return "application/soap+xml; charset=utf-8"
	}
	return "text/xml; charset=utf-8"
}
