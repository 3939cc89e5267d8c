package rmp

import (
	"context"
	"fmt"

	"github.com/wsrkit/wsrkit/rmp/sender"
)

// SubmitAsync hands a message to the sending RMP without waiting for it to
// be stored: it returns once the Node's loop has the message in its queue
// (waiting only while that queue is full, until ctx ends), and the
// returned PendingSubmit reports when the message is durably stored, with
// what Submit would have returned. A producer can so keep many messages on
// their way to the store, as a publisher keeps messages without a confirm,
// and one commit stores all that meet in it (#22). Nothing is sent before
// it is stored (R21), and messages handed over from one goroutine, by
// SubmitAsync or Submit, are numbered in their group in the order of the
// calls.
func (n *Node) SubmitAsync(ctx context.Context, s Submission) (*PendingSubmit, error) {
	if s.To != "" {
		if err := n.checkTo(s.To); err != nil {
			return nil, fmt.Errorf("%w: destination: %w", sender.ErrInvalidSubmission, err)
		}
	}
	p := &PendingSubmit{n: n, in: submitInput{s: s}, done: make(reply, 1)}
	if err := n.enqueue(ctx, request{in: &p.in, done: p.done}); err != nil {
		return nil, err
	}
	return p, nil
}

// A PendingSubmit is a message handed over by SubmitAsync.
type PendingSubmit struct {
	n    *Node
	in   submitInput // the loop writes ref and err before the reply
	done reply       // the commit's answer; closed by the Wait that took it
	err  error       // the commit's answer, once taken
}

// Wait returns the message's identity once it is durably stored, or why
// it was not (Submit's errors). It may be called again, and from several
// goroutines: each gets the same answer.
func (p *PendingSubmit) Wait(ctx context.Context) (sender.MessageRef, error) {
	select {
	case err, ok := <-p.done:
		return p.result(err, ok)
	case <-ctx.Done():
		return sender.MessageRef{}, ctx.Err()
	case <-p.n.commit.done:
		// The committer has ended: an answer it gave is in done already;
		// without one, the message was not stored.
		select {
		case err, ok := <-p.done:
			return p.result(err, ok)
		default:
			return sender.MessageRef{}, p.n.stoppedErr()
		}
	}
}

// result is the answer taken from done (ok), or the one the Wait that
// took it kept before closing done (!ok). Only that Wait writes p.err, and
// before the close, which the others wait for.
func (p *PendingSubmit) result(err error, ok bool) (sender.MessageRef, error) {
	if ok {
		p.err = err
		close(p.done) // nobody sends again: the commit answers once
	}
	if p.err != nil {
		return sender.MessageRef{}, p.err
	}
	return p.in.ref, p.in.err
}
