package receiver

import (
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// begin resets the per-call buffers. The previous Ready becomes invalid.
func (r *Receiver) begin() {
	r.rd.Persist = r.rd.Persist[:0]
	r.rd.Deliver = r.rd.Deliver[:0]
	r.rd.Callbacks = r.rd.Callbacks[:0]
	r.rd.Events = r.rd.Events[:0]
	r.rd.Reply, r.rd.Response, r.rd.PollAnswer, r.rd.SOAPFault = nil, nil, nil, nil
	r.reply.reset()
}

// finish saves touched groups, schedules them, flushes callbacks and
// returns the Ready.
func (r *Receiver) finish(now time.Time) Ready {
	for _, g := range r.touched {
		g.touched = false
		if g.has(removedBit) {
			continue
		}
		if g.has(metaDirtyBit) {
			g.mark(metaDirtyBit, false)
			r.put(r.key(g, group.KindMeta, 0), r.arena.Keep(encodeMeta(r.arena.Buf(metaSize(g)), g)))
		}
		stored := indexedDeadline(g) // what the store indexes (gstate.deadline)
		r.schedule(g)
		g.trimExtra()
		r.relist(g)
		if at := indexedDeadline(g); !at.Equal(stored) {
			r.rd.Persist = append(r.rd.Persist, group.Mutation{Op: group.OpSetDeadline, Key: r.key(g, group.KindMeta, 0), At: at})
		}
	}
	clear(r.touched)
	r.touched = r.touched[:0]
	r.flushCallbacks(now)
	if r.reply.len() > 0 {
		r.replyV.Entries = r.reply.build(r.replyV.Entries[:0], r.cfg.Dialect)
		r.rd.Reply = &r.replyV
	}
	return r.rd
}

// indexedDeadline is g's deadline as stored: rounded down to the grain and
// clamped into the store's range (group.IndexedDeadline), the zero Time
// when g needs no timer.
func indexedDeadline(g *gstate) time.Time {
	if !g.has(hasDeadlineBit) {
		return time.Time{}
	}
	return group.IndexedDeadline(g.deadline)
}

func (r *Receiver) key(g *gstate, k group.Kind, n uint64) group.Key {
	return group.Key{Role: group.RoleReceiver, GroupID: g.id.GroupID, Generation: g.id.Generation, Kind: k, Number: n}
}

func (r *Receiver) put(k group.Key, v []byte) {
	r.rd.Persist = append(r.rd.Persist, group.Mutation{Op: group.OpPut, Key: k, Value: v})
}

func (r *Receiver) del(k group.Key) {
	r.rd.Persist = append(r.rd.Persist, group.Mutation{Op: group.OpDelete, Key: k})
}

func (r *Receiver) event(e Event) { r.rd.Events = append(r.rd.Events, e) }

// ignored reports an input about a delivery the Receiver does not know.
func (r *Receiver) ignored(ref DeliveryRef, label string) {
	r.event(Event{Kind: EventIgnored, Group: ref.Group, HasNumber: ref.HasNumber, Number: ref.Number, Label: label})
}

func (r *Receiver) numEvent(k EventKind, g *gstate, n uint64, code faults.Code, label string) {
	r.event(Event{Kind: k, Group: g.id, HasNumber: !g.singleton, Number: n, Code: code, Label: label})
}

// putMsg stores a held or pending message record.
func (r *Receiver) putMsg(g *gstate, k group.Kind, n uint64, expiry time.Time, c content) {
	r.put(r.key(g, k, n), r.arena.Keep(encodeMsg(r.arena.Buf(32+len(c.payload)+len(c.action)), expiry, c)))
}

// putFault records n's fault status.
func (r *Receiver) putFault(g *gstate, n uint64, f faultRec) {
	r.put(r.key(g, group.KindReply, n), r.arena.Keep(encodeFault(r.arena.Buf(16), f)))
}

func (r *Receiver) putSeg(g *gstate, s group.Range) {
	r.put(r.key(g, group.KindReceived, s.From), r.arena.Keep(encodeSeg(r.arena.Buf(16), s.To)))
}
