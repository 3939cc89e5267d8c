package sim

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// epoch is virtual time zero.
var epoch = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// Options choose the shape of a run; the seed draws everything else.
type Options struct {
	// Pebble runs both nodes over pebble on a crashable in-memory
	// filesystem (crashes and WAL write faults recover a crash clone);
	// otherwise memstore, where a crash reloads from the same store and
	// Apply failures are injected with FailApply.
	Pebble bool
	// Groups and MaxPerGroup size the workload; zero means 80 and 24.
	Groups, MaxPerGroup int
	// Chaos is how long faults are injected before the network heals;
	// zero means 90 s of virtual time.
	Chaos time.Duration
	// MaxEvents stops a run that does not quiesce (a violation); zero
	// means 2,000,000.
	MaxEvents int
	// DeliveryRun and Window set both nodes' receiver.Config.MaxDeliveryRun
	// and sender.Config.Window (#22); zero keeps the engines' defaults, one
	// hand-off at a time and no bound, as the CI seeds run.
	DeliveryRun, Window int
}

// params are the fault rates and limits of one run, drawn from its seed.
type params struct {
	groups, maxPerGroup int
	chaos               time.Duration
	// slack outlasts the chaos phase and every clock jump with minutes
	// to spare: guaranteed messages live this long, and late faults (D13)
	// are kept and mapped for as long.
	slack time.Duration

	loss, answerLoss, dup float64 // per POST and per response
	maxDelay              time.Duration
	timeout               time.Duration // a lost exchange fails after this

	crashes       int     // scheduled crash events during chaos
	crashMid      float64 // per applied Ready: crash after Persist, before its effects
	storeFault    float64 // per Apply: the batch (memstore) or its WAL write (pebble) fails
	consumerFail  float64 // per hand-off: the consumer refuses it
	jumps         []clockJump
	aborts        []abortPlan // operator aborts during chaos
	crashUnsynced int         // pebble CrashClone percentage of unsynced blocks kept

	maxHeldPerGroup, maxHeldTotal int
	maxPending                    int
	ackOnDelivery                 bool
}

func drawParams(rng *rand.Rand, o Options) params {
	p := params{groups: o.Groups, maxPerGroup: o.MaxPerGroup, chaos: o.Chaos}
	if p.groups == 0 {
		p.groups = 80
	}
	if p.maxPerGroup == 0 {
		p.maxPerGroup = 24
	}
	if p.chaos == 0 {
		p.chaos = 90 * time.Second
	}
	p.loss = rng.Float64() * 0.3
	p.answerLoss = rng.Float64() * 0.3
	p.dup = rng.Float64() * 0.15
	p.maxDelay = time.Duration(1+rng.IntN(1500)) * time.Millisecond
	p.timeout = 3 * time.Second
	p.crashes = rng.IntN(1 + 3*max(1, p.groups/40)) // about as many per message at every size
	p.crashMid = rng.Float64() * 0.01
	p.storeFault = rng.Float64() * 0.01
	p.consumerFail = rng.Float64() * 0.2
	var jumped time.Duration
	p.jumps, jumped = drawJumps(rng, p.chaos)
	p.slack = p.chaos + jumped + 2*time.Minute
	p.aborts = drawAborts(rng, p)
	p.crashUnsynced = rng.IntN(101)
	p.maxHeldPerGroup = 2 + rng.IntN(10)
	p.maxHeldTotal = p.maxHeldPerGroup + rng.IntN(30)
	p.maxPending = 50 + rng.IntN(400)
	p.ackOnDelivery = rng.IntN(6) == 0
	return p
}

func (p params) String() string {
	return fmt.Sprintf("groups=%d loss=%.2f answerLoss=%.2f dup=%.2f delay<=%v crashes=%d crashMid=%.3f storeFault=%.3f consumerFail=%.2f jumps=[%s] aborts=[%s] held<=%d/%d pending<=%d ackOnDelivery=%v",
		p.groups, p.loss, p.answerLoss, p.dup, p.maxDelay, p.crashes, p.crashMid, p.storeFault, p.consumerFail, jumpsString(p.jumps), abortsString(p.aborts),
		p.maxHeldPerGroup, p.maxHeldTotal, p.maxPending, p.ackOnDelivery)
}

// Result is what one or more runs did and found.
type Result struct {
	Seeds      int
	Submitted  int            // messages accepted by Submit
	Refused    map[string]int // submissions finally refused, by error (R16, bounds, aborted groups)
	Delivered  int            // identities taken by the consumer for the first time
	Redelivery int            // hand-offs again after a restart before Taken was durable (R92)
	Rereported int            // outcomes again after a restart before OutcomeHandled was durable (D27)
	Acked      int            // final outcome Acknowledged
	Failed     map[string]int
	// BestEffort counts the final fate of messages without AckRequested:
	// "delivered" or "lost" (allowed).
	BestEffort map[string]int
	// Aborts counts operator aborts by side ("sender", "receiver").
	Aborts    map[string]int
	Crashes   int
	BackJumps int // a node's clock set back (forward jumps are the world's)
	// Responses counts business responses carried by the answer that
	// acknowledged their message, CachedResponses those carried again by
	// a duplicate's answer (D18), ResponsesSeen those that reached the
	// producer's side, each checked to be its message's own (R73), and
	// ResponsesOnOutcome those handed to the producer on an Acknowledged
	// outcome (Outcome.Response), checked the same way.
	Responses, CachedResponses, ResponsesSeen, ResponsesOnOutcome int
	StoreFault                                                    int
	WALFaults                                                     int // of StoreFault, pebble WAL write faults (errorfs)
	Events                                                        int
	// Rules counts terminations and removals by "role event rule".
	Rules map[string]int
	// Exclusions counts named, known limitations that an invariant skips.
	Exclusions map[string]int
	// Violations describe each invariant broken, with the seed and a trace.
	Violations []string
}

func newResult() Result {
	return Result{Failed: map[string]int{}, BestEffort: map[string]int{}, Aborts: map[string]int{}, Refused: map[string]int{}, Rules: map[string]int{}, Exclusions: map[string]int{}}
}

// Add merges o into r.
func (r *Result) Add(o Result) {
	r.Seeds += o.Seeds
	r.Submitted += o.Submitted
	r.Delivered += o.Delivered
	r.Redelivery += o.Redelivery
	r.Rereported += o.Rereported
	r.Acked += o.Acked
	r.Crashes += o.Crashes
	r.BackJumps += o.BackJumps
	r.Responses += o.Responses
	r.CachedResponses += o.CachedResponses
	r.ResponsesSeen += o.ResponsesSeen
	r.ResponsesOnOutcome += o.ResponsesOnOutcome
	r.StoreFault += o.StoreFault
	r.WALFaults += o.WALFaults
	r.Events += o.Events
	for _, m := range []struct{ dst, src map[string]int }{{r.Failed, o.Failed}, {r.BestEffort, o.BestEffort}, {r.Aborts, o.Aborts}, {r.Refused, o.Refused}, {r.Rules, o.Rules}, {r.Exclusions, o.Exclusions}} {
		for k, v := range m.src {
			m.dst[k] += v
		}
	}
	r.Violations = append(r.Violations, o.Violations...)
}

// Summary renders the counts, maps sorted.
func (r *Result) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seeds=%d submitted=%d delivered=%d acked=%d redelivered-after-restart=%d rereported-after-restart=%d crashes=%d store-faults=%d events=%d violations=%d\n",
		r.Seeds, r.Submitted, r.Delivered, r.Acked, r.Redelivery, r.Rereported, r.Crashes, r.StoreFault, r.Events, len(r.Violations))
	fmt.Fprintf(&b, "pebble WAL faults: %d, clocks set back: %d\n", r.WALFaults, r.BackJumps)
	fmt.Fprintf(&b, "business responses: answered=%d cached-for-duplicates=%d seen-by-producer=%d on-outcomes=%d\n", r.Responses, r.CachedResponses, r.ResponsesSeen, r.ResponsesOnOutcome)
	for _, m := range []struct {
		name string
		m    map[string]int
	}{{"failed", r.Failed}, {"best-effort", r.BestEffort}, {"operator aborts", r.Aborts}, {"refused", r.Refused}, {"rules", r.Rules}, {"EXCLUDED", r.Exclusions}} {
		keys := make([]string, 0, len(m.m))
		for k := range m.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "%s:", m.name)
		for _, k := range keys {
			fmt.Fprintf(&b, " [%s]=%d", k, m.m[k])
		}
		b.WriteString("\n")
	}
	return b.String()
}
