package rmp

import (
	"context"
	"fmt"

	"github.com/wsrkit/wsrkit/rmp/sender"
)

// SubmitBatch hands many messages to the sending RMP at once, in order, and
// returns their identities once all are durably stored: one commit for the
// batch, each numbered in order within its group, none sent before it is
// stored (R21). It is all or nothing: a refusal is a *sender.BatchError
// naming the first refused submission, and then nothing was submitted.
// Outcomes come later through the OutcomeHandler, one per message (#22).
func (n *Node) SubmitBatch(ctx context.Context, subs []Submission) ([]sender.MessageRef, error) {
	for i, s := range subs {
		if s.To == "" {
			continue
		}
		if err := n.cfg.Outbound.CheckURL(s.To); err != nil {
			return nil, &sender.BatchError{Index: i, Err: fmt.Errorf("%w: destination: %w", sender.ErrInvalidSubmission, err)}
		}
	}
	if len(subs) == 0 {
		return nil, nil
	}
	in := &submitBatchInput{subs: subs}
	if err := n.call(ctx, in); err != nil {
		return nil, err
	}
	return in.refs, in.err
}
