package rmp

import (
	"context"
	"fmt"

	"github.com/wsrkit/wsrkit/rmp/sender"
)

// A submitted message's share of a commit, at most: its payload and
// retry-state records, its group's meta record, deadlines and the
// instance counter; and the bytes of a record's fixed fields.
const (
	batchMutationsPerMessage = 8
	batchOverheadBytes       = 256
)

// SubmitBatch hands many messages to the sending RMP at once, in order, and
// returns their identities once all are durably stored: one commit for the
// batch, each numbered in order within its group, none sent before it is
// stored (R21). It is all or nothing: a refusal is a *sender.BatchError
// naming the first refused submission, and then nothing was submitted.
// Outcomes come later through the OutcomeHandler, one per message (#22).
func (n *Node) SubmitBatch(ctx context.Context, subs []Submission) ([]sender.MessageRef, error) {
	// One input is one job of one commit: the batch must fit a store
	// batch with room for the loop's other work: the job limits, fixed at
	// Open (jobBuilder).
	var bytes int
	for i, s := range subs {
		bytes += len(s.Payload) + len(s.To) + len(s.GroupKey) + len(s.Action) + len(s.ReplyTo) + batchOverheadBytes
		if (i+1)*batchMutationsPerMessage > n.job.maxMutations || bytes > n.job.maxBytes {
			return nil, &sender.BatchError{Index: i, Err: fmt.Errorf("%w: a batch of more than %d messages or %d bytes does not fit one commit of this store",
				sender.ErrInvalidSubmission, i, n.job.maxBytes)}
		}
	}
	for i, s := range subs {
		if s.To == "" {
			continue
		}
		if err := n.checkTo(s.To); err != nil {
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
