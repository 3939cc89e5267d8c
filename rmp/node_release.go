package rmp

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"time"

	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// release hands out the effects of a committed Ready, in order (package
// doc, rules 3 to 6): answers, sends, deliveries, outcomes. The committer
// calls it once the Ready's Persist is durable.
func (n *Node) release(rd *Ready) {
	if len(rd.Answers) > 0 || len(rd.Deliver) > 0 {
		n.mu.Lock()
		for _, d := range rd.Deliver {
			n.handing[d.Ref]++ // before the answers: a copy's may wait for it
		}
		for _, a := range rd.Answers {
			ch, ok := n.answers[a.Token]
			if !ok {
				continue
			}
			delete(n.answers, a.Token)
			if a.Await != nil && (!a.AwaitLater || n.cfg.AwaitDelivery > 0 || n.handing[*a.Await] > 0) {
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
		if n.sends.add(o) {
			n.startSend(o)
		}
	}
	for i := 0; i < len(rd.Deliver); {
		run := deliveryRun{first: rd.Deliver[i]}
		j := i + 1
		for j < len(rd.Deliver) && rd.Deliver[j].InRun {
			j++
		}
		if j > i+1 {
			run.more = slices.Clone(rd.Deliver[i+1 : j]) // the Ready is recycled
		}
		i = j
		h := fnv.New32a()
		h.Write([]byte(run.first.Ref.Group.GroupID))
		n.workers[int(h.Sum32()%uint32(len(n.workers)))] <- run
	}
	for _, o := range rd.Notify {
		n.notifyQ <- o
	}
	for _, ev := range rd.Events {
		n.logEvent(ev)
	}
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
	for ref, w := range n.awaiting {
		for ; w != nil; w = w.next {
			w.release()
		}
		delete(n.awaiting, ref)
	}
}

// maxIdleSenders bounds the sender goroutines that wait for more work
// (startSend); the node's sends in flight are not bounded by it.
const maxIdleSenders = 128

// startSend hands o to an idle sender goroutine, or starts one. A sender
// outlives its exchanges so that the next finds its stack grown: a
// goroutine per POST grew a new stack through net/http and the reply's
// parse each time, then died (#22). Only a sender waiting now takes o:
// a send never waits behind another's.
func (n *Node) startSend(o Outbound) {
	select {
	case n.idleQ <- o:
	default:
		n.workerWG.Add(1)
		go n.sender(o)
	}
}

// sender sends o and what follows it (sendFrom), then waits for the next
// Outbound while fewer than maxIdleSenders wait; it ends with the node's
// context.
func (n *Node) sender(o Outbound) {
	defer n.workerWG.Done()
	for {
		n.sendFrom(o)
		if n.idleSenders.Add(1) > maxIdleSenders {
			n.idleSenders.Add(-1)
			return
		}
		select {
		case o = <-n.idleQ:
			n.idleSenders.Add(-1)
		case <-n.ctx.Done():
			n.idleSenders.Add(-1)
			return
		}
	}
}

// sendFrom sends o and then the POSTs queued behind it for its
// destination (sendQueue).
func (n *Node) sendFrom(o Outbound) {
	for ok := true; ok; o, ok = n.sends.next(o.Post.URL) {
		n.send(o)
	}
}

// send makes one POST, off the loop, and posts the result back (rule 4).
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
	n.post(sentInput{o.Ref, res, err})
}

// deliveryRun is one hand-off, or an ordered group's run of them
// (receiver.Config.MaxDeliveryRun): first, then more, each InRun.
type deliveryRun struct {
	first Delivery
	more  []Delivery
}

// errReturned releases the answers waiting for a delivery handed back
// without reaching the consumer.
var errReturned = errors.New("rmp: delivery handed back: one before it in its run was not taken")

// deliverLoop is one delivery worker: it hands its groups' messages to the
// consumer in order and posts each result back (rule 5; R92: a hand-off is
// recorded as taken only after Deliver returned). In a run, the deliveries
// after one that was not taken are handed back unseen (D14, R49); those
// taken are posted one by one, and the loop records them in one commit
// when they come together.
func (n *Node) deliverLoop(ch chan deliveryRun) {
	defer n.workerWG.Done()
	for {
		select {
		case run := <-ch:
			taken := n.deliver(run.first)
			for i, d := range run.more {
				if !taken {
					n.handBack(run.more[i:])
					break
				}
				taken = n.deliver(d)
			}
		case <-n.ctx.Done():
			return
		}
	}
}

// deliver hands d to the consumer and posts the result; true when it was
// taken.
func (n *Node) deliver(d Delivery) bool {
	resp, err := n.cfg.Consumer.Deliver(n.ctx, d)
	ref := d.Ref
	n.completeAnswer(ref, resp, err)
	if errors.Is(err, ErrDeferred) {
		return false
	}
	if err != nil {
		n.log.Debug("delivery refused", "group", ref.Group.GroupID, "number", ref.Number, "err", err)
		n.post(refusedInput{ref})
		return false
	}
	n.post(takenInput{ref, resp})
	return true
}

// handBack reports the deliveries of a run that never reached the consumer.
func (n *Node) handBack(ds []Delivery) {
	for _, d := range ds {
		n.completeAnswer(d.Ref, nil, errReturned)
		n.post(returnedInput{d.Ref})
	}
}

// awaitingAnswer is an HTTP answer held until its message's consumer
// returned, so that a business response can ride on it (R73). Several
// answers may wait for one delivery (copies of a held message).
type awaitingAnswer struct {
	ch    chan Answer
	a     Answer
	timer *time.Timer     // AwaitLater: sends a as it is after AwaitDelivery
	next  *awaitingAnswer // the next one waiting for the same delivery: a list, not a slice per delivery (#22)
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
// AwaitDelivery, unless that delivery is being handed to the consumer now:
// a copy of a message whose hand-off is in progress (its sender resent it
// while the consumer was working) waits for that hand-off as the original's
// answer does, since it ends by itself — without it the copy's ack went
// alone, and the producer, acknowledged, never got its business response.
func (n *Node) await(ref receiver.DeliveryRef, ch chan Answer, a Answer) {
	w := &awaitingAnswer{ch: ch, a: a}
	if a.AwaitLater && n.cfg.AwaitDelivery > 0 && n.handing[ref] == 0 {
		w.timer = time.AfterFunc(n.cfg.AwaitDelivery, func() {
			n.mu.Lock()
			found := n.unlinkAwaiting(ref, w)
			n.mu.Unlock()
			if found {
				w.ch <- w.a
			}
		})
	}
	p := n.awaiting[ref]
	if p == nil {
		n.awaiting[ref] = w
		return
	}
	for p.next != nil {
		p = p.next
	}
	p.next = w
}

// unlinkAwaiting takes w out of ref's list, with mu held; false when it
// is not there (its delivery's end took the list first).
func (n *Node) unlinkAwaiting(ref receiver.DeliveryRef, w *awaitingAnswer) bool {
	p := n.awaiting[ref]
	if p == w {
		if w.next == nil {
			delete(n.awaiting, ref)
		} else {
			n.awaiting[ref] = w.next
		}
		return true
	}
	for ; p != nil; p = p.next {
		if p.next == w {
			p.next = w.next
			return true
		}
	}
	return false
}

// completeAnswer releases the answers waiting for ref, with the consumer's
// business response as their Body when it gave one.
func (n *Node) completeAnswer(ref receiver.DeliveryRef, resp []byte, err error) {
	n.mu.Lock()
	w := n.awaiting[ref]
	delete(n.awaiting, ref)
	if n.handing[ref]--; n.handing[ref] <= 0 {
		delete(n.handing, ref)
	}
	n.mu.Unlock()
	for ; w != nil; w = w.next { // a list no longer in the map: nobody changes it
		if err == nil {
			w.send(w.a.WithBusinessResponse(resp))
			continue
		}
		w.release()
	}
}

// notifyLoop hands outcomes to the producer's handler, in batches when it
// takes them, retrying with back-off, and posts the handled ones back
// (rule 6, D27).
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
					n.post(handledInput{ids})
					batch = batch[handled:]
				}
				if err == nil {
					continue
				}
				n.log.Warn("outcome handler failed; retrying", "group", batch[0].Ref.GroupID, "err", err)
				t := n.clk.NewTimer(delay)
				select {
				case <-t.C():
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
