package gateway

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/receiver"
)

// InboxMessage is one entry of GET /v1/inbox.
type InboxMessage struct {
	ID          string  `json:"id"`
	GroupID     string  `json:"groupId"`
	Number      *uint64 `json:"number"`
	Body        string  `json:"body"`
	Action      string  `json:"action"`
	DeliveredAt string  `json:"deliveredAt"`
}

// inbox is the Consumer used without -deliver: it keeps each delivered
// message and answers rmp.ErrDeferred, so the message stays in the
// receiving RMP's durable state until DELETE /v1/inbox/{id} confirms it
// (Node.Confirm, R92). Unconfirmed messages are handed out again after a
// restart; an ordered group's next message is handed out only once the
// previous one is confirmed (D14). Invariant: order holds exactly the ids
// of byID, in delivery order.
type inbox struct {
	now func() time.Time

	mu    sync.Mutex
	byID  map[string]inboxEntry
	order []string
}

type inboxEntry struct {
	msg InboxMessage
	ref receiver.DeliveryRef
}

func newInbox(now func() time.Time) *inbox {
	return &inbox{now: now, byID: map[string]inboxEntry{}}
}

// inboxID is opaque: base64url of "<generation>~<number or s>~<groupId>".
func inboxID(ref receiver.DeliveryRef) string {
	n := "s"
	if ref.HasNumber {
		n = strconv.FormatUint(ref.Number, 10)
	}
	raw := strconv.FormatUint(ref.Group.Generation, 10) + "~" + n + "~" + ref.Group.GroupID
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func (b *inbox) Deliver(_ context.Context, d rmp.Delivery) ([]byte, error) {
	id := inboxID(d.Ref)
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.byID[id]; !ok { // a hand-off repeated: keep the first
		b.byID[id] = inboxEntry{
			ref: d.Ref,
			msg: InboxMessage{
				ID:          id,
				GroupID:     d.Ref.Group.GroupID,
				Number:      numberJSON(d.Ref.HasNumber, d.Ref.Number),
				Body:        string(d.Payload),
				Action:      d.Action,
				DeliveredAt: apiTime(b.now()),
			},
		}
		b.order = append(b.order, id)
	}
	return nil, rmp.ErrDeferred
}

func (b *inbox) list() []InboxMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]InboxMessage, 0, len(b.order))
	for _, id := range b.order {
		out = append(out, b.byID[id].msg)
	}
	return out
}

func (b *inbox) lookup(id string) (receiver.DeliveryRef, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.byID[id]
	return e.ref, ok
}

// remove drops id once its Confirm is durable.
func (b *inbox) remove(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.byID[id]; !ok {
		return
	}
	delete(b.byID, id)
	for i, o := range b.order {
		if o == id {
			b.order = append(b.order[:i], b.order[i+1:]...)
			break
		}
	}
}

// dropGroup removes the entries of a group aborted by an operator.
func (b *inbox) dropGroup(groupID string) {
	b.dropWhere(func(g string) bool { return g == groupID })
}

// inboxGroup reads the group id out of an inbox id.
func inboxGroup(id string) (string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil {
		return "", false
	}
	parts := strings.SplitN(string(raw), "~", 3)
	if len(parts) != 3 || parts[2] == "" {
		return "", false
	}
	return parts[2], true
}

// dropWhere removes the entries of the groups drop selects.
func (b *inbox) dropWhere(drop func(groupID string) bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	kept := b.order[:0]
	for _, id := range b.order {
		if drop(b.byID[id].ref.Group.GroupID) {
			delete(b.byID, id)
			continue
		}
		kept = append(kept, id)
	}
	b.order = kept
}
