package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/outbound"
)

// world is one run: two nodes, the network between them, the scheduler,
// the workload and the model that checks the invariants.
type world struct {
	seed    uint64
	opt     Options
	p       params
	rng     *rand.Rand
	sch     scheduler
	now     time.Time
	healed  bool // after evHeal: no loss, duplicates, crashes or faults
	nodes   [2]*node
	w       workload
	m       model
	res     Result
	stopped bool // a violation that makes going on meaningless
}

// makeWorkloadFor redraws the workload Run uses for seed.
func makeWorkloadFor(seed uint64, opt Options) workload {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return makeWorkload(rng, drawParams(rng, opt))
}

// Run simulates one seed and returns its counts and violations.
func Run(seed uint64, opt Options) Result {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	p := drawParams(rng, opt)
	wd := &world{seed: seed, opt: opt, p: p, rng: rng, now: epoch, res: newResult()}
	if wd.opt.MaxEvents == 0 {
		wd.opt.MaxEvents = 2_000_000
	}
	wd.res.Seeds = 1
	wd.w = makeWorkload(rng, p)
	wd.m = newModel(wd)
	defer func() {
		for _, n := range wd.nodes {
			if n != nil {
				_ = n.st.Close() // pebble's goroutines end with it
			}
		}
	}()
	for i := range wd.nodes {
		n, err := newNode(wd, i)
		if err != nil {
			wd.violate(-1, "open node %d: %v", i, err)
			return wd.res
		}
		wd.nodes[i] = n
	}
	for _, pm := range wd.w.msgs {
		wd.sch.push(&event{at: epoch.Add(pm.at), kind: evSubmit, plan: pm.id})
	}
	for range p.crashes {
		wd.sch.push(&event{at: epoch.Add(time.Duration(rng.Int64N(int64(p.chaos)))), kind: evCrash, node: rng.IntN(2)})
	}
	for _, j := range p.jumps {
		wd.sch.push(&event{at: epoch.Add(j.at), kind: evJump, node: j.node, jump: j.by})
	}
	for _, a := range p.aborts {
		wd.sch.push(&event{at: epoch.Add(a.at), kind: evAbort, abort: a})
	}
	wd.sch.push(&event{at: epoch.Add(p.chaos), kind: evHeal})
	wd.loop()
	if !wd.stopped {
		wd.m.final()
	}
	return wd.res
}

func (wd *world) loop() {
	for !wd.stopped {
		e := wd.sch.pop()
		if e == nil {
			return
		}
		wd.res.Events++
		if wd.res.Events > wd.opt.MaxEvents {
			wd.violate(-1, "did not quiesce within %d events (virtual time %v)", wd.opt.MaxEvents, wd.now.Sub(epoch))
			return
		}
		if e.at.After(wd.now) {
			wd.now = e.at
		}
		wd.fire(e)
	}
}

func (wd *world) fire(e *event) {
	switch e.kind {
	case evSubmit:
		wd.submit(e)
	case evArrive:
		wd.arrive(e)
	case evAnswer:
		n := wd.nodes[e.node]
		if debugAnswer != nil {
			debugAnswer(wd, n, e)
		}
		if e.epoch != n.epoch {
			return // the connection died with the process that made it
		}
		if e.ref.Kind == rmp.OutMessage && e.err == nil {
			wd.m.answered(e.ref, e.res.Body)
		}
		n.e.SendResult(n.now(), e.ref, e.res, e.err)
		n.drain()
	case evTick:
		n := wd.nodes[e.node]
		if !n.tickSet || !e.at.Equal(n.tickAt) {
			return // superseded
		}
		n.tickSet = false
		n.e.Tick(n.now())
		n.drain()
	case evCrash:
		if !wd.healed {
			wd.nodes[e.node].rebuild(true, "crash")
		}
	case evJump:
		wd.jump(e)
	case evAbort:
		wd.abort(e.abort)
	case evHeal:
		wd.healed = true
	}
}

// chance draws a fault with probability p, never after the heal.
func (wd *world) chance(p float64) bool {
	return !wd.healed && p > 0 && wd.rng.Float64() < p
}

func (wd *world) delay() time.Duration {
	return time.Duration(1 + wd.rng.Int64N(int64(wd.p.maxDelay)))
}

// post puts an Outbound of node from on the network: lost (its exchange
// fails after the timeout), delivered after a delay, maybe duplicated.
func (wd *world) post(from *node, o rmp.Outbound) {
	to, ok := wd.route(o.Post.URL)
	if !ok {
		wd.violate(-1, "%s posts to unknown URL %q", from.name, o.Post.URL)
		return
	}
	if o.Ref.Kind == rmp.OutMessage {
		wd.m.transmitted(o.Ref)
	}
	lost := wd.chance(wd.p.loss)
	if debugPost != nil {
		debugPost(wd, from, o, map[bool]string{true: "lost", false: "sent"}[lost])
	}
	if lost {
		wd.sch.push(&event{at: wd.now.Add(wd.p.timeout), kind: evAnswer, node: from.idx, epoch: from.epoch, ref: o.Ref, err: errLost})
		return
	}
	wd.sch.push(&event{at: wd.now.Add(wd.delay()), kind: evArrive, node: to, from: from.idx, fromEpoch: from.epoch, out: o})
	if wd.chance(wd.p.dup) {
		wd.sch.push(&event{at: wd.now.Add(wd.delay()), kind: evArrive, node: to, from: from.idx, out: o, orphan: true})
	}
}

// Debug hooks for tests; nil in normal runs.
var (
	debugPost   func(wd *world, from *node, o rmp.Outbound, fate string)
	debugAnswer func(wd *world, n *node, e *event)
)

var errLost = errors.New("sim: exchange lost")

// route maps http://n<i>.sim/... to node i.
func (wd *world) route(url string) (int, bool) {
	for i, n := range wd.nodes {
		if strings.HasPrefix(url, n.url) {
			return i, true
		}
	}
	return 0, false
}

// arrive hands a POST to its node and sends the answer back.
func (wd *world) arrive(e *event) {
	n := wd.nodes[e.node]
	n.token++
	tok := n.token
	n.pending[tok] = request{from: e.from, epoch: e.fromEpoch, ref: e.out.Ref, orphan: e.orphan}
	n.e.Receive(n.now(), tok, e.out.Post.ContentType, e.out.Post.Body)
	n.drain()
	if r, ok := n.pending[tok]; ok {
		// The Ready holding the answer was lost to a crash or store fault.
		delete(n.pending, tok)
		wd.fail(r)
	}
}

// answer sends an HTTP response back to its requester.
func (wd *world) answer(r request, a rmp.Answer) {
	if r.orphan {
		return
	}
	if wd.chance(wd.p.answerLoss) {
		wd.fail(r)
		return
	}
	wd.sch.push(&event{at: wd.now.Add(wd.delay()), kind: evAnswer, node: r.from, epoch: r.epoch, ref: r.ref,
		res: outbound.PostResult{Status: a.Status, ContentType: a.ContentType, Body: a.Body}})
}

// fail makes the requester of r see a failed exchange.
func (wd *world) fail(r request) {
	if r.orphan {
		return
	}
	wd.sch.push(&event{at: wd.now.Add(wd.p.timeout), kind: evAnswer, node: r.from, epoch: r.epoch, ref: r.ref, err: errLost})
}

// submit hands one planned message to its producer's engine.
func (wd *world) submit(e *event) {
	pm := &wd.w.msgs[e.plan]
	g := &wd.w.groups[pm.g]
	n := wd.nodes[g.from]
	path := "x"
	if g.guaranteed {
		path = "g"
	}
	sub := rmp.Submission{
		To: fmt.Sprintf("%s%s", wd.nodes[g.to].url, path), GroupKey: g.key, Last: pm.last,
		Flags: g.flags, Lifetime: pm.lifetime, Timing: g.timing, Pattern: g.pattern,
		Payload: fmt.Appendf(nil, `<m xmlns="urn:sim">%d</m>`, pm.id),
	}
	ref, err := n.e.Submit(n.now(), sub)
	if err != nil {
		if wd.m.refused(pm.id, err) {
			wd.sch.push(&event{at: wd.now.Add(500 * time.Millisecond), kind: evSubmit, plan: pm.id})
		}
		return
	}
	wd.m.submitted(pm.id, ref, n.now().Add(pm.lifetime))
	n.watch, n.lostSub, n.watchID = true, false, pm.id
	n.drain()
	n.watch = false
	if n.lostSub {
		// The Persist holding the submission failed: Submit is not done
		// until it is durable (R21), so the producer submits again.
		wd.sch.push(&event{at: wd.now.Add(100 * time.Millisecond), kind: evSubmit, plan: pm.id})
	}
}

// violate records a broken invariant about message id (-1: none).
func (wd *world) violate(id int, format string, args ...any) {
	msg := fmt.Sprintf("seed %d (pebble=%v) t=+%v: %s", wd.seed, wd.opt.Pebble, wd.now.Sub(epoch), fmt.Sprintf(format, args...))
	if id >= 0 && id < len(wd.m.recs) {
		msg += "\n" + wd.m.trace(id)
	}
	msg += "\n  params: " + wd.p.String()
	wd.res.Violations = append(wd.res.Violations, msg)
	if len(wd.res.Violations) >= 5 {
		wd.stopped = true
	}
}
