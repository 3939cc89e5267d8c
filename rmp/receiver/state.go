package receiver

import (
	"container/heap"
	"slices"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// delivery is an accepted message not yet taken by the consumer.
// content is what a message carries to the consumer: its payload and the
// action it was sent with (SOAPAction, or the SOAP 1.2 action parameter),
// which a service may dispatch on (SOAP 1.1 §6.1.1, WS-I BP R2744).
type content struct {
	payload []byte
	action  string
}

// size is what content counts against the D15 byte bounds.
func (c content) size() int { return len(c.payload) + len(c.action) }

type delivery struct {
	expiry time.Time
	content
	// inFlight: handed out, awaiting Taken or DeliveryFailed.
	inFlight bool
	attempts int
	// retryAt is when a failed (or recovered) hand-off is due again; the
	// zero Time with retry set means due at once.
	retryAt time.Time
	retry   bool
	// retryStored: a kindHandoffRetry record holds attempts and retryAt.
	retryStored bool
}

// faultRec is the fault status of one number (D12, D13, D14).
type faultRec struct {
	code faults.Code
	// reported: a Response-pattern fault already carried by a Response
	// (D13); Callback and Poll faults are reported when recorded.
	reported bool
}

// gstate is the state of one group generation. Its size is a goal (≤ 512 B
// per idle open group with everything it owns, see BENCHMARKS.md): fields
// most groups never set live in x (extra.go); keep the rest in this order,
// which leaves no padding.
type gstate struct {
	id group.ID
	// peer opened the generation (MaxGroupsPerPeer); nil for none.
	peer *peerCount
	lc   group.Lifecycle
	// received holds every accepted number: held, pending, taken or
	// discarded (D17, D24). Singletons hold {0}.
	received group.SeqSet
	// buf is the ordering buffer of an ordered group (unused otherwise);
	// its Next is the next number to accept in order.
	buf orderBuf
	// pending: accepted, not yet taken; nil when empty (pending.go). In an
	// ordered group its numbers are exactly nextTake..buf.Next()-1.
	pending map[uint64]delivery
	// nextTake is an ordered group's next number to hand to the consumer.
	nextTake uint64
	// x holds what few groups need; nil when all of it is zero.
	x *gextra
	// deadline is the next instant Tick has work for this group (valid when
	// hasDeadline). Between calls the store indexes indexedDeadline(g):
	// finish persists every change (ready.go).
	deadline time.Time
	// heapIdx is g's index in Receiver.heap, -1 when not scheduled,
	// inCarry while in Receiver.carry (tick.go).
	heapIdx int32
	// listSlot is g's summary in Receiver.list; 0 when not listed.
	listSlot int32
	flags    group.Flags
	pattern  group.ReplyPattern
	// singleton: a message without SequenceNum (D1).
	singleton bool
	// bigPending: pending held more than 8 entries since it was taken, so
	// it is not reused once empty (group.MapPool).
	bigPending bool
	touched    bool
	// bits: plainZeroBit, hasDeadlineBit, metaDirtyBit, removedBit.
	bits gbits
}

// gbits packs four of gstate's flags into a byte, so that gstate stays in
// the 352-byte size class (TestGroupStateSize).
type gbits = group.Bits

const (
	// plainZeroBit: number 0 arrived without timing attributes, so the
	// group has none (A6).
	plainZeroBit gbits = 1 << iota
	// hasDeadlineBit: deadline is valid.
	hasDeadlineBit
	metaDirtyBit
	removedBit
)

// has reports whether every flag of b is set.
func (g *gstate) has(b gbits) bool { return g.bits.Has(b) }

// mark sets or clears the flags of b.
func (g *gstate) mark(b gbits, on bool) { g.bits.Set(b, on) }

func (g *gstate) ordered() bool { return g.flags.MessageOrder && !g.singleton }

// deleted reports whether an operator deleted g with Abort: it is hidden
// from listings and kept only to answer for its discarded messages.
func (g *gstate) deleted() bool { return g.lc.Terminated && g.lc.Rule == group.RuleDeleted }

// family is every generation of one GroupId with state, oldest first.
type family struct {
	gens   []*gstate
	maxGen uint64
}

func (f *family) current() *gstate {
	if len(f.gens) == 0 {
		return nil
	}
	return f.gens[len(f.gens)-1]
}

func (f *family) find(gen uint64) *gstate {
	for _, g := range f.gens {
		if g.id.Generation == gen {
			return g
		}
	}
	return nil
}

// deadlineHeap orders group generations by deadline.
type deadlineHeap []*gstate

func (h deadlineHeap) Len() int           { return len(h) }
func (h deadlineHeap) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h deadlineHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = int32(i), int32(j)
}
func (h *deadlineHeap) Push(x any) {
	g := x.(*gstate)
	g.heapIdx = int32(len(*h))
	*h = append(*h, g)
}
func (h *deadlineHeap) Pop() any {
	old := *h
	g := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	g.heapIdx = -1
	return g
}

// Receiver is the receiving RMP state machine.
type Receiver struct {
	cfg    Config
	groups map[string]*family
	// states counts group generations with state (MaxGroups).
	states int
	// peers counts them by the peer that opened them (MaxGroupsPerPeer).
	peers map[string]*peerCount
	// heldCount and heldBytes total the ordering buffers (D15).
	heldCount, heldBytes int
	heap                 deadlineHeap
	// carry holds the due generations a Tick left at the budget, by id
	// (tick.go); carryAt is the earliest of their deadlines then.
	carry   []*gstate
	carryAt time.Time
	out     outbox
	// list indexes the listed generations for pages of groups (listing.go).
	list *Listing

	// Per-call buffers, reused; a Ready is valid until the next call.
	rd Ready
	// pendFree keeps emptied pending maps for reuse (pending.go).
	pendFree group.MapPool[delivery]
	// arena holds the values of Persist, which are never written again
	// (the driver keeps them without a copy).
	arena   group.Arena
	touched []*gstate
	reply   replyBuilder
	replyV  Reply
}

// New returns an empty Receiver.
func New(cfg Config) (*Receiver, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Receiver{cfg: c, groups: map[string]*family{}, peers: map[string]*peerCount{}, out: newOutbox(),
		list: group.NewListing(compareListed)}, nil
}

func (r *Receiver) newState(id group.ID) *gstate {
	g := &gstate{
		id:      id,
		heapIdx: -1,
	}
	g.received.SetMaxRanges(r.cfg.MaxRangesPerGroup)
	return g
}

// addState registers g as the newest generation of its family.
func (r *Receiver) addState(g *gstate) {
	f := r.groups[g.id.GroupID]
	if f == nil {
		f = &family{}
		r.groups[g.id.GroupID] = f
	}
	f.gens = append(f.gens, g)
	slices.SortFunc(f.gens, func(a, b *gstate) int { return cmpU64(a.id.Generation, b.id.Generation) })
	f.maxGen = max(f.maxGen, g.id.Generation)
	r.states++
	if g.peer != nil {
		g.peer.groups++
	}
	r.relist(g)
}

// dropState forgets g (its records are deleted by the caller).
func (r *Receiver) dropState(g *gstate) {
	g.mark(removedBit, true)
	r.relist(g)
	if g.heapIdx >= 0 {
		heap.Remove(&r.heap, int(g.heapIdx))
	}
	r.heldCount -= g.buf.Len() // 0 unless ordered
	r.heldBytes -= g.buf.Bytes()
	f := r.groups[g.id.GroupID]
	if f != nil {
		f.gens = slices.DeleteFunc(f.gens, func(x *gstate) bool { return x == g })
		if len(f.gens) == 0 {
			delete(r.groups, g.id.GroupID)
		}
	}
	r.states--
	if p := g.peer; p != nil {
		if p.groups--; p.groups <= 0 {
			delete(r.peers, p.name)
		}
	}
}

// touch marks g to be saved and rescheduled when the call finishes.
func (r *Receiver) touch(g *gstate) {
	if !g.touched {
		g.touched = true
		r.touched = append(r.touched, g)
	}
}

func (r *Receiver) dirty(g *gstate) {
	g.mark(metaDirtyBit, true)
	r.touch(g)
}

// schedule recomputes g's deadline and keeps the heap in step.
func (r *Receiver) schedule(g *gstate) {
	at, ok := r.groupDeadline(g)
	g.deadline = at
	g.mark(hasDeadlineBit, ok)
	switch {
	case g.heapIdx == inCarry: // the next Tick looks at its deadline
	case ok && g.heapIdx < 0:
		heap.Push(&r.heap, g)
	case ok:
		heap.Fix(&r.heap, int(g.heapIdx))
	case g.heapIdx >= 0:
		heap.Remove(&r.heap, int(g.heapIdx))
	}
}

// groupDeadline is the next instant at which Tick has work for g.
func (r *Receiver) groupDeadline(g *gstate) (time.Time, bool) {
	var d earliest
	if unfinished(g) {
		d.offer(group.MinIndexedDeadline()) // at once (budget.go)
	}
	if g.singleton {
		if len(g.pending) == 0 {
			d.offer(r.singletonRemoveAt(g))
		} else {
			d.offer(group.PassDeadline(g.expiryAt()))
		}
	} else {
		g.lc.Blocked = g.ordered() && g.buf.Len() > 0
		if g.lc.Terminated {
			if at, ok := r.removeAt(g); ok {
				d.offer(at)
			}
		} else if at, ok := g.lc.ReceiverDeadline(); ok {
			d.offer(at)
		}
		if g.buf.Len() > 0 {
			d.offer(group.PassDeadline(g.heldMinAt()))
		}
	}
	for n, p := range g.pending {
		if p.inFlight {
			continue
		}
		d.offer(group.PassDeadline(p.expiry))
		if p.retry && (!g.ordered() || n == g.nextTake) {
			d.offer(p.retryAt)
		}
	}
	return d.at, d.ok
}

// earliest keeps the earliest instant offered.
type earliest struct {
	at time.Time
	ok bool
}

func (d *earliest) offer(t time.Time) {
	if !d.ok || t.Before(d.at) {
		d.at, d.ok = t, true
	}
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// NextDeadline returns when Tick must next be called, and false when no
// timer is needed. A deadline at or before now (for example the zero Time
// after Recover, for hand-offs to redo) means at once.
func (r *Receiver) NextDeadline() (time.Time, bool) {
	var d earliest
	if len(r.heap) > 0 {
		d.offer(r.heap[0].deadline)
	}
	if len(r.carry) > 0 {
		d.offer(r.carryAt)
	}
	if at, ok := r.out.deadline(); ok {
		d.offer(at)
	}
	if len(r.out.staleKeys) > 0 {
		d.offer(group.MinIndexedDeadline()) // at once (budget.go)
	}
	return d.at, d.ok
}
