package rmp

import (
	"sync"

	"github.com/wsrkit/wsrkit/rmp/outbound"
)

// noAckWarnings logs, at warn level, why a reliable message's transmission
// brought no acknowledgement, once per group: a destination that is down or
// is no RMP at all (a plain SOAP service answering 200 without
// wsrm:Response) should be visible at the default log level without a line
// per resend. The set is bounded; when full it starts over, so a group may
// be named again after maxWarnedGroups others.
type noAckWarnings struct {
	mu     sync.Mutex
	warned map[string]struct{}
}

const maxWarnedGroups = 4096

// first reports whether groupID was not warned about yet, and marks it.
func (w *noAckWarnings) first(groupID string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.warned[groupID]; ok {
		return false
	}
	if w.warned == nil || len(w.warned) >= maxWarnedGroups {
		w.warned = make(map[string]struct{})
	}
	w.warned[groupID] = struct{}{}
	return true
}

// warnNoAck logs o's failure to bring an ack when it is its group's first.
func (n *Node) warnNoAck(o Outbound, res outbound.PostResult, err error) {
	if o.Ref.Kind != OutMessage {
		return
	}
	// The same classification the engine applies (noAck); res was parsed
	// by send (outbound.PostResult.WithParsedReply).
	env, _, _ := res.ParsedReply()
	tr, ok := noAck(res, env, err)
	if !ok || !n.noAck.first(o.Ref.Message.GroupID) {
		return
	}
	n.log.Warn("no acknowledgement from the destination (logged once per group)",
		"group", o.Ref.Message.GroupID, "url", outbound.Redact(o.Post.URL), "attempt", o.Ref.Attempt, "reason", tr.Detail)
}
