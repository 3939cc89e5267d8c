package rmp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wsrkit/wsrkit/rmp/httpbody"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/store"
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

// OutcomeHandler receives the producer's outcomes (D27), each exactly once
// once it returns nil; an error means "retry later".
type OutcomeHandler interface {
	HandleOutcome(ctx context.Context, o sender.Outcome) error
}

// OutcomeBatchHandler is an OutcomeHandler that can take the outcomes
// waiting at once, so that it can make them durable with one sync: the
// Node hands it up to maxOutcomeBatch outcomes, in order; it returns how
// many of them, from the first, it accepted, and why it stopped short. The
// others are handed again later (D27).
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

// NodeConfig configures a Node. Store is required; the rest default.
type NodeConfig struct {
	// Engine configures the engine. An empty Engine.Sender.InstanceID gets
	// a random one.
	Engine Config
	// Store holds the engine's state; the Node closes it on Close.
	Store store.Store
	// Transport sends POSTs; default NewHTTPTransport with its defaults
	// and Outbound.
	Transport Transport
	// Outbound decides which addresses the node calls at URLs that peers
	// and producers chose: a refused Callback ReplyTo is answered
	// InvalidReplyPattern, a refused PollRequest ReplyTo
	// InvalidPollRequest, a refused submission To is ErrInvalidSubmission;
	// the default transport also checks every dial. The zero value allows
	// public addresses only; a loopback or private deployment lists its
	// ranges in Allow.
	Outbound outbound.Policy
	// Clock is the time source; default the real clock.
	Clock Clock
	// Consumer takes deliveries; default one that refuses them all, which
	// keeps them waiting (and a Node with no consumer is a sender only).
	Consumer Consumer
	// Outcomes takes outcomes; default one that drops them after logging.
	Outcomes OutcomeHandler
	Logger   *slog.Logger
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
	// Default a budget of DefaultMaxInflightBytes of the node's own.
	Bodies *httpbody.Budget
	// MaxBatch bounds the inputs processed before one store commit;
	// default 256.
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
	// one still in its hand-off — waits for the consumer's business
	// response (R73) before it is sent with its ack alone (Answer.AwaitLater).
	// Keep it below the senders' HTTP timeout. Wall time: it paces an HTTP
	// exchange, not the protocol. Zero or negative (the default) never
	// waits: a parked answer holds one of its sender's connections, and
	// under loss a sender with few connections per destination can stall
	// behind parked exchanges (SPEC-NOTES "Business responses").
	AwaitDelivery time.Duration
}

// ErrClosed is returned by a Node that is closed or closing.
var ErrClosed = errors.New("rmp: node closed")

// Node drives an Engine: one goroutine owns it and the store, takes inputs
// (submissions, inbound requests, transport and consumer results, timer
// ticks) in batches, commits each batch's Persist as one store batch, then
// releases answers, sends, deliveries and outcomes. Its methods are safe
// for concurrent use.
type Node struct {
	cfg NodeConfig
	log *slog.Logger
	// noAck names the groups whose missing acks were logged (warnNoAck).
	noAck noAckWarnings
	clk   Clock
	eng   *Engine
	in    chan input
	quit  chan struct{}
	done  chan struct{}

	mu       sync.Mutex
	closed   bool
	failure  error // a fatal store error; the node stopped
	answers  map[uint64]chan Answer
	awaiting map[receiver.DeliveryRef][]*awaitingAnswer // guarded by mu
	token    uint64
	workers  []chan Delivery
	notifyQ  chan sender.Outcome
	workerWG sync.WaitGroup
	sendWG   sync.WaitGroup
	ctx      context.Context
	cancel   context.CancelFunc

	fbMu     sync.Mutex
	feedback []func(e *Engine, now time.Time) // guarded by fbMu
	fbSignal chan struct{}

	closeOnce sync.Once
	closeErr  error

	commits    chan commitJob // loop → committer; closed when the loop ends
	lazyTimer  *time.Timer    // the committer's, stopped; wall time (LazyCommitDelay)
	delayTimer *time.Timer    // the committer's, stopped; wall time (CommitDelay)
	busy       atomic.Int64   // exchanges in progress (CommitSiblings)
	spares     chan Ready     // committer → loop: applied Readies to recycle
	committed  atomic.Uint64  // store batches committed by the committer
	commitDone chan struct{}  // closed when the committer ends
	failed     chan struct{}  // closed on a store failure
	failOnce   sync.Once

	// The store's batch limits, and the loop's count of the Ready it is
	// building (jobs.go).
	limits                store.Limits
	jobMutations          int // a job is closed once its Persist reaches these
	jobBytes              int
	counted, countedBytes int
}

// input is one call into the engine from another goroutine. reply, when
// set, is called after the batch holding the input was committed.
type input struct {
	fn    func(e *Engine, now time.Time) any
	reply chan any
}

// Open loads the engine's state from cfg.Store and starts the Node.
func Open(cfg NodeConfig) (*Node, error) {
	if cfg.Store == nil {
		return nil, errors.New("rmp: NodeConfig.Store is required")
	}
	if cfg.Transport == nil {
		pol := cfg.Outbound
		cfg.Transport = NewHTTPTransport(outbound.Config{Policy: &pol})
	}
	if cfg.Clock == nil {
		cfg.Clock = RealClock()
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
	if cfg.Engine.Sender.InstanceID == "" {
		// Group ids are mid:<counter>.<instance>@wsrkit with a persisted
		// counter; a random instance id keeps two nodes that were given none
		// from ever minting the same id (R05).
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("rmp: instance id: %w", err)
		}
		cfg.Engine.Sender.InstanceID = hex.EncodeToString(b[:])
	}
	lim := store.LimitsOf(cfg.Store)
	fitEngine(&cfg, lim)
	eng, err := LoadEngine(cfg.Engine, cfg.Store)
	if err != nil {
		return nil, err
	}
	n := &Node{
		limits: lim, jobMutations: lim.BatchMutations() / 4, jobBytes: lim.BatchBytes() / 4,
		cfg: cfg, log: cfg.Logger, clk: cfg.Clock, eng: eng,
		in: make(chan input, 1024), quit: make(chan struct{}), done: make(chan struct{}),
		answers:  map[uint64]chan Answer{},
		awaiting: map[receiver.DeliveryRef][]*awaitingAnswer{},
		notifyQ:  make(chan sender.Outcome, 1024),
	}
	n.fbSignal = make(chan struct{}, 1)
	// Room for a full commit's worth of jobs: a loop that blocked here
	// while the store syncs would stall every answer and hand-off behind
	// the fsync (measured: 12-15% fewer messages per second at 64 groups).
	n.commits = make(chan commitJob, maxJobsPerCommit)
	// A spare per job a commit may carry: the loop makes a Ready per
	// batch, and one dropped here is one the engine allocates again.
	n.spares = make(chan Ready, maxJobsPerCommit)
	n.commitDone = make(chan struct{})
	n.lazyTimer = time.NewTimer(time.Hour)
	n.lazyTimer.Stop()
	n.delayTimer = time.NewTimer(time.Hour)
	n.delayTimer.Stop()
	n.failed = make(chan struct{})
	n.ctx, n.cancel = context.WithCancel(context.Background())
	for range cfg.DeliveryWorkers {
		ch := make(chan Delivery, 256)
		n.workers = append(n.workers, ch)
		n.workerWG.Add(1)
		go n.deliverLoop(ch)
	}
	n.workerWG.Add(1)
	go n.notifyLoop()
	go n.commitLoop()
	go n.run()
	return n, nil
}

// call runs fn on the engine's goroutine and returns its result once the
// batch holding it is durable.
func (n *Node) call(ctx context.Context, fn func(e *Engine, now time.Time) any) (any, error) {
	n.busy.Add(1)
	defer n.busy.Add(-1)
	reply := make(chan any, 1)
	if err := n.enqueue(ctx, input{fn: fn, reply: reply}); err != nil {
		return nil, err
	}
	select {
	case r := <-reply:
		if err, ok := r.(nodeFailure); ok {
			return nil, err.error
		}
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-n.done:
		return nil, n.stoppedErr()
	}
}

// nodeFailure is the reply of an input whose batch could not be committed.
type nodeFailure struct{ error }

func (n *Node) enqueue(ctx context.Context, in input) error {
	n.mu.Lock()
	closed := n.closed
	n.mu.Unlock()
	if closed {
		return n.stoppedErr()
	}
	select {
	case n.in <- in:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-n.done:
		return n.stoppedErr()
	}
}

// post feeds a result back to the engine without ever blocking: workers
// (sends, deliveries, outcomes) must not wait for the loop, which may be
// waiting for the committer, which may be waiting for them.
func (n *Node) post(fn func(e *Engine, now time.Time)) {
	n.fbMu.Lock()
	n.feedback = append(n.feedback, fn)
	n.fbMu.Unlock()
	select {
	case n.fbSignal <- struct{}{}:
	default:
	}
}

// takeFeedback returns the results posted since the last call.
func (n *Node) takeFeedback() []func(e *Engine, now time.Time) {
	n.fbMu.Lock()
	defer n.fbMu.Unlock()
	fb := n.feedback
	n.feedback = nil
	return fb
}

func (n *Node) stoppedErr() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.failure != nil {
		return n.failure
	}
	return ErrClosed
}

// Err returns the fatal error that stopped the node, if any.
func (n *Node) Err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.failure
}

// Submit hands a message to the sending RMP and returns its identity once it
// is durably stored; its outcome comes later through the OutcomeHandler.
func (n *Node) Submit(ctx context.Context, s Submission) (sender.MessageRef, error) {
	if s.To != "" {
		if err := n.cfg.Outbound.CheckURL(s.To); err != nil {
			return sender.MessageRef{}, fmt.Errorf("%w: destination: %w", sender.ErrInvalidSubmission, err)
		}
	}
	type res struct {
		ref sender.MessageRef
		err error
	}
	r, err := n.call(ctx, func(e *Engine, now time.Time) any {
		ref, err := e.Submit(now, s)
		return res{ref, err}
	})
	if err != nil {
		return sender.MessageRef{}, err
	}
	out := r.(res)
	return out.ref, out.err
}

// Confirm reports that a deferred delivery was taken (R92): the hand-off
// is complete and, in an ordered group, the next message may come.
func (n *Node) Confirm(ctx context.Context, ref receiver.DeliveryRef, response []byte) error {
	_, err := n.call(ctx, func(e *Engine, now time.Time) any {
		e.Taken(now, ref)
		if response != nil {
			e.Respond(now, ref, response)
		}
		return nil
	})
	return err
}

// Reject reports that a deferred delivery could not be taken; it is
// offered again later, until its ExpiryTime.
func (n *Node) Reject(ctx context.Context, ref receiver.DeliveryRef) error {
	_, err := n.call(ctx, func(e *Engine, now time.Time) any { e.DeliveryFailed(now, ref); return nil })
	return err
}

// Sync returns once every timer due at the clock's current time has been
// processed and its effects committed (fake-clock tests and the gateway's
// clock endpoint).
func (n *Node) Sync(ctx context.Context) error {
	_, err := n.call(ctx, func(e *Engine, now time.Time) any { e.Tick(now); return nil })
	return err
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
		<-n.commitDone
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

// run is the loop that owns the engine. It hands each batch's effects to
// the committer and goes on with the next batch while the store syncs, so
// parsing and state changes overlap the fsync (D8 still holds: nothing
// leaves before its commit).
func (n *Node) run() {
	defer close(n.done)
	defer close(n.commits)
	timer := newTimerState(n.clk)
	defer timer.stop()
	// Outcomes and hand-offs to redo after a restart are due at once.
	n.eng.Tick(n.clk.Now().UTC())
	n.handOff(nil, nil)
	n.resetTimer(timer)
	for {
		var batch []input
		tick := false
		select {
		case <-n.quit:
			n.drainQuit()
			return
		case <-n.failed:
			n.drainQuit()
			return
		case in := <-n.in:
			batch = append(batch, in)
		case <-n.fbSignal:
		case <-timer.c():
			timer.fired()
			tick = true
		}
	more:
		for len(batch) < n.cfg.MaxBatch {
			select {
			case in := <-n.in:
				batch = append(batch, in)
			default:
				break more
			}
		}
		now := n.clk.Now().UTC()
		// A job is closed (handed to the committer) whenever its Persist
		// reaches a quarter of the store's batch limits, so that every
		// commit fits them (jobs.go, #18).
		results := make([]any, len(batch))
		from := 0
		split := func(upTo int) {
			if n.jobFull() {
				n.handOff(batch[from:upTo], results[from:upTo])
				from = upTo
			}
		}
		for _, fn := range n.takeFeedback() {
			fn(n.eng, now)
			split(0)
		}
		for i, in := range batch {
			results[i] = in.fn(n.eng, now)
			split(i + 1)
		}
		progress := false
		if d, ok := n.eng.NextDeadline(); tick || (ok && !d.After(now)) {
			n.eng.Tick(now)
			progress = n.eng.HasReady()
			split(len(batch))
		}
		// Work that became due at once (a deadline at or before now) is done
		// now rather than left to a zero timer, which a fake clock would
		// only fire on its next move. Bounded, in case a deadline stays put;
		// work a Tick left for the next (its budget spent) is done by the
		// next iteration, after the inputs that came meanwhile.
		for range 8 {
			d, ok := n.eng.NextDeadline()
			if !ok || d.After(now) {
				progress = false
				break
			}
			before := n.eng.rd.size()
			n.eng.Tick(now)
			if progress = n.eng.rd.size() != before; !progress {
				break
			}
			split(len(batch))
		}
		n.handOff(batch[from:], results[from:])
		if progress {
			n.kick()
		}
		n.resetTimer(timer)
	}
}

// commitJob is one loop iteration's effects and the replies to send once
// they are durable.
type commitJob struct {
	rd      Ready
	bytes   int // store.MutationBytes of rd.Persist
	batch   []input
	results []any
}

// handOff takes the engine's Ready and queues it for the committer.
func (n *Node) handOff(batch []input, results []any) {
	job := commitJob{batch: batch, results: results}
	if n.eng.HasReady() {
		n.jobFull() // counts the Persist's bytes
		job.bytes = n.countedBytes
		job.rd = n.eng.Ready()
		n.eng.Advance()
		n.counted, n.countedBytes = 0, 0
		select {
		case rd := <-n.spares:
			n.eng.Recycle(rd)
		default:
		}
	}
	if job.rd.empty() && len(batch) == 0 {
		return
	}
	select {
	case n.commits <- job:
	case <-n.failed:
		for _, in := range batch {
			if in.reply != nil {
				in.reply <- nodeFailure{n.stoppedErr()}
			}
		}
	}
}

// drainQuit answers inputs still queued when the loop stops.
func (n *Node) drainQuit() {
	for {
		select {
		case in := <-n.in:
			if in.reply != nil {
				in.reply <- nodeFailure{n.stoppedErr()}
			}
		default:
			return
		}
	}
}

func (n *Node) resetTimer(t *timerState) {
	t.arm(n.eng.NextDeadline())
}

// fail stops the node after a store failure: the engine may be ahead of the
// disk, and a reopen recovers from what was committed.
func (n *Node) fail(err error, jobs []commitJob) {
	n.log.Error("node stopped", "err", err)
	n.mu.Lock()
	n.failure = err
	n.closed = true
	n.mu.Unlock()
	n.failOnce.Do(func() { close(n.failed) })
	for _, j := range jobs {
		for _, in := range j.batch {
			if in.reply != nil {
				in.reply <- nodeFailure{err}
			}
		}
	}
	n.failAnswers(err)
}

// failAnswers answers waiting HTTP requests with 503: their messages were
// not durably accepted, so the sender resends.
func (n *Node) failAnswers(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for tok, ch := range n.answers {
		ch <- Answer{Token: tok, Status: 503, ContentType: "text/plain; charset=utf-8", Body: []byte(err.Error() + "\n")}
		delete(n.answers, tok)
	}
	// Answers held for a business response were committed: release them
	// as they are.
	for ref, ws := range n.awaiting {
		for _, w := range ws {
			w.release()
		}
		delete(n.awaiting, ref)
	}
}

// release hands out the effects of a committed Ready, in order: answers,
// sends, deliveries, outcomes.
func (n *Node) release(rd *Ready) {
	if len(rd.Answers) > 0 {
		n.mu.Lock()
		for _, a := range rd.Answers {
			ch, ok := n.answers[a.Token]
			if !ok {
				continue
			}
			delete(n.answers, a.Token)
			if a.Await != nil && (!a.AwaitLater || n.cfg.AwaitDelivery > 0) {
				// Held until the consumer returns (R73); see deliverLoop.
				n.await(*a.Await, ch, a)
				continue
			}
			ch <- a
		}
		n.mu.Unlock()
	}
	for _, o := range rd.Sends {
		n.sendWG.Add(1)
		n.busy.Add(1)
		go n.send(o)
	}
	for _, d := range rd.Deliver {
		h := fnv.New32a()
		h.Write([]byte(d.Ref.Group.GroupID))
		n.workers[int(h.Sum32()%uint32(len(n.workers)))] <- d
	}
	for _, o := range rd.Notify {
		n.notifyQ <- o
	}
	for _, ev := range rd.Events {
		n.logEvent(ev)
	}
}

func (n *Node) send(o Outbound) {
	defer n.sendWG.Done()
	defer n.busy.Add(-1) // after the result is posted: the ack is work to come
	res, err := n.cfg.Transport.Do(n.ctx, o.Post)
	if err != nil {
		n.log.Debug("send failed", "kind", o.Ref.Kind.String(), "url", outbound.Redact(o.Post.URL), "err", err)
	} else if o.Ref.Kind != OutCallback {
		// Parsed here, not on the engine's loop (as ServeHTTP does).
		res = res.WithParsedReply(n.cfg.Engine.Parse)
	}
	n.warnNoAck(o, res, err)
	n.post(func(e *Engine, now time.Time) { e.SendResult(now, o.Ref, res, err) })
}

func (n *Node) deliverLoop(ch chan Delivery) {
	defer n.workerWG.Done()
	for {
		select {
		case d := <-ch:
			resp, err := n.cfg.Consumer.Deliver(n.ctx, d)
			ref := d.Ref
			n.completeAnswer(ref, resp, err)
			if errors.Is(err, ErrDeferred) {
				continue
			}
			if err != nil {
				n.log.Debug("delivery refused", "group", ref.Group.GroupID, "number", ref.Number, "err", err)
				n.post(func(e *Engine, now time.Time) { e.DeliveryFailed(now, ref) })
				continue
			}
			n.post(func(e *Engine, now time.Time) {
				e.Taken(now, ref)
				if resp != nil {
					e.Respond(now, ref, resp)
				}
			})
		case <-n.ctx.Done():
			return
		}
	}
}

// awaitingAnswer is an HTTP answer held until its message's consumer
// returned, so that a business response can ride on it (R73). Several
// answers may wait for one delivery (copies of a held message).
type awaitingAnswer struct {
	ch    chan Answer
	a     Answer
	timer *time.Timer // AwaitLater: sends a as it is after AwaitDelivery
}

// release sends the answer as it is (without a business response).
func (w *awaitingAnswer) release() { w.send(w.a) }

func (w *awaitingAnswer) send(a Answer) {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.ch <- a
}

// await holds a until the consumer returns from ref's delivery; with mu
// held. An answer whose delivery is not in its Ready waits at most
// AwaitDelivery.
func (n *Node) await(ref receiver.DeliveryRef, ch chan Answer, a Answer) {
	w := &awaitingAnswer{ch: ch, a: a}
	if a.AwaitLater {
		w.timer = time.AfterFunc(n.cfg.AwaitDelivery, func() {
			n.mu.Lock()
			ws := n.awaiting[ref]
			i := slices.Index(ws, w)
			if i >= 0 {
				ws = slices.Delete(ws, i, i+1)
				if len(ws) == 0 {
					delete(n.awaiting, ref)
				} else {
					n.awaiting[ref] = ws
				}
			}
			n.mu.Unlock()
			if i >= 0 {
				w.ch <- w.a
			}
		})
	}
	n.awaiting[ref] = append(n.awaiting[ref], w)
}

// completeAnswer releases the answers waiting for ref, with the consumer's
// business response as their Body when it gave one.
func (n *Node) completeAnswer(ref receiver.DeliveryRef, resp []byte, err error) {
	n.mu.Lock()
	ws := n.awaiting[ref]
	delete(n.awaiting, ref)
	n.mu.Unlock()
	for _, w := range ws {
		if err == nil {
			w.send(w.a.WithBusinessResponse(resp))
			continue
		}
		w.release()
	}
}

func (n *Node) notifyLoop() {
	defer n.workerWG.Done()
	batch := make([]sender.Outcome, 0, maxOutcomeBatch)
	for {
		select {
		case o := <-n.notifyQ:
			batch = append(batch[:0], o)
		drain: // what else is waiting goes along (OutcomeBatchHandler)
			for len(batch) < maxOutcomeBatch {
				select {
				case o := <-n.notifyQ:
					batch = append(batch, o)
				default:
					break drain
				}
			}
			delay := n.cfg.RetryDelay
			for len(batch) > 0 {
				handled, err := n.handleOutcomes(batch)
				if handled > 0 {
					ids := make([]sender.OutcomeID, handled)
					for i := range ids {
						ids[i] = batch[i].ID
					}
					n.post(func(e *Engine, now time.Time) {
						for _, id := range ids {
							e.OutcomeHandled(now, id)
						}
					})
					batch = batch[handled:]
				}
				if err == nil {
					continue
				}
				n.log.Warn("outcome handler failed; retrying", "group", batch[0].Ref.GroupID, "err", err)
				t := n.clk.Timer(delay)
				select {
				case <-t.C:
				case <-n.ctx.Done():
					t.Stop()
					return
				}
				delay = min(2*delay, time.Minute)
			}
		case <-n.ctx.Done():
			return
		}
	}
}

// handleOutcomes hands os to the outcome handler: at once to an
// OutcomeBatchHandler, else one by one up to the first failure.
func (n *Node) handleOutcomes(os []sender.Outcome) (int, error) {
	if bh, ok := n.cfg.Outcomes.(OutcomeBatchHandler); ok {
		h, err := bh.HandleOutcomes(n.ctx, os)
		if err == nil && h < len(os) {
			err = fmt.Errorf("rmp: the outcome handler took %d of %d outcomes without an error", h, len(os))
		}
		return max(0, min(h, len(os))), err
	}
	for i, o := range os {
		if err := n.cfg.Outcomes.HandleOutcome(n.ctx, o); err != nil {
			return i, err
		}
	}
	return len(os), nil
}

func (n *Node) logEvent(ev Event) {
	if !n.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	switch {
	case ev.Receiver != nil:
		r := ev.Receiver
		n.log.Debug("receiver "+r.Kind.String(), "group", r.Group.GroupID, "generation", r.Group.Generation,
			"number", r.Number, "rule", r.Rule.String(), "code", r.Code.String(), "label", r.Label)
	case ev.Sender != nil:
		s := ev.Sender
		n.log.Debug("sender "+s.Kind.String(), "group", s.GroupID, "rule", s.Rule.String())
	}
}
