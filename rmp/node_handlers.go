package rmp

import (
	"context"
	"errors"

	"github.com/wsrkit/wsrkit/rmp/sender"
)

// Consumer receives delivered messages. Deliver returns once the message is
// taken (responsibility transferred, R92); an error means "retry later"
// (D8). A non-nil response is the business response of a request-response
// operation, cached for duplicates under the Response pattern (D18, R45):
// the SOAP Body content to answer with. A business fault is a response too
// — return the SOAP Fault element (nil error): the message is taken, and
// the answer carries the Fault with the fault HTTP status
// (soap.BusinessStatus). Delivery.Action is the action the message was
// sent with, for a consumer that dispatches on it.
//
// After a crash between Deliver returning and the hand-off being recorded,
// the message is delivered again: Deliver must be idempotent on
// (Ref.Group, Ref.Number).
type Consumer interface {
	Deliver(ctx context.Context, d Delivery) (response []byte, err error)
}

// ErrDeferred, returned by a Consumer, means "kept, not yet taken": the
// message stays in the receiving RMP's durable state until the consumer
// calls Node.Confirm (taken) or Node.Reject (retry later), and is handed
// out again after a restart until then. An inbox uses it.
var ErrDeferred = errors.New("rmp: delivery deferred")

// ConsumerFunc adapts a function to Consumer.
type ConsumerFunc func(ctx context.Context, d Delivery) ([]byte, error)

// Deliver calls f.
func (f ConsumerFunc) Deliver(ctx context.Context, d Delivery) ([]byte, error) { return f(ctx, d) }

// OutcomeHandler receives the producer's outcomes (D27), each until it
// returns nil; an error means "retry later". After a crash between its
// return and the Node recording it, an outcome is handed out again: a
// handler that must see each once dedups on Outcome.ID.
type OutcomeHandler interface {
	HandleOutcome(ctx context.Context, o sender.Outcome) error
}

// OutcomeBatchHandler is an OutcomeHandler that can take the outcomes
// waiting at once, so that it can make them durable with one sync: the
// Node hands it up to 256 outcomes, in order; it returns how many of them,
// from the first, it accepted, and why it stopped short. The others are
// handed again later (D27).
type OutcomeBatchHandler interface {
	OutcomeHandler
	HandleOutcomes(ctx context.Context, os []sender.Outcome) (handled int, err error)
}

// maxOutcomeBatch bounds the outcomes handed to one HandleOutcomes call.
const maxOutcomeBatch = 256

// OutcomeFunc adapts a function to OutcomeHandler.
type OutcomeFunc func(ctx context.Context, o sender.Outcome) error

// HandleOutcome calls f.
func (f OutcomeFunc) HandleOutcome(ctx context.Context, o sender.Outcome) error { return f(ctx, o) }
