package rmp

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/wsrkit/wsrkit/rmp/admin"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// Admin returns the management side of e (rmp/admin: views, aborts,
// counters), for a driver that owns e; it is valid as long as e is.
func (e *Engine) Admin() admin.Engine { return engineAdmin{e} }

// Admin runs fn on the engine's goroutine with the management side of
// the engine (rmp/admin: views, aborts, and the counters, whose Commits
// are the Node's); fn must not keep a. What fn changes (an abort) is
// durable once Admin returns nil.
func (n *Node) Admin(ctx context.Context, fn func(a admin.Engine, now time.Time)) error {
	return n.call(ctx, adminInput{fn: fn, commits: &n.commit.committed})
}

// nodeAdmin is the management side of a Node's engine: the engine's, with
// the store batches the Node committed in its Metrics.
type nodeAdmin struct {
	engineAdmin
	commits *atomic.Uint64
}

func (a nodeAdmin) Metrics() admin.Metrics {
	m := a.engineAdmin.Metrics()
	m.Commits = a.commits.Load()
	return m
}

// engineAdmin implements admin.Engine over an Engine.
type engineAdmin struct{ e *Engine }

func (a engineAdmin) ReceivingGroups() []receiver.GroupInfo { return a.e.recv.Groups() }

func (a engineAdmin) ReceivingGroup(groupID string) (receiver.GroupInfo, bool) {
	return a.e.recv.Group(groupID)
}

func (a engineAdmin) SendingGroups() []sender.GroupInfo { return a.e.send.Groups() }

func (a engineAdmin) SendingGroup(groupID string) (sender.GroupInfo, bool) {
	return a.e.send.Group(groupID)
}

func (a engineAdmin) SendingMessage(ref sender.MessageRef) (sender.MessageInfo, bool) {
	return a.e.send.Message(ref)
}

func (a engineAdmin) SendingPending(groupID string, limit int) ([]sender.PendingInfo, int) {
	return a.e.send.PendingMessages(groupID, limit)
}

func (a engineAdmin) Destinations() []sender.DestinationInfo { return a.e.send.Destinations() }

func (a engineAdmin) ReceivingListing() *receiver.Listing { return a.e.recv.Listing() }

func (a engineAdmin) SendingListing() *sender.Listing { return a.e.send.Listing() }

func (a engineAdmin) ReceiverStats() receiver.Stats { return a.e.recv.Stats() }

func (a engineAdmin) Metrics() admin.Metrics {
	m := a.e.metrics.Metrics
	st := a.e.send.Stats()
	m.SenderGroups = st.Groups
	m.Pending = st.Pending
	return m
}

func (a engineAdmin) AbortReceiving(now time.Time, groupID string) bool {
	e := a.e
	if _, ok := e.recv.Group(groupID); !ok {
		return false
	}
	e.addReceiver(e.recv.Abort(now, groupID))
	e.flushFailures(now)
	return true
}

func (a engineAdmin) AbortSending(now time.Time, groupID string) {
	e := a.e
	e.addSender(e.send.Abort(now, groupID))
	e.flushFailures(now)
}
