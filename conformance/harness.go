package conformance

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/memstore"
	"github.com/wsrkit/wsrkit/store/pebblestore"
)

// Mode selects the store under the engines and whether they crash after
// every command.
type Mode int

const (
	// ModeMemory runs over store/memstore.
	ModeMemory Mode = iota
	// ModePebble runs over pebble on an in-memory filesystem.
	ModePebble
	// ModeCrash runs over pebble and crashes and restarts every engine
	// after every command, without a clean close (R89–R93).
	ModeCrash
)

// allModes are the three ways every scenario runs.
var allModes = []Mode{ModeMemory, ModePebble, ModeCrash}

// String names the mode.
func (m Mode) String() string {
	switch m {
	case ModeMemory:
		return "memory"
	case ModePebble:
		return "pebble"
	case ModeCrash:
		return "crash"
	}
	return "mode(?)"
}

// epoch is the scenario instant T.
var epoch = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// maxSteps bounds the timer firings of one advance; an engine whose
// deadline never moves past now would otherwise loop.
const maxSteps = 100000

// node is one RMP: an engine over its store, applied the way rmp.Node does.
type node struct {
	name string
	url  string
	cfg  rmp.Config
	// refuse makes the consumer refuse hand-offs (DeliveryFailed).
	refuse bool
	// respond makes the consumer answer each delivery with a business
	// response (D18, R45).
	respond bool
	st      store.Store
	fs      *pebblestore.MemFS
	e       *rmp.Engine
	token   uint64
	answers map[uint64]rmp.Answer
	// submitted counts submissions, naming default payloads.
	submitted int
	// crashes counts reopenings, naming each pebble directory.
	crashes int
}

// harness runs one scenario in one mode.
type harness struct {
	mode  Mode
	now   time.Time
	nodes map[string]*node
	net   network
	out   strings.Builder
	// stamp prefixes each output line with the instant (during advance).
	stamp bool
	// fatal is set when a store failed; the scenario cannot go on.
	fatal error
}

func newHarness(m Mode) *harness {
	return &harness{mode: m, now: epoch, nodes: map[string]*node{}}
}

// names returns the node names in sorted order.
func (h *harness) names() []string {
	ns := make([]string, 0, len(h.nodes))
	for n := range h.nodes {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

func (h *harness) printf(format string, v ...any) {
	if h.stamp {
		fmt.Fprintf(&h.out, "%s ", h.rel(h.now))
	}
	fmt.Fprintf(&h.out, format, v...)
	h.out.WriteByte('\n')
}

// rel renders t relative to T, to the millisecond.
func (h *harness) rel(t time.Time) string {
	d := t.Sub(epoch).Round(time.Millisecond)
	if d < 0 {
		return "T" + shortDur(d)
	}
	return "T+" + shortDur(d)
}

// shortDur renders d without zero trailing units: 1m, not 1m0s.
func shortDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// exec runs one command and returns its output.
func (h *harness) exec(td *testData) string {
	h.out.Reset()
	h.stamp = false
	if h.fatal != nil {
		return "error: scenario stopped: " + h.fatal.Error() + "\n"
	}
	err := h.dispatch(td)
	if err == nil && h.fatal == nil {
		h.pump()
	}
	if err == nil && h.fatal == nil && h.mode == ModeCrash && td.Cmd != "state" {
		h.stamp = false
		for _, n := range h.names() {
			if err = h.reopen(h.nodes[n], true); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = h.fatal
	}
	if err != nil {
		h.printf("error: %v", err)
	}
	return h.out.String()
}

func (h *harness) node(name string) (*node, error) {
	n, ok := h.nodes[name]
	if !ok {
		return nil, fmt.Errorf("no RMP named %q (create it with rmp name=%s)", name, name)
	}
	return n, nil
}

// nodeByURL returns the node whose endpoint is u, or nil.
func (h *harness) nodeByURL(u string) *node {
	for _, name := range h.names() {
		if h.nodes[name].url == u {
			return h.nodes[name]
		}
	}
	return nil
}

// where names a destination: a node's name, or the URL.
func (h *harness) where(u string) string {
	if n := h.nodeByURL(u); n != nil {
		return n.name
	}
	if p, err := url.Parse(u); err == nil && strings.HasSuffix(p.Host, ".test") {
		return strings.TrimSuffix(p.Host, ".test")
	}
	return u
}

// open creates n's store for the mode and loads its engine.
func (h *harness) open(n *node) error {
	switch h.mode {
	case ModeMemory:
		n.st = memstore.New(memstore.Options{})
	default:
		n.fs = pebblestore.NewMemFS()
		st, err := n.fs.Open("db", pebblestore.Options{})
		if err != nil {
			return err
		}
		n.st = st
	}
	return h.load(n)
}

func (h *harness) load(n *node) error {
	e, err := rmp.LoadEngine(n.cfg, n.st)
	if err != nil {
		return fmt.Errorf("%s: load: %w", n.name, err)
	}
	n.e = e
	n.answers = map[uint64]rmp.Answer{}
	h.drain(n)
	return nil
}

// reopen restarts n from its store: cleanly (Close, then open again), or
// as after a crash (the store is abandoned; pebble recovers a crash clone
// of its filesystem, memstore keeps what Apply made durable).
func (h *harness) reopen(n *node, crash bool) error {
	switch {
	case n.fs == nil:
		// memstore: every applied batch is what a crash leaves.
	case crash:
		n.crashes++
		clone := n.fs.CrashClone(50, uint64(n.crashes))
		st, err := clone.Open("db", pebblestore.Options{})
		if err != nil {
			return fmt.Errorf("%s: reopen after crash: %w", n.name, err)
		}
		// The abandoned store is closed only to free its memory; the
		// clone was taken before.
		_ = n.st.Close()
		n.fs, n.st = clone, st
	default:
		if err := n.st.Close(); err != nil {
			return fmt.Errorf("%s: close: %w", n.name, err)
		}
		st, err := n.fs.Open("db", pebblestore.Options{})
		if err != nil {
			return fmt.Errorf("%s: reopen: %w", n.name, err)
		}
		n.st = st
	}
	return h.load(n)
}

// drain applies every Ready of n until none is left: Persist first, then
// events, answers, sends (to the network), deliveries and outcomes.
func (h *harness) drain(n *node) {
	for h.fatal == nil && n.e.HasReady() {
		rd := n.e.Ready()
		if err := n.st.Apply(rd.Persist); err != nil {
			h.fatal = fmt.Errorf("%s: store: %w", n.name, err)
			return
		}
		n.e.Advance()
		for _, ev := range rd.Events {
			h.printEvent(n, ev)
		}
		for _, a := range rd.Answers {
			a.Body = append([]byte(nil), a.Body...)
			n.answers[a.Token] = a
		}
		for _, o := range rd.Sends {
			o.Post.Body = append([]byte(nil), o.Post.Body...)
			h.net.queue = append(h.net.queue, flight{from: n.name, out: o})
		}
		taken := false // the hand-off before, for a run (Delivery.InRun)
		for _, d := range rd.Deliver {
			if d.InRun && !taken {
				// Never reaches the consumer (D14, R49): handed back,
				// it waits for its turn.
				h.printf("%s: hand back %s", n.name, deliveryRef(d))
				n.e.Returned(h.now, d.Ref)
				continue
			}
			h.printDelivery(n, d)
			if taken = !n.refuse; !taken {
				n.e.DeliveryFailed(h.now, d.Ref)
				continue
			}
			if n.respond {
				n.e.Respond(h.now, d.Ref, []byte("<ack-of>"+payloadText(d.Payload)+"</ack-of>"))
			}
			n.e.Taken(h.now, d.Ref)
		}
		for _, o := range rd.Notify {
			h.printOutcome(n, o)
			n.e.OutcomeHandled(h.now, o.ID)
		}
	}
}

// tickDue ticks every node whose deadline has come, and reports whether any
// did.
func (h *harness) tickDue() bool {
	any := false
	for _, name := range h.names() {
		n := h.nodes[name]
		if d, ok := n.e.NextDeadline(); ok && !d.After(h.now) {
			n.e.Tick(h.now)
			h.drain(n)
			any = true
		}
	}
	return any
}

// advanceTo moves virtual time to target, firing every engine timer and
// every delayed network delivery that falls due, in time order.
func (h *harness) advanceTo(target time.Time) error {
	if target.Before(h.now) {
		return fmt.Errorf("time cannot go back (now %s, target %s)", h.rel(h.now), h.rel(target))
	}
	h.stamp = true
	for steps := 0; h.fatal == nil; steps++ {
		if steps > maxSteps {
			return errors.New("timers keep firing without time moving: an engine deadline is stuck")
		}
		next, ok := h.nextEvent()
		if !ok || next.After(target) {
			break
		}
		if next.After(h.now) {
			h.now = next
		}
		h.net.releaseDue(h)
		h.tickDue()
		h.pump()
	}
	h.now = target
	return nil
}

// nextEvent returns the earliest engine deadline or delayed delivery.
func (h *harness) nextEvent() (time.Time, bool) {
	var best time.Time
	found := false
	for _, name := range h.names() {
		if d, ok := h.nodes[name].e.NextDeadline(); ok && (!found || d.Before(best)) {
			best, found = d, true
		}
	}
	if d, ok := h.net.nextRelease(); ok && (!found || d.Before(best)) {
		best, found = d, true
	}
	return best, found
}

// outcomeRef renders a sending-side message reference.
func refText(r sender.MessageRef) string {
	if r.Singleton {
		return r.GroupID
	}
	return fmt.Sprintf("%s#%d", r.GroupID, r.Number)
}
