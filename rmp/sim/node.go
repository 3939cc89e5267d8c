package sim

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/memstore"
	"github.com/wsrkit/wsrkit/store/pebblestore"
)

// request is an inbound POST waiting for its answer.
type request struct {
	from   int
	epoch  uint64
	ref    rmp.OutboundRef
	orphan bool // a network duplicate: nobody waits for its answer
}

// node is one engine over its store, applied as a driver would (rmp doc).
type node struct {
	wd   *world
	idx  int
	name string
	url  string
	cfg  rmp.Config

	st  store.Store
	mem *memstore.Store    // memstore runs
	fs  *pebblestore.MemFS // pebble runs
	e   *rmp.Engine

	// epoch counts rebuilds: answers to POSTs of an earlier epoch are
	// dropped (the process that waited for them is gone).
	epoch   uint64
	token   uint64
	pending map[uint64]request
	// awaiting holds answers until their message's consumer returned (R73).
	awaiting map[receiver.DeliveryRef]awaited

	skew    time.Duration // n's clock minus the world's time (clock.go)
	tickAt  time.Time     // world time
	tickSet bool
	ticksAt int // ticks at the same instant, to catch a timer livelock

	// Hand-offs taken and outcomes handled whose Persist is not yet
	// durable: after a rebuild they may legitimately come again.
	undurTaken   []deliveryKey
	undurHandled []sender.OutcomeID
	recovering   bool
	// watch asks drain to check its first Apply: when it fails, message
	// watchID was not submitted after all and lostSub is set.
	watch, lostSub bool
	watchID        int
	// drains counts drain calls (checkIndex).
	drains int
}

var errInjected = errors.New("sim: injected store fault")

// quiet drops pebble's log lines (a stopped store says why in its error).
type quiet struct{}

func (quiet) Infof(string, ...any)  {}
func (quiet) Errorf(string, ...any) {}

func newNode(wd *world, i int) (*node, error) {
	n := &node{wd: wd, idx: i, name: fmt.Sprintf("n%d", i), url: fmt.Sprintf("http://n%d.sim/", i), pending: map[uint64]request{}}
	n.cfg.Sender.InstanceID = n.name
	n.cfg.Sender.JitterSeed = wd.seed
	n.cfg.Sender.PollInterval = 2 * time.Second
	n.cfg.Sender.LateFaultGrace = wd.p.slack // longer than chaos, jumps and callback retries: a late fault (D13) must find its message
	n.cfg.Sender.Retry = sender.RetryPolicy{Interval: time.Second, Backoff: 2, MaxInterval: 4 * time.Second, Jitter: 0.1, MaxRetries: 4}
	guaranteed := sender.RetryPolicy{Interval: time.Second, Backoff: 2, MaxInterval: 4 * time.Second, Jitter: 0.1, MaxRetries: 400}
	// Late faults (D13): polled until ExpiryTime plus a margin that covers
	// the clock jumps (a node set back discards later on the world's
	// clock); not when the receivers ack on delivery (D8).
	n.cfg.Sender.LateFaultMargin = wd.p.slack - wd.p.chaos
	n.cfg.Sender.PollIntervalMax = 8 * time.Second
	n.cfg.Sender.Destinations = map[string]sender.Destination{}
	for j := range 2 {
		n.cfg.Sender.Destinations[fmt.Sprintf("http://n%d.sim/g", j)] = sender.Destination{Retry: guaranteed, AckOnDelivery: wd.p.ackOnDelivery}
		n.cfg.Sender.Destinations[fmt.Sprintf("http://n%d.sim/x", j)] = sender.Destination{Retry: n.cfg.Sender.Retry, AckOnDelivery: wd.p.ackOnDelivery}
	}
	n.cfg.Sender.Limits.MaxPending = wd.p.maxPending
	n.cfg.ReplyTo = n.url + "cb"
	rc := &n.cfg.Receiver
	rc.AckOnDelivery = wd.p.ackOnDelivery
	rc.MaxHeldPerGroup = wd.p.maxHeldPerGroup
	rc.MaxHeldTotal = wd.p.maxHeldTotal
	rc.DeliveryRetry = receiver.Backoff{Initial: 200 * time.Millisecond, Factor: 2, Max: 5 * time.Second}
	rc.CallbackRetry = receiver.Backoff{Initial: time.Second, Factor: 2, Max: 8 * time.Second}
	rc.FaultRetention = wd.p.slack
	rc.MaxDeliveryRun = wd.opt.DeliveryRun
	n.cfg.Sender.Window = wd.opt.Window
	if wd.opt.Pebble {
		n.fs = pebblestore.NewMemFS()
		st, err := n.fs.Open("db", pebblestore.Options{Logger: quiet{}})
		if err != nil {
			return nil, err
		}
		n.st = st
	} else {
		n.mem = memstore.New(memstore.Options{})
		n.st = n.mem
	}
	e, err := rmp.LoadEngine(n.cfg, n.st)
	if err != nil {
		return nil, err
	}
	n.e = e
	return n, nil
}

// drain applies every Ready until none is left, in the order of the rmp
// package doc: Persist, Advance, answers, sends, deliveries, outcomes.
// A failed Apply or a crash between Persist and the effects rebuilds the
// node from its store and drops the rest of the Ready.
func (n *node) drain() {
	wd := n.wd
	for n.e.HasReady() && !wd.stopped {
		rd := n.e.Ready()
		injected := n.injectStoreFault()
		err := n.st.Apply(rd.Persist)
		if n.fs != nil && injected && n.fs.FailNextWALWrite(nil) {
			injected = false // nothing was written (an empty Persist)
		}
		if n.watch {
			// The first Apply after a Submit holds the submission: if it
			// fails, the submission never happened (R21); forget it before
			// the rebuild reports on its group.
			n.watch = false
			if err != nil {
				n.lostSub = true
				wd.m.lost(n.watchID)
			}
		}
		if err != nil {
			if !injected || n.mem != nil && !errors.Is(err, errInjected) || n.fs != nil && !errors.Is(err, store.ErrFailed) {
				wd.violate(-1, "%s: store: %v", n.name, err)
				return
			}
			wd.res.StoreFault++
			if n.fs != nil {
				wd.res.WALFaults++
				// The commit may have reached the disk all the same: a
				// discard it decided may stand (checked as if it did).
				n.maybeDiscarded(rd.Events)
			}
			// memstore: nothing of the batch was applied, reload; pebble:
			// the store stopped (ErrFailed), recover a crash clone.
			n.rebuild(n.fs != nil, "store fault")
			return
		}
		n.e.Advance()
		if len(rd.Persist) > 0 {
			n.madeDurable()
		}
		// Receiver events say what the durable Persist decided (a discard,
		// a removal): the model learns them even if a crash loses the rest.
		for _, ev := range rd.Events {
			if ev.Receiver != nil {
				wd.m.receiverEvent(n, ev.Receiver)
			}
		}
		if !n.recovering && wd.chance(wd.p.crashMid) {
			n.rebuild(true, "crash between Persist and effects")
			return
		}
		for _, a := range rd.Answers {
			r, ok := n.pending[a.Token]
			if !ok {
				wd.violate(-1, "%s: answer for unknown token %d", n.name, a.Token)
				continue
			}
			delete(n.pending, a.Token)
			// An answer whose delivery comes in a later Ready (AwaitLater)
			// is sent as it is: this driver does not park it (a Node with a
			// negative AwaitDelivery), so the ack's timing is unchanged.
			if a.Await != nil && !a.AwaitLater {
				n.hold(r, a)
				continue
			}
			if bytes.Contains(a.Body, respMark) {
				wd.res.CachedResponses++ // D18: a duplicate's answer
			}
			wd.answer(r, a)
		}
		for _, o := range rd.Sends {
			wd.post(n, o)
		}
		taken := false // the hand-off before, for a run (Delivery.InRun)
		for _, d := range rd.Deliver {
			if d.InRun && !taken {
				// D14, R49: never reaches the consumer; handed back, it
				// waits for its turn.
				n.e.Returned(n.now(), d.Ref)
				n.complete(d.Ref, nil)
				continue
			}
			taken = wd.m.deliver(n, d)
		}
		n.releaseAwaiting()
		for _, o := range rd.Notify {
			wd.m.outcome(n, o)
		}
		for _, ev := range rd.Events {
			if ev.Sender != nil {
				wd.m.senderEvent(n, ev.Sender)
			}
		}
	}
	wd.m.bounds(n)
	if n.drains++; n.recovering || n.drains%indexCheckEvery == 0 {
		n.checkIndex()
	}
	n.arm()
}

// injectStoreFault arms a fault for the next Apply, never while a node
// recovers: memstore fails the whole batch (FailApply); pebble fails the
// next write or sync of its WAL (errorfs), which stops the store. Not on
// the Apply of a Submit over pebble: there the batch may still reach the
// disk, and the producer could not tell whether to submit again.
func (n *node) injectStoreFault() bool {
	wd := n.wd
	if n.recovering || n.fs != nil && n.watch || !wd.chance(wd.p.storeFault) {
		return false
	}
	if n.mem != nil {
		n.mem.FailApply(1, errInjected)
	} else {
		n.fs.FailNextWALWrite(errInjected)
	}
	return true
}

// maybeDiscarded tells the model of the discards of a Ready whose commit
// failed but may have reached the disk.
func (n *node) maybeDiscarded(evs []rmp.Event) {
	for _, ev := range evs {
		if ev.Receiver != nil && ev.Receiver.Kind == receiver.EventDiscarded {
			n.wd.m.receiverEvent(n, ev.Receiver)
		}
	}
}

// madeDurable marks the hand-offs and outcomes acknowledged before this
// Apply as durably recorded.
func (n *node) madeDurable() {
	for _, k := range n.undurTaken {
		if t := n.wd.m.taken[k]; t != nil {
			t.durable = true
		}
	}
	for _, id := range n.undurHandled {
		if h := n.wd.m.handled[handleKey{n.idx, id}]; h != nil {
			h.durable = true
		}
	}
	n.undurTaken, n.undurHandled = n.undurTaken[:0], n.undurHandled[:0]
}

// arm sets the node's one timer to NextDeadline.
func (n *node) arm() {
	d, ok := n.e.NextDeadline()
	if !ok {
		return
	}
	d = d.Add(-n.skew) // the world's time of that instant on n's clock
	now := n.wd.now
	if !d.After(now) {
		d = now
	}
	if n.tickSet && !d.Before(n.tickAt) {
		return
	}
	if d.Equal(n.tickAt) && n.tickSet {
		return
	}
	if d.Equal(now) {
		n.ticksAt++
		if n.ticksAt > 10000 {
			n.wd.violate(-1, "%s: timer livelock: NextDeadline stays at or before now after Tick", n.name)
			return
		}
	} else {
		n.ticksAt = 0
	}
	n.tickAt, n.tickSet = d, true
	n.wd.sch.push(&event{at: d, kind: evTick, node: n.idx})
}

// rebuild restarts the node from its store: after a crash (pebble: from a
// crash clone of its filesystem; memstore: every applied batch survives)
// or a failed Apply (the engine may be ahead of the store, rmp doc rule 2).
func (n *node) rebuild(crash bool, why string) {
	wd := n.wd
	wd.res.Crashes++
	n.epoch++
	toks := make([]uint64, 0, len(n.pending))
	for t := range n.pending {
		toks = append(toks, t)
	}
	sort.Slice(toks, func(i, j int) bool { return toks[i] < toks[j] })
	for _, t := range toks {
		wd.fail(n.pending[t])
		delete(n.pending, t)
	}
	n.undurTaken, n.undurHandled = nil, nil
	if n.fs != nil && crash {
		clone := n.fs.CrashClone(wd.p.crashUnsynced, wd.rng.Uint64())
		st, err := clone.Open("db", pebblestore.Options{Logger: quiet{}})
		if err != nil {
			wd.violate(-1, "%s: reopen after crash: %v", n.name, err)
			return
		}
		_ = n.st.Close()
		n.fs, n.st = clone, st
	}
	e, err := rmp.LoadEngine(n.cfg, n.st)
	if err != nil {
		wd.violate(-1, "%s: recover after %s: %v", n.name, why, err)
		wd.stopped = true
		return
	}
	n.e = e
	n.tickSet = false
	wd.m.rebuilt(n)
	n.recovering = true
	n.e.Tick(n.now()) // re-emits the outbox (D27) and redoes hand-offs (R92)
	n.drain()
	n.recovering = false
}
