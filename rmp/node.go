package rmp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wsrkit/wsrkit/rmp/clock"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/store"
)

// ErrClosed is returned by a Node that is closed or closing.
var ErrClosed = errors.New("rmp: node closed")

// Node drives an Engine: one goroutine (the loop) owns it and takes inputs
// (submissions, inbound requests, transport and consumer results, timer
// ticks) in batches; another (the committer) makes their Persists durable,
// several batches to a store batch, then releases answers, sends,
// deliveries and outcomes. Its methods are safe for concurrent use. The
// package doc, "How the Node applies a Ready", says which code does what.
type Node struct {
	cfg NodeConfig
	log *slog.Logger
	clk clock.Clock

	// The loop (run) owns eng and job. Callers reach it through in,
	// workers through feedback (post).
	eng      *Engine
	job      jobBuilder
	in       chan request
	fbMu     sync.Mutex
	feedback []input // guarded by fbMu
	// fbSpare is the slice the loop handed back after applying it
	// (doneFeedback), for the next feedback; guarded by fbMu.
	fbSpare  []input
	fbSignal chan struct{}
	quit     chan struct{} // closed by Close
	done     chan struct{} // closed when the loop ends

	commit *committer   // makes the loop's jobs durable, then releases them
	busy   atomic.Int64 // exchanges in progress (CommitSiblings)

	// Released effects (node_release.go).
	mu          sync.Mutex
	closed      bool
	failure     error                                    // a fatal store error; the node stopped
	token       uint64                                   // the last inbound request's
	answers     map[uint64]chan Answer                   // by token; guarded by mu
	awaiting    map[receiver.DeliveryRef]*awaitingAnswer // each a list in arrival order (next); guarded by mu
	handing     map[receiver.DeliveryRef]int             // hand-offs to the consumer in progress; guarded by mu
	workers     []chan deliveryRun
	notifyQ     chan sender.Outcome
	workerWG    sync.WaitGroup
	sendWG      sync.WaitGroup
	sends       sendQueue       // POSTs beyond the transport's limit per destination
	idleQ       chan Outbound   // to a waiting sender goroutine (startSend); unbuffered
	idleSenders atomic.Int32    // sender goroutines waiting on idleQ
	ctx         context.Context // the workers'; cancelled by Close
	cancel      context.CancelFunc
	noAck       noAckWarnings // the groups whose missing acks were logged
	checked     checkedTo     // submission destinations the policy passed

	closeOnce sync.Once
	closeErr  error
}

// Open loads the engine's state from cfg.Store and starts the Node.
func Open(cfg NodeConfig) (*Node, error) {
	if cfg.Store == nil {
		return nil, errors.New("rmp: NodeConfig.Store is required")
	}
	if err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	lim := store.LimitsOf(cfg.Store)
	fitEngine(&cfg, lim)
	eng, err := LoadEngine(cfg.Engine, cfg.Store)
	if err != nil {
		return nil, err
	}
	n := &Node{
		cfg: cfg, log: cfg.Logger, clk: cfg.Clock, eng: eng, job: newJobBuilder(lim),
		in: make(chan request, 1024), fbSignal: make(chan struct{}, 1),
		quit: make(chan struct{}), done: make(chan struct{}),
		answers:  map[uint64]chan Answer{},
		awaiting: map[receiver.DeliveryRef]*awaitingAnswer{},
		handing:  map[receiver.DeliveryRef]int{},
		notifyQ:  make(chan sender.Outcome, 1024),
		idleQ:    make(chan Outbound),
	}
	if l, ok := cfg.Transport.(outbound.DestinationLimit); ok {
		n.sends.limit = l.MaxPerDestination()
	}
	n.commit = (&committer{
		st: cfg.Store, limits: lim, busy: &n.busy, release: n.release, stop: n.fail,
		lazyDelay: cfg.LazyCommitDelay, commitDelay: cfg.CommitDelay, siblings: int64(cfg.CommitSiblings),
	}).init()
	n.ctx, n.cancel = context.WithCancel(context.Background())
	for range cfg.DeliveryWorkers {
		ch := make(chan deliveryRun, 256)
		n.workers = append(n.workers, ch)
		n.workerWG.Add(1)
		go n.deliverLoop(ch)
	}
	n.workerWG.Add(1)
	go n.notifyLoop()
	go n.commit.run()
	go n.run()
	return n, nil
}

// Submit hands a message to the sending RMP and returns its identity once it
// is durably stored; its outcome comes later through the OutcomeHandler.
func (n *Node) Submit(ctx context.Context, s Submission) (sender.MessageRef, error) {
	if s.To != "" {
		if err := n.checkTo(s.To); err != nil {
			return sender.MessageRef{}, fmt.Errorf("%w: destination: %w", sender.ErrInvalidSubmission, err)
		}
	}
	in := &submitInput{s: s}
	if err := n.call(ctx, in); err != nil {
		return sender.MessageRef{}, err
	}
	return in.ref, in.err
}

// Confirm reports that a deferred delivery was taken (R92): the hand-off
// is complete and, in an ordered group, the next message may come.
func (n *Node) Confirm(ctx context.Context, ref receiver.DeliveryRef, response []byte) error {
	return n.call(ctx, takenInput{ref, response})
}

// Reject reports that a deferred delivery could not be taken; it is
// offered again later, until its ExpiryTime.
func (n *Node) Reject(ctx context.Context, ref receiver.DeliveryRef) error {
	return n.call(ctx, refusedInput{ref})
}

// Sync returns once every timer due at the clock's current time has been
// processed and its effects committed (fake-clock tests and the gateway's
// clock endpoint).
func (n *Node) Sync(ctx context.Context) error { return n.call(ctx, tickInput{}) }

// Err returns the fatal error that stopped the node, if any.
func (n *Node) Err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.failure
}

func (n *Node) stoppedErr() error {
	if err := n.Err(); err != nil {
		return err
	}
	return ErrClosed
}

// Close stops accepting inputs, lets the loop commit what it took, waits
// for workers until ctx ends, and closes the store. A later Open on the same
// store resumes every pending retry, callback, poll, delivery and outcome.
func (n *Node) Close(ctx context.Context) error {
	n.closeOnce.Do(func() {
		n.mu.Lock()
		n.closed = true
		n.mu.Unlock()
		close(n.quit)
		<-n.done
		<-n.commit.done
		n.failAnswers(ErrClosed)
		n.cancel()
		waited := make(chan struct{})
		go func() { n.workerWG.Wait(); n.sendWG.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-ctx.Done():
			n.closeErr = ctx.Err()
		}
		if err := n.cfg.Store.Close(); err != nil && n.closeErr == nil {
			n.closeErr = err
		}
	})
	return n.closeErr
}

// fail stops the node after a failed commit (the committer's stop): the
// engine may be ahead of the disk, and a reopen recovers from what was
// committed.
func (n *Node) fail(err error) {
	n.log.Error("node stopped", "err", err)
	n.mu.Lock()
	n.failure = err
	n.closed = true
	n.mu.Unlock()
	n.failAnswers(err)
}

// run is the loop that owns the engine: it takes a batch of inputs,
// applies them (step), hands the Ready to the committer and re-arms its
// timer, and goes on with the next batch while the store syncs, so that
// parsing and state changes overlap the fsync (D8 still holds: nothing
// leaves before its commit).
func (n *Node) run() {
	defer close(n.done)
	defer close(n.commit.jobs)
	timer := newTimerState(n.clk)
	defer timer.stop()
	// Outcomes and hand-offs to redo after a restart are due at once.
	n.eng.Tick(n.clk.Now().UTC())
	n.handOff()
	timer.arm(n.eng.NextDeadline())
	batch := make([]request, 0, n.cfg.MaxBatch)
	for {
		clear(batch)
		batch = batch[:0]
		tick := false
		select {
		case <-n.quit:
			n.drainQuit()
			return
		case <-n.commit.failed:
			n.drainQuit()
			return
		case r := <-n.in:
			batch = append(batch, r)
		case <-n.fbSignal:
		case <-timer.c():
			timer.fired()
			tick = true
		}
	more:
		for len(batch) < n.cfg.MaxBatch {
			select {
			case r := <-n.in:
				batch = append(batch, r)
			default:
				break more
			}
		}
		n.step(n.clk.Now().UTC(), batch, tick)
		timer.arm(n.eng.NextDeadline())
	}
}

// step applies one batch at now, workers' results first, then the timers
// due, and hands its effects to the committer. A job is closed (handed
// off) whenever its Persist reaches the job limits, so that every commit
// fits the store's (jobs.go, #18).
func (n *Node) step(now time.Time, batch []request, tick bool) {
	fb := n.takeFeedback()
	for _, in := range fb {
		in.apply(n.eng, now)
		n.handOffIfFull()
	}
	n.doneFeedback(fb)
	for _, r := range batch {
		r.in.apply(n.eng, now)
		if r.done != nil {
			n.job.replies = append(n.job.replies, r.done)
		}
		n.handOffIfFull()
	}
	if d, ok := n.eng.NextDeadline(); tick || (ok && !d.After(now)) {
		n.eng.Tick(now)
		n.handOffIfFull()
	}
	// Work that became due at once (a deadline at or before now) is done
	// now rather than left to a zero timer, which a fake clock would only
	// fire on its next move. Bounded, in case a deadline stays put; work a
	// Tick left for the next (its budget spent) is done by the next
	// iteration, after the inputs that came meanwhile.
	progress := false
	for range 8 {
		d, ok := n.eng.NextDeadline()
		if !ok || d.After(now) {
			progress = false
			break
		}
		before := worldEffects(n.eng)
		n.eng.Tick(now)
		if progress = worldEffects(n.eng) != before; !progress {
			break
		}
		n.handOffIfFull()
	}
	n.handOff()
	if progress {
		n.kick()
	}
}

// worldEffects counts the effects e accumulated that change the world
// outside it (Events aside): whether a Tick did any work.
func worldEffects(e *Engine) int {
	rd := e.Ready()
	return len(rd.Persist) + len(rd.Answers) + len(rd.Sends) + len(rd.Deliver) + len(rd.Notify)
}

// handOffIfFull hands the job off once its Persist reached the job limits.
func (n *Node) handOffIfFull() {
	if n.jobFull() {
		n.handOff()
	}
}

// handOff takes the engine's Ready, calls Advance, and queues the Ready
// with the callers waiting for it as one job for the committer.
func (n *Node) handOff() {
	job := commitJob{replies: n.job.replies}
	n.job.replies = nil
	if n.eng.HasReady() {
		n.jobFull() // counts the Persist's bytes
		job.bytes = n.job.bytes
		job.rd = n.eng.Ready()
		n.eng.Advance()
		n.job.counted, n.job.bytes = 0, 0
		select {
		case rd := <-n.commit.spares:
			n.eng.Recycle(rd)
		default:
		}
	} else if len(job.replies) == 0 {
		return
	}
	select {
	case n.commit.jobs <- job:
	case <-n.commit.failed:
		answer(job.replies, n.stoppedErr())
	}
}

// drainQuit answers the callers still queued when the loop stops.
func (n *Node) drainQuit() {
	for {
		select {
		case r := <-n.in:
			if r.done != nil {
				r.done <- n.stoppedErr()
			}
		default:
			return
		}
	}
}
