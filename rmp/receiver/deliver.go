package receiver

import (
	"cmp"
	"slices"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// emit hands pending n of g to the consumer when it is due and unexpired
// (D9: never after its ExpiryTime), and reports whether it did. inRun: n
// follows the Delivery emitted just before it in an ordered group's run.
func (r *Receiver) emit(now time.Time, g *gstate, n uint64, inRun bool) bool {
	d, ok := g.pending[n]
	if !ok || d.inFlight || d.retry && now.Before(d.retryAt) || group.Passed(d.expiry, now) {
		return false
	}
	d.inFlight, d.retry = true, false
	d.attempts++
	g.pending[n] = d
	r.rd.Deliver = append(r.rd.Deliver, Delivery{
		Ref:     DeliveryRef{Group: g.id, HasNumber: !g.singleton, Number: n},
		Expiry:  d.expiry,
		Payload: d.payload,
		Action:  d.action,
		Attempt: d.attempts,
		InRun:   inRun,
	})
	return true
}

// pumpOrdered hands out an ordered group's next messages once none is
// outstanding: a run of up to MaxDeliveryRun consecutive due numbers from
// nextTake, so that a later message still waits behind a failed one
// (D14, R49). An outstanding run always starts at nextTake (Taken moves
// it in order), so nextTake in flight means one is.
func (r *Receiver) pumpOrdered(now time.Time, g *gstate) {
	n := g.nextTake
	for i := 0; i < r.cfg.MaxDeliveryRun && r.emit(now, g, n, i > 0) && n != ^uint64(0); i++ {
		n++
	}
}

// pumpAll hands out every due pending message of g, in number order.
func (r *Receiver) pumpAll(now time.Time, g *gstate) {
	if g.ordered() {
		r.pumpOrdered(now, g)
		return
	}
	for _, n := range sortedKeys(g.pending) {
		r.emit(now, g, n, false)
	}
}

func sortedKeys[V any](m map[uint64]V) []uint64 {
	ks := make([]uint64, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, cmp.Compare[uint64])
	return ks
}

func (r *Receiver) lookup(id group.ID) *gstate {
	if f := r.groups[id.GroupID]; f != nil {
		return f.find(id.Generation)
	}
	return nil
}

// inFlight returns the handed-out delivery named by ref; a ref naming no
// delivery in flight is reported ignored with label, and ok is false.
func (r *Receiver) inFlight(ref DeliveryRef, label string) (*gstate, uint64, delivery, bool) {
	g := r.lookup(ref.Group)
	if g != nil && g.singleton != ref.HasNumber {
		n := ref.Number
		if g.singleton {
			n = 0
		}
		if d, ok := g.pending[n]; ok && d.inFlight {
			return g, n, d, true
		}
	}
	r.ignored(ref, label)
	return nil, 0, delivery{}, false
}

// Taken reports that the consumer took responsibility for a delivery: the
// hand-off is complete (R92). Under AckOnDelivery this is the ack point (D8).
func (r *Receiver) Taken(now time.Time, ref DeliveryRef) Ready {
	r.begin()
	g, n, d, ok := r.inFlight(ref, "receiver.taken-unknown")
	if !ok {
		return r.finish(now)
	}
	r.dropPending(g, n)
	r.touch(g)
	if g.ordered() {
		g.nextTake = n + 1
		r.pumpOrdered(now, g)
	}
	if r.cfg.AckOnDelivery && g.flags.AckRequested {
		if _, faulted := g.faultMap()[n]; !faulted {
			r.asyncReply(now, g, replyItem{groupID: g.id.GroupID, sequence: !g.singleton, from: n, to: n}, d.expiry)
		}
	}
	return r.finish(now)
}

// asyncReply sends an ack produced outside the message's own request
// through the group's latest reply pattern: Response → kept in g.acks for
// the next Response to a message of the GroupId (no HTTP exchange is open;
// Ready.Reply stays nil), Callback → ReplyTo, Poll → answered from state.
func (r *Receiver) asyncReply(now time.Time, g *gstate, it replyItem, expiry time.Time) {
	switch g.pattern {
	case group.ReplyResponse:
		if added, err := g.more().acks.Add(it.from); err == nil && added {
			r.putFault(g, it.from, faultRec{}) // code 0: a pending ack
		}
	case group.ReplyCallback:
		r.callback(now, g.replyURL(), it, expiry)
	}
}

// DeliveryFailed reports that the consumer could not take a delivery now; it
// is retried with Config.DeliveryRetry until its ExpiryTime.
func (r *Receiver) DeliveryFailed(now time.Time, ref DeliveryRef) Ready {
	return r.putBack(now, ref, "receiver.failed-unknown", func(g *gstate, n uint64, d *delivery) {
		d.retry, d.retryAt = true, now.Add(r.cfg.DeliveryRetry.Delay(d.attempts))
		r.putHandoffRetry(g, n, d) // a recovered Receiver keeps the schedule
	})
}

// Returned reports that a delivery of a run was not handed to the consumer
// because one before it was not taken (Delivery.InRun): it waits for its
// turn again, as if it had never been handed out, and counts no attempt.
func (r *Receiver) Returned(now time.Time, ref DeliveryRef) Ready {
	return r.putBack(now, ref, "receiver.returned-unknown", func(_ *gstate, _ uint64, d *delivery) { d.attempts-- })
}

// putBack makes the handed-out delivery ref pending again, changed by
// change, and moves its group on; label names a ref in flight nowhere.
func (r *Receiver) putBack(now time.Time, ref DeliveryRef, label string, change func(*gstate, uint64, *delivery)) Ready {
	r.begin()
	g, n, d, ok := r.inFlight(ref, label)
	if !ok {
		return r.finish(now)
	}
	r.touch(g)
	d.inFlight = false
	change(g, n, &d)
	g.pending[n] = d
	r.advanceGroup(now, g)
	return r.finish(now)
}

// Respond caches the consumer's business response to a request-response
// message, returned again with every duplicate under the Response pattern
// (D18, R45). The Receiver keeps body.
func (r *Receiver) Respond(now time.Time, ref DeliveryRef, body []byte) Ready {
	r.begin()
	g := r.lookup(ref.Group)
	n := ref.Number
	if g != nil && g.singleton {
		n = 0
	}
	if g == nil || g.singleton == ref.HasNumber || !g.received.Contains(n) {
		r.ignored(ref, "receiver.respond-unknown")
		return r.finish(now)
	}
	g.putResponse(n, body)
	r.put(r.key(g, group.KindResponse, n), r.arena.Keep(encodeBody(r.arena.Buf(16+len(body)), body)))
	return r.finish(now)
}

// discard records that accepted n of g will never be delivered and reports
// code when AckRequested (D12, D13, D14).
func (r *Receiver) discard(now time.Time, g *gstate, n uint64, expiry time.Time, code faults.Code, label string) {
	r.discardUntil(now, g, n, latest(expiry, now.Add(r.cfg.FaultRetention)), code, label)
}

// discardUntil is discard with the instant up to which a callback carrying
// the fault is retried (R75).
func (r *Receiver) discardUntil(now time.Time, g *gstate, n uint64, until time.Time, code faults.Code, label string) {
	fr := faultRec{code: code, reported: true}
	if g.flags.AckRequested {
		it := replyItem{groupID: g.id.GroupID, sequence: !g.singleton, from: n, to: n, code: code}
		switch g.pattern {
		case group.ReplyResponse:
			fr.reported = false // D13: carried by the next Response of the group
			g.more().unreported++
		case group.ReplyCallback:
			// D13: pushed for FaultRetention at least, as every fault is,
			// even when the state's own retention (an operator delete:
			// the latest ExpiryTime) ends sooner; the outbox entry does
			// not need the group.
			r.callbackUntil(g.replyURL(), it, latest(until, now.Add(r.cfg.FaultRetention)))
		}
	}
	g.putFault(n, fr)
	r.putFault(g, n, fr)
	r.numEvent(EventDiscarded, g, n, code, label)
	r.touch(g)
}

// expiryCode is MessageExpired for an expired message, else GroupAborted (D14).
func expiryCode(expiry, now time.Time) faults.Code {
	if group.Passed(expiry, now) {
		return faults.MessageExpired
	}
	return faults.GroupAborted
}
