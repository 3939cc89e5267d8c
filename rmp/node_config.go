package rmp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/wsrkit/wsrkit/rmp/clock"
	"github.com/wsrkit/wsrkit/rmp/httpbody"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/store"
)

// NodeConfig configures a Node. Store is required; the rest default.
type NodeConfig struct {
	// Engine configures the engine. An empty Engine.Sender.InstanceID gets
	// a random one. A zero Engine.Receiver.MaxDeliveryRun gets 16: the
	// Node's workers hand an ordered group's run to the consumer in order
	// and hand back what follows a hand-off that was not taken (D14, R49;
	// a consumer that defers every hand-off, an inbox, gets one at a time
	// anyway: give it 1). A zero Engine.Sender.Window gets 64, a negative
	// one no bound: that many of a group's unacknowledged messages on the
	// wire at once, the rest stored and sent as acks come (keep it within
	// the transport's connections per destination,
	// outbound.DefaultMaxPerDestination by default, or the rest wait there
	// with their retry clocks running). 64, not 16: one ordered group's
	// run then fills a receiver commit (BENCHMARKS.md, #22).
	Engine Config
	// Store holds the engine's state; the Node closes it on Close.
	Store store.Store
	// Transport sends POSTs; default outbound.NewHTTPTransport with its
	// defaults and Outbound.
	Transport outbound.Transport
	// Outbound decides which addresses the node calls at URLs that peers
	// and producers chose: a refused Callback ReplyTo is answered
	// InvalidReplyPattern, a refused PollRequest ReplyTo
	// InvalidPollRequest, a refused submission To is ErrInvalidSubmission;
	// the default transport also checks every dial. The zero value allows
	// public addresses only; a loopback or private deployment lists its
	// ranges in Allow.
	Outbound outbound.Policy
	// Clock is the time source; default the real clock.
	Clock clock.Clock
	// Consumer takes deliveries; default one that refuses them all, which
	// keeps them waiting (and a Node with no consumer is a sender only).
	Consumer Consumer
	// Outcomes takes outcomes; default one that drops them after logging.
	Outcomes OutcomeHandler
	// Logger gets the node's log lines; default none.
	Logger *slog.Logger
	// DeliveryWorkers hand deliveries to the consumer concurrently; the
	// messages of one group always go through the same worker, in order.
	// Default 4.
	DeliveryWorkers int
	// RetryDelay is the wait before offering an outcome again after the
	// OutcomeHandler failed; default 1s, doubling up to 1 min.
	RetryDelay time.Duration
	// MaxBody bounds the body of one inbound request, decoded; default 4
	// MiB.
	MaxBody int64
	// Bodies bounds the bytes of the request bodies being served at once
	// (httpbody.Read); nodes and handlers that share one share the bound.
	// Default a budget of the node's own, httpbody.DefaultMaxInflightBytes.
	Bodies *httpbody.Budget
	// MaxBatch bounds the callers' inputs (submissions, inbound requests,
	// confirmations) the loop takes into one batch, and so into one Ready
	// unless its Persist fills a job sooner; workers' results come on top.
	// Several batches may share a store commit. Default 256.
	MaxBatch int
	// LazyCommitDelay is how long a batch that nothing waits for — the
	// record that a delivery was taken or an outcome handled, with no
	// answer, send, delivery, outcome or caller depending on it — may wait
	// to ride on the next commit that must be synced anyway, instead of
	// costing a synced commit of its own. A crash in that window hands the
	// delivery out again or reports the outcome again, as a crash between
	// Deliver (or HandleOutcome) returning and the commit always could
	// (R92, D27). Wall time, not the Clock: it paces the disk, not the
	// protocol. Default 10ms; negative commits every batch at once.
	LazyCommitDelay time.Duration
	// CommitDelay is how long the committer may wait for more work before
	// a synced commit while the node is busy, so that one fsync carries
	// more of it (PostgreSQL's commit_delay). Busy means at least
	// CommitSiblings exchanges in progress: requests waiting for their
	// answer, callers waiting for a durable result, POSTs in flight. A
	// node with fewer commits at once, so a lone exchange never waits. The
	// wait ends early once a commit's worth of jobs is queued. Wall time:
	// it paces the disk. Default 500µs; negative never waits.
	CommitDelay time.Duration
	// CommitSiblings is how many exchanges in progress make the node busy
	// (commit_siblings); default 16.
	CommitSiblings int
	// AwaitDelivery bounds how long the answer to a Response-pattern
	// message that is not delivered yet — held out of order, or a copy of
	// one not taken yet — waits for the consumer's business response (R73)
	// before it is sent with its ack alone (Answer.AwaitLater). Keep it
	// below the senders' HTTP timeout. Wall time: it paces an HTTP
	// exchange, not the protocol. Zero or negative (the default) never
	// waits: a parked answer holds one of its sender's connections, and
	// under loss a sender with few connections per destination can stall
	// behind parked exchanges (SPEC-NOTES "Business responses"). Only a
	// copy of a message whose hand-off is in progress waits for that
	// hand-off, whatever this says: the wait ends by itself.
	AwaitDelivery time.Duration
}

// defaultDeliveryRun is a Node's receiver.Config.MaxDeliveryRun when
// none is set: an ordered group hands up to this many deliverable
// messages to the consumer at once, recorded taken in one commit (#22).
const defaultDeliveryRun = 16

// defaultWindow is a Node's sender.Config.Window when none is set (#22).
const defaultWindow = 64

// withDefaults fills in what cfg leaves unset.
func (cfg *NodeConfig) withDefaults() error {
	if cfg.Transport == nil {
		pol := cfg.Outbound
		cfg.Transport = outbound.NewHTTPTransport(outbound.Config{Policy: &pol})
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Consumer == nil {
		cfg.Consumer = ConsumerFunc(func(context.Context, Delivery) ([]byte, error) {
			return nil, errors.New("rmp: this node has no consumer")
		})
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Outcomes == nil {
		log := cfg.Logger
		cfg.Outcomes = OutcomeFunc(func(_ context.Context, o sender.Outcome) error {
			log.Info("outcome dropped: no handler", "group", o.Ref.GroupID, "number", o.Ref.Number, "outcome", o.Kind.String())
			return nil
		})
	}
	if cfg.DeliveryWorkers <= 0 {
		cfg.DeliveryWorkers = 4
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = time.Second
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 4 << 20
	}
	if cfg.Bodies == nil {
		cfg.Bodies = httpbody.NewBudget(httpbody.DefaultMaxInflightBytes)
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 256
	}
	if cfg.LazyCommitDelay == 0 {
		cfg.LazyCommitDelay = 10 * time.Millisecond
	}
	if cfg.CommitDelay == 0 {
		cfg.CommitDelay = 500 * time.Microsecond
	}
	if cfg.CommitSiblings <= 0 {
		cfg.CommitSiblings = 16
	}
	switch w := &cfg.Engine.Sender.Window; {
	case *w == 0:
		*w = defaultWindow
	case *w < 0:
		*w = 0 // no bound
	}
	if cfg.Engine.Receiver.MaxDeliveryRun == 0 {
		cfg.Engine.Receiver.MaxDeliveryRun = defaultDeliveryRun
	}
	if cfg.Engine.Sender.InstanceID == "" {
		// Group ids are mid:<counter>.<instance>@wsrkit with a persisted
		// counter; a random instance id keeps two nodes that were given none
		// from ever minting the same id (R05).
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return fmt.Errorf("rmp: instance id: %w", err)
		}
		cfg.Engine.Sender.InstanceID = hex.EncodeToString(b[:])
	}
	return nil
}
