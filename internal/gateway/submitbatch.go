package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// BatchSubmitAnswer is the 202 body of the batch form of POST
// /v1/messages: each message's identity, in the order given (#22).
type BatchSubmitAnswer struct {
	Messages []SubmitAnswer `json:"messages"`
}

// batchErrorJSON is a batch's 400 (or 409, 503): the entry at fault by
// its index in "messages", and the field within it where one is at fault.
type batchErrorJSON struct {
	Error string `json:"error"`
	Index *int   `json:"index,omitempty"`
	Field string `json:"field,omitempty"`
}

var messagesField = []byte(`"messages"`)

// batchForm returns the "messages" member of a batch submit: an object
// whose "messages" is present and not null. Anything else is the single
// form (including what does not parse, for its own error).
func batchForm(body []byte) (json.RawMessage, bool) {
	if !bytes.Contains(body, messagesField) {
		return nil, false
	}
	var probe struct {
		Messages json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(body, &probe) != nil || probe.Messages == nil || string(probe.Messages) == "null" {
		return nil, false
	}
	return probe.Messages, true
}

func writeBatchError(w http.ResponseWriter, status, index int, field, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if index >= 0 {
		msg = fmt.Sprintf("messages[%d]: %s", index, msg)
	}
	e := batchErrorJSON{Error: msg, Field: field}
	if index >= 0 {
		e.Index = &index
	}
	writeJSON(w, status, e)
}

// singleFields are the single form's members: a body with both forms is
// refused rather than half read.
var singleFields = []string{"to", "body", "group"}

// handleSubmitBatch submits every entry of "messages" in order, all or
// nothing: each entry is checked as a single submit is, and the node
// stores them with one commit (Node.SubmitBatch). With -store etcd the
// keyed entries must share one shard, where the batch is submitted.
func (g *Gateway) handleSubmitBatch(w http.ResponseWriter, r *http.Request, body []byte, raw json.RawMessage) {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) == nil {
		for _, f := range singleFields {
			if _, ok := top[f]; ok {
				writeBatchError(w, http.StatusBadRequest, -1, "messages", "give \"messages\" or a single message's fields, not both (%q)", f)
				return
			}
		}
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		writeBatchError(w, http.StatusBadRequest, -1, "messages", "messages: must be an array of message objects")
		return
	}
	switch {
	case len(entries) == 0:
		writeBatchError(w, http.StatusBadRequest, -1, "messages", "messages: at least one message")
		return
	case len(entries) > g.cfg.MaxBatch:
		writeBatchError(w, http.StatusBadRequest, -1, "messages", "messages: %d messages, more than -max-batch (%d)", len(entries), g.cfg.MaxBatch)
		return
	}
	if r.Header.Get("Idempotency-Key") != "" {
		writeBatchError(w, http.StatusBadRequest, -1, "", "Idempotency-Key is for the single form; a batch is all or nothing, so resubmit it whole")
		return
	}
	now := g.Now()
	subs := make([]rmp.Submission, len(entries))
	reqs := make([]SubmitRequest, len(entries))
	key, shard := "", -1
	for i, e := range entries {
		if t := bytes.TrimSpace(e); len(t) == 0 || t[0] != '{' {
			writeBatchError(w, http.StatusBadRequest, i, "", "must be a message object")
			return
		}
		if err := json.Unmarshal(e, &reqs[i]); err != nil {
			var te *json.UnmarshalTypeError
			field := ""
			if errors.As(err, &te) {
				field = te.Field
			}
			writeBatchError(w, http.StatusBadRequest, i, field, "malformed JSON: %v", err)
			return
		}
		sub, ferr := g.submission(&reqs[i], now)
		if ferr != nil {
			writeBatchError(w, http.StatusBadRequest, i, ferr.field, "%s", ferr.Error())
			return
		}
		subs[i] = sub
		if k := reqs[i].Group; k != "" && g.place.spread() {
			if s := g.place.keyShard(k); shard < 0 {
				key, shard = k, s
			} else if s != shard {
				writeBatchError(w, http.StatusBadRequest, i, "group", "group %q is on another shard than group %q: with -store etcd a batch goes to one shard", k, key)
				return
			}
		} else if k != "" && key == "" {
			key = k
		}
	}
	g.onSubmitNode(w, r, body, key, func(n *rmp.Node) {
		refs, err := n.SubmitBatch(r.Context(), subs)
		if err != nil {
			index := -1
			var be *sender.BatchError
			if errors.As(err, &be) {
				index, err = be.Index, be.Err
			}
			status, e := submitRefusal(err)
			if index >= 0 && e.Field != "" {
				if f := submitFieldError(&reqs[index], err).field; f != "" {
					e.Field = f
				}
			}
			writeBatchError(w, status, index, e.Field, "%s", e.Error)
			return
		}
		ans := BatchSubmitAnswer{Messages: make([]SubmitAnswer, len(refs))}
		for i, ref := range refs {
			ans.Messages[i] = submitAnswer(ref)
		}
		writeJSON(w, http.StatusAccepted, ans)
	})
}
