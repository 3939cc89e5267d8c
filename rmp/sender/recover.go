package sender

import (
	"fmt"
	"iter"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// Recover rebuilds a Sender from its stored records (RoleSender and
// RoleOutbox, in key order) after a restart (R89, R90): groups, counters,
// pending messages with their retry state, acknowledged runs, the outbox
// and each destination's next poll instant (R32). The next Ready returned by any input re-emits every outcome still
// in the outbox (D27). A record that does not decode, or that belongs to no
// group, is an error wrapping ErrCorrupt; Recover never panics.
func Recover(cfg Config, records iter.Seq2[group.Key, []byte]) (*Sender, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	var inst instanceRec
	var cur *groupState
	var polls []storedPoll
	for k, v := range records {
		if err := s.load(k, v, &inst, &cur, &polls); err != nil {
			return nil, fmt.Errorf("sender: recover %v/%q/%d/%d/%d: %w", k.Role, k.GroupID, k.Generation, k.Kind, k.Number, err)
		}
	}
	s.nextGroupSeq = max(s.nextGroupSeq, inst.nextGroupSeq)
	s.nextOutcome = max(s.nextOutcome, OutcomeID(inst.nextOutcome))
	for _, g := range s.groups {
		s.rebuild(g)
		s.relist(g)
	}
	for _, e := range s.outbox {
		if id, ok := s.latest[e.o.Ref]; !ok || id < e.o.ID {
			s.latest[e.o.Ref] = e.o.ID
		}
		if e.blocksKey {
			s.abortedKeys[e.o.GroupKey]++
		}
	}
	s.recoverPolls(polls)
	s.replay = len(s.outbox) > 0
	return s, nil
}

// load applies one record.
func (s *Sender) load(k group.Key, v []byte, inst *instanceRec, cur **groupState, polls *[]storedPoll) error {
	corrupt := func(what string) error { return fmt.Errorf("%w: %s", ErrCorrupt, what) }
	switch k.Role {
	case group.RoleOutbox:
		if k.Kind != group.KindOutcome || k.GroupID != "" || k.Generation != 0 {
			return corrupt("unexpected outbox key")
		}
		e, err := decodeOutcome(OutcomeID(k.Number), v)
		if err != nil {
			return err
		}
		s.outbox[e.o.ID] = e
		s.outboxBytes += int64(len(e.o.Response))
		s.nextOutcome = max(s.nextOutcome, e.o.ID+1)
		return nil
	case group.RoleSender:
	default:
		return corrupt("not a sender record")
	}
	if k.GroupID == "" {
		if k.Kind == group.KindMeta && k.Generation == 0 && k.Number != 0 {
			r, err := decodePollRec(v)
			r.key = k.Number
			*polls = append(*polls, r)
			return err
		}
		if k != instanceKey {
			return corrupt("unexpected instance key")
		}
		r, err := decodeInstance(v)
		*inst = r
		return err
	}
	if k.Generation != generation {
		return corrupt("unexpected generation")
	}
	g := *cur
	if k.Kind == group.KindMeta {
		if k.Number != 0 {
			return corrupt("meta number")
		}
		g, id, err := decodeMeta(v)
		if err != nil {
			return err
		}
		if id != k.GroupID {
			return corrupt("group id differs from its key")
		}
		if s.group(id) != nil || s.groups[g.seq] != nil {
			return corrupt("group stored twice")
		}
		if id != groupID(s.cfg.InstanceID, g.seq) {
			// Stored under another instance id: keep the id (ids.go).
			g.more().id = id
			if s.foreign == nil {
				s.foreign = make(map[string]*groupState)
			}
			s.foreign[id] = g
		}
		s.groups[g.seq] = g
		s.nextGroupSeq = max(s.nextGroupSeq, g.seq+1)
		*cur = g
		return nil
	}
	if g == nil || s.idOf(g) != k.GroupID {
		return corrupt("record without its group's meta")
	}
	switch k.Kind {
	case group.KindReceived:
		r, err := decodeRun(k.Number, v)
		if err != nil {
			return err
		}
		if n := len(g.acked.rs); n > 0 && g.acked.rs[n-1].To >= r.From {
			return corrupt("overlapping acked runs")
		}
		g.acked.addRange(r)
	case group.KindOutbound:
		if k.Number&retryKeyBit != 0 {
			// Key order puts it after its message's full record.
			m := g.pending[k.Number&^retryKeyBit]
			if m == nil || m.retryStored {
				return corrupt("retry state without its message")
			}
			m.retryStored = true
			return decodeRetry(v, m)
		}
		m, err := decodeOutbound(v)
		if err != nil {
			return err
		}
		if !g.flags.AckRequested || (!g.has(gClosed) && k.Number >= g.next) || (g.has(gClosed) && k.Number > g.life.Last && !g.singleton) ||
			(g.singleton && k.Number != 0) {
			return corrupt("outbound message outside its group")
		}
		m.g, m.number, m.stored = g, k.Number, true
		s.addPending(g, m)
	default:
		return corrupt("unexpected kind")
	}
	return nil
}

// rebuild restores a loaded group's counters, key and timers.
func (s *Sender) rebuild(g *groupState) {
	if g.key != "" && !g.has(gClosed) && !g.has(gAborted) && !g.life.Terminated {
		// Two open groups for one key happen when a key moved on before
		// the old group's termination was applied: the newer one wins.
		if o := s.keys[g.key]; o == nil || o.seq < g.seq {
			s.keys[g.key] = g
		}
	}
	for _, m := range g.pending {
		s.hold(m)
		s.scheduleMessage(m)
		s.recoverWaiting(g, m)
	}
	g.life.Complete = len(g.pending) == 0
	at, ok := g.removeAtTime(), g.life.Terminated
	if !ok {
		at, ok = g.life.SenderDeadline()
		if g.singleton {
			at, ok = time.Time{}, len(g.pending) == 0
		}
	}
	if ok {
		s.timers.set(&g.tm, g, at)
		g.setIndexed(group.IndexedDeadline(at))
	}
}
