package receiver

import (
	"errors"
	"fmt"
	"iter"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// Recover rebuilds a Receiver from its stored records: the RoleReceiver
// records of a store scan, in key order (R91, R93). Hand-offs in flight at
// the crash (not confirmed by Taken) are handed out again at the next Tick,
// which NextDeadline makes due at once (R92); refused ones wait for their
// stored retry instant, and callback URLs keep their stored back-off (R75).
func Recover(cfg Config, records iter.Seq2[group.Key, []byte]) (*Receiver, error) {
	r, err := New(cfg)
	if err != nil {
		return nil, err
	}
	var g *gstate
	for k, v := range records {
		if err := r.recoverRecord(&g, k, v); err != nil {
			return nil, fmt.Errorf("receiver: record %v/%q/%d/%d/%d: %w", k.Role, k.GroupID, k.Generation, k.Kind, k.Number, err)
		}
	}
	r.finishRecoveredURLs()
	for _, f := range r.groups {
		for _, g := range f.gens {
			if err := r.finishRecovered(g); err != nil {
				return nil, fmt.Errorf("receiver: group %q/%d: %w", g.id.GroupID, g.id.Generation, err)
			}
		}
	}
	return r, nil
}

var errRecord = errors.New("unexpected record")

func (r *Receiver) recoverRecord(cur **gstate, k group.Key, v []byte) error {
	if k.Role != group.RoleReceiver {
		return errRecord
	}
	if k.GroupID == "" {
		if k.Generation == 0 && k.Kind == group.KindMeta && k.Number != 0 {
			return r.recoverURLState(k.Number, v)
		}
		if k.Generation != 0 || k.Kind != group.KindReply || k.Number == 0 {
			return errRecord
		}
		e := &cbEntry{seq: k.Number}
		if err := decodeEntry(v, e); err != nil {
			return err
		}
		if !usableURL(e.url) || e.groupID == "" {
			return fmt.Errorf("%w: callback entry", ErrCorrupt)
		}
		r.out.enqueue(e)
		r.out.nextSeq = max(r.out.nextSeq, k.Number+1)
		return nil
	}
	id := group.ID{GroupID: k.GroupID, Generation: k.Generation}
	g := *cur
	if g == nil || g.id != id {
		if k.Kind != group.KindMeta || k.Number != 0 {
			return fmt.Errorf("%w: no meta record before it", errRecord)
		}
		if f := r.groups[k.GroupID]; f != nil && f.find(k.Generation) != nil {
			return fmt.Errorf("%w: generation seen twice", errRecord)
		}
		g = r.newState(id)
		g.received.SetMaxRanges(0) // the stored set may predate a smaller limit
		if err := decodeMeta(v, g); err != nil {
			return err
		}
		if g.peer != nil {
			g.peer = r.peerOf(g.peer.name)
		}
		if g.singleton && g.expiryAt().IsZero() {
			return fmt.Errorf("%w: singleton without expiry", ErrCorrupt)
		}
		r.addState(g)
		*cur = g
		return nil
	}
	n := k.Number
	switch k.Kind {
	case group.KindReceived:
		to, err := decodeSeg(v)
		if err != nil {
			return err
		}
		if to < n || g.singleton {
			return fmt.Errorf("%w: received segment", ErrCorrupt)
		}
		s := group.Range{From: n, To: to}
		if err := addSeg(&g.received, s); err != nil {
			return err
		}
		g.more().segs = append(g.more().segs, s)
	case group.KindHeld:
		expiry, c, err := decodeMsg(v)
		if err != nil {
			return err
		}
		if !g.ordered() || !g.buf.Push(group.Held[content]{Number: n, Expiry: expiry, Bytes: c.size(), Item: c}) {
			return fmt.Errorf("%w: held message", ErrCorrupt)
		}
		r.heldCount++
		r.heldBytes += c.size()
	case group.KindDelivery:
		expiry, c, err := decodeMsg(v)
		if err != nil {
			return err
		}
		if g.singleton && n != 0 {
			return fmt.Errorf("%w: singleton delivery", ErrCorrupt)
		}
		// Not confirmed before the restart: hand out again at once (R92).
		r.addPending(g, n, delivery{expiry: expiry, content: c, retry: true})
	case group.KindReply:
		fr, err := decodeFault(v)
		if err != nil {
			return err
		}
		if fr.code == 0 {
			g.more().acks.Add(n) //nolint:errcheck // no limit
			return nil
		}
		g.putFault(n, fr)
		if !fr.reported {
			g.more().unreported++
		}
	case kindHandoffRetry:
		attempts, at, err := decodeHandoffRetry(v)
		if err != nil {
			return err
		}
		d, ok := g.pending[n]
		if !ok || d.retryStored {
			return fmt.Errorf("%w: hand-off retry state without its delivery", ErrCorrupt)
		}
		d.attempts, d.retryAt, d.retryStored = attempts, at, true
		g.pending[n] = d
	case group.KindResponse:
		body, err := decodeBody(v)
		if err != nil {
			return err
		}
		g.putResponse(n, body)
	default:
		return errRecord
	}
	return nil
}

// finishRecovered derives what is not stored and schedules g.
func (r *Receiver) finishRecovered(g *gstate) error {
	if g.singleton {
		g.received.Add(0) //nolint:errcheck // empty set
	}
	for n := range g.pending {
		if !g.received.Contains(n) {
			return fmt.Errorf("%w: delivery of an unreceived number", ErrCorrupt)
		}
	}
	if g.ordered() {
		next, _ := g.buf.Next()
		g.nextTake = next
		for n := range g.pending {
			g.nextTake = min(g.nextTake, n)
		}
		r.recomputeHeldMin(g)
	}
	if g.lc.HasLast {
		g.lc.Complete = g.received.ContainsAll(g.lc.Last)
	}
	implicitSegs(g)
	g.received.SetMaxRanges(r.cfg.MaxRangesPerGroup)
	r.schedule(g) // the store indexed this deadline before the restart
	g.trimExtra()
	r.relist(g)
	return nil
}
