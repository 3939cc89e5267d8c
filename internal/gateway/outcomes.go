package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// OutcomeJSON is the body POSTed to -notify, one per outcome (D27).
type OutcomeJSON struct {
	ID      string  `json:"id"`
	GroupID string  `json:"groupId"`
	Number  *uint64 `json:"number"`
	Outcome string  `json:"outcome"`
	Reason  string  `json:"reason"`
	Fault   string  `json:"fault"`
	// Response is the business response (an XML string: the SOAP Body
	// content the service answered, a business fault included) of an
	// acknowledged message under the Response pattern (R73); omitted when
	// there was none.
	Response string `json:"response,omitempty"`
}

// ReasonString maps a sender.Reason to the gateway's JSON reason: "" for
// an acknowledgement, else expired, retries-exhausted, fault or
// group-aborted.
func ReasonString(r sender.Reason) string {
	switch r {
	case sender.ReasonExpired:
		return "expired"
	case sender.ReasonRetriesExhausted:
		return "retries-exhausted"
	case sender.ReasonFaultReceived:
		return "fault"
	case sender.ReasonGroupAborted:
		return "group-aborted"
	}
	return ""
}

func outcomeJSON(o sender.Outcome) OutcomeJSON {
	j := OutcomeJSON{
		ID:      MessageID(o.Ref),
		GroupID: o.Ref.GroupID,
		Number:  numberJSON(!o.Ref.Singleton, o.Ref.Number),
		Outcome: o.Kind.String(),
	}
	if o.Kind == sender.Failed {
		j.Reason = ReasonString(o.Reason)
		j.Fault = faultString(o.Reason, o.Fault, o.SOAPFault)
	}
	j.Response = string(o.Response)
	return j
}

// faultString is the "fault" of a failed message: the wsrm code, or the
// SOAP code of a refusal without one (MustUnderstand, Client…).
func faultString(r sender.Reason, code faults.Code, soapCode string) string {
	switch {
	case r != sender.ReasonFaultReceived:
		return ""
	case code.Valid():
		return code.String()
	}
	return soapCode
}

// outcomeHandler records each outcome, then POSTs it to the notify URL when
// one is set. An error makes the Node offer the outcome again on its clock;
// once it returns nil the outcome's outbox record is deleted (D27), so the
// notify URL sees it once (again after a crash before that deletion).
type outcomeHandler struct {
	records *records
	now     func() time.Time // the gateway's clock, for Record.At
	url     string
	client  *http.Client
	waiters *routeWaiters // nil: no route requests
}

func (h *outcomeHandler) HandleOutcome(ctx context.Context, o sender.Outcome) error {
	_, err := h.HandleOutcomes(ctx, []sender.Outcome{o})
	return err
}

// HandleOutcomes records every outcome with one sync, wakes the route
// requests waiting for them, then POSTs them to the notify URL in order,
// stopping at the first that fails (rmp.OutcomeBatchHandler).
func (h *outcomeHandler) HandleOutcomes(ctx context.Context, os []sender.Outcome) (int, error) {
	js := make([]OutcomeJSON, len(os))
	recs := make([]Record, len(os))
	at := apiTime(h.now())
	for i, o := range os {
		j := outcomeJSON(o)
		js[i] = j
		recs[i] = Record{ID: j.ID, GroupID: j.GroupID, Number: j.Number, Outcome: j.Outcome, Reason: j.Reason, Fault: j.Fault, Attempts: o.Attempts, Response: j.Response, At: at}
	}
	if err := h.records.putAll(recs); err != nil {
		return 0, err
	}
	if h.waiters != nil {
		for i, o := range os {
			h.waiters.wake(recs[i].ID, o) // after the record: a late waiter reads it
		}
	}
	if h.url == "" {
		return len(os), nil
	}
	for i, j := range js {
		if err := h.notify(ctx, j); err != nil {
			return i, err
		}
	}
	return len(os), nil
}

// notify POSTs one outcome to the notify URL.
func (h *outcomeHandler) notify(ctx context.Context, j OutcomeJSON) error {
	body, _ := json.Marshal(j)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("notify %s: HTTP %d", outbound.Redact(h.url), resp.StatusCode)
	}
	return nil
}
