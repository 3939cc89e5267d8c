package rmp

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wsrkit/wsrkit/rmp/admin"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// An input is one call into the Engine from another goroutine: a caller's
// (Submit, SubmitBatch, Confirm, Reject, Sync, Admin, an inbound request)
// through Node.in, or a worker's result (a send, a delivery, outcomes)
// through Node.post. The loop applies each with its batch's time.
type input interface {
	apply(e *Engine, now time.Time)
}

// submitInput is Submit: the engine's answer is read once the batch is
// durable.
type submitInput struct {
	s   Submission
	ref sender.MessageRef
	err error
}

func (in *submitInput) apply(e *Engine, now time.Time) { in.ref, in.err = e.Submit(now, in.s) }

// submitBatchInput is SubmitBatch: all of subs or none, in one input.
type submitBatchInput struct {
	subs []Submission
	refs []sender.MessageRef
	err  error
}

func (in *submitBatchInput) apply(e *Engine, now time.Time) {
	in.refs, in.err = e.SubmitBatch(now, in.subs)
}

// inboundInput is a request on the RMP endpoint; its Answer comes back by
// token (ServeInbound).
type inboundInput struct {
	token uint64
	in    *Inbound
}

// apply hands the request to the engine; its body then goes back to the
// budget: the answer may be long in coming, the parse is no longer
// needed (#18).
func (in inboundInput) apply(e *Engine, now time.Time) {
	e.ReceiveInbound(now, in.token, in.in)
	in.in.releaseBody()
}

// takenInput is a delivery taken, with the consumer's business response
// if it gave one (a worker's Deliver returning, or Confirm).
type takenInput struct {
	ref      receiver.DeliveryRef
	response []byte
}

func (in takenInput) apply(e *Engine, now time.Time) {
	e.Taken(now, in.ref)
	if in.response != nil {
		e.Respond(now, in.ref, in.response)
	}
}

// refusedInput is a delivery the consumer could not take (a worker's
// Deliver failing, or Reject).
type refusedInput struct{ ref receiver.DeliveryRef }

func (in refusedInput) apply(e *Engine, now time.Time) { e.DeliveryFailed(now, in.ref) }

// returnedInput is a delivery of a run handed back unseen (deliverLoop).
type returnedInput struct{ ref receiver.DeliveryRef }

func (in returnedInput) apply(e *Engine, now time.Time) { e.Returned(now, in.ref) }

// sentInput is the result of one POST.
type sentInput struct {
	ref OutboundRef
	res outbound.PostResult
	err error
}

func (in sentInput) apply(e *Engine, now time.Time) { e.SendResult(now, in.ref, in.res, in.err) }

// handledInput is outcomes the producer accepted.
type handledInput struct{ ids []sender.OutcomeID }

func (in handledInput) apply(e *Engine, now time.Time) {
	for _, id := range in.ids {
		e.OutcomeHandled(now, id)
	}
}

// tickInput is Sync: the timers due at the clock's current time.
type tickInput struct{}

func (tickInput) apply(e *Engine, now time.Time) { e.Tick(now) }

// adminInput is Admin: a look at the engine's management side, or an
// operator's abort.
type adminInput struct {
	fn      func(a admin.Engine, now time.Time)
	commits *atomic.Uint64 // the Node's, for the counters (nodeAdmin)
}

func (in adminInput) apply(e *Engine, now time.Time) {
	in.fn(nodeAdmin{engineAdmin{e}, in.commits}, now)
}

// request is what Node.in carries: an input and, when its caller waits
// for the batch holding it to be durable, where to say so.
type request struct {
	in   input
	done reply // nil: nobody waits (an inbound request waits for its Answer)
}

// call applies in on the engine's goroutine and returns once the batch
// holding it is durable; in's results are then in in.
func (n *Node) call(ctx context.Context, in input) error {
	n.busy.Add(1)
	defer n.busy.Add(-1)
	done := getReply()
	if err := n.enqueue(ctx, request{in: in, done: done}); err != nil {
		replies.Put(done) // never queued
		return err
	}
	select {
	case err := <-done:
		replies.Put(done) // its one answer taken
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-n.done:
		return n.stoppedErr()
	}
}

// replies keeps the reply channels of calls that took their answer: a
// reply gets exactly one (the committer's, or drainQuit's), so a drained
// one is free; a call that gave up leaves its reply to the garbage
// collector. A channel of error is two allocations per call (#22).
var replies = sync.Pool{New: func() any { return make(reply, 1) }}

func getReply() reply { return replies.Get().(reply) }

func (n *Node) enqueue(ctx context.Context, r request) error {
	n.mu.Lock()
	closed := n.closed
	n.mu.Unlock()
	if closed {
		return n.stoppedErr()
	}
	select {
	case n.in <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-n.done:
		return n.stoppedErr()
	}
}

// post feeds a worker's result back to the engine without ever blocking:
// workers (sends, deliveries, outcomes) must not wait for the loop, which
// may be waiting for the committer, which may be waiting for them.
func (n *Node) post(in input) {
	n.fbMu.Lock()
	n.feedback = append(n.feedback, in)
	n.fbMu.Unlock()
	n.kick()
}

// takeFeedback returns the results posted since the last call; the loop
// owns the slice until it hands it back with doneFeedback.
func (n *Node) takeFeedback() []input {
	n.fbMu.Lock()
	defer n.fbMu.Unlock()
	fb := n.feedback
	n.feedback, n.fbSpare = n.fbSpare, nil
	return fb
}

// doneFeedback hands back a slice takeFeedback returned, applied, so that
// posts reuse it instead of growing a new one (#22).
func (n *Node) doneFeedback(fb []input) {
	if cap(fb) > 4096 {
		return // after a burst: let it go
	}
	clear(fb) // keeps no input alive
	n.fbMu.Lock()
	n.fbSpare = fb[:0]
	n.fbMu.Unlock()
}

// kick makes the loop run again at once: for posted results, and for work
// a Tick left due.
func (n *Node) kick() {
	select {
	case n.fbSignal <- struct{}{}:
	default:
	}
}
