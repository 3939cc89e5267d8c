package receiver

import (
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// gextra is the part of a group's state that most groups never need: an
// idle ordered group of the Response pattern without faults holds none, so
// it lives behind gstate.x and exists only while some field is set (goal:
// ≤ 512 B per idle open group). Read it through the gstate accessors, which
// see a nil x as all zero; write it through more() or the setters.
type gextra struct {
	// replyTo is the latest ReplyPattern/ReplyTo (Callback pattern).
	replyTo string
	// expiry is a singleton's ExpiryTime.
	expiry time.Time
	// heldMin is the earliest ExpiryTime in buf (valid when buf.Len() > 0).
	heldMin time.Time
	faults  map[uint64]faultRec
	// unreported counts faults with reported false.
	unreported int
	// acks are numbers taken under AckOnDelivery with the Response pattern
	// and AckRequested: no HTTP exchange was open at Taken, so each ack
	// waits for the next Response to a message of this GroupId (D8, D13).
	// Persisted as KindReply records with code 0.
	acks      group.SeqSet
	responses map[uint64][]byte
	// segs are the persisted KindReceived records (From → To) of a
	// sequenced group when they are not exactly received's single run; nil
	// means they are (segs.go).
	segs []group.Range
}

// more returns g's extra state, making it on first use.
func (g *gstate) more() *gextra {
	if g.x == nil {
		g.x = &gextra{}
	}
	return g.x
}

// trimExtra drops g's extra state once nothing in it matters any more.
func (g *gstate) trimExtra() {
	x := g.x
	if x == nil {
		return
	}
	if g.buf.Len() == 0 {
		x.heldMin = time.Time{}
	}
	if x.replyTo == "" && x.expiry.IsZero() && x.heldMin.IsZero() && len(x.faults) == 0 &&
		x.unreported == 0 && x.acks.Empty() && len(x.responses) == 0 && x.segs == nil {
		g.x = nil
	}
}

// noExtra is what a group without extra state reads; never written.
var noExtra gextra

// extra returns g's extra state to read, all zero when g has none; write
// through more() or the setters instead.
func (g *gstate) extra() *gextra {
	if g.x == nil {
		return &noExtra
	}
	return g.x
}

func (g *gstate) replyURL() string { return g.extra().replyTo }

func (g *gstate) setReplyTo(u string) {
	if g.x != nil || u != "" {
		g.more().replyTo = u
	}
}

func (g *gstate) expiryAt() time.Time { return g.extra().expiry }

func (g *gstate) setExpiry(t time.Time) {
	if g.x != nil || !t.IsZero() {
		g.more().expiry = t
	}
}

func (g *gstate) heldMinAt() time.Time { return g.extra().heldMin }

func (g *gstate) setHeldMin(t time.Time) {
	if g.x != nil || !t.IsZero() {
		g.more().heldMin = t
	}
}

// faultMap is g's fault status by number; nil (read-only) when none.
func (g *gstate) faultMap() map[uint64]faultRec { return g.extra().faults }

// putFault records n's fault status in g (D12, D13, D14).
func (g *gstate) putFault(n uint64, fr faultRec) {
	x := g.more()
	if x.faults == nil {
		x.faults = make(map[uint64]faultRec, 1)
	}
	x.faults[n] = fr
}

func (g *gstate) unreportedCount() int { return g.extra().unreported }

// responseMap is g's cached business responses; nil when none.
func (g *gstate) responseMap() map[uint64][]byte { return g.extra().responses }

// putResponse caches n's business response in g (D18).
func (g *gstate) putResponse(n uint64, body []byte) {
	x := g.more()
	if x.responses == nil {
		x.responses = make(map[uint64][]byte, 1)
	}
	x.responses[n] = body
}

// segList is g's explicit received segments; nil when they are implicit.
func (g *gstate) segList() []group.Range { return g.extra().segs }

// hasAcks reports whether acks wait for a Response (D13).
func (g *gstate) hasAcks() bool { return !g.extra().acks.Empty() }
