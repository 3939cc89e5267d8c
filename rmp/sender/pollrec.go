package sender

import (
	"hash/fnv"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// A destination with a poll set stores when its next poll is due, so that a
// recovered Sender polls on the old schedule instead of at once (R32). The
// record lives beside the instance record (group id "", KindMeta) under a
// number ≥ 1 drawn from a hash of the destination, probing past numbers in
// use; the value names the destination, so Recover never relies on the hash.
// It is written when the timer or the backed-off interval moves (once or
// twice per poll) and deleted when the poll set empties: tens of bytes,
// never a payload. The interval is an optional trailing field, present
// when backed off: records written before it decode as not backed off.

const pollRecV1 = 1

func pollRecKey(n uint64) group.Key {
	return group.Key{Role: group.RoleSender, Kind: group.KindMeta, Number: n}
}

// dirtyDest marks d's poll record for finish.
func (s *Sender) dirtyDest(d *destState) {
	if !d.pollDirty {
		d.pollDirty = true
		s.b.dirtyDests = append(s.b.dirtyDests, d)
	}
}

// pollRecMutations writes or deletes the poll records of the destinations
// this input changed: deletions first, so a number freed by one can be
// taken by another in the same batch.
func (s *Sender) pollRecMutations(ms []group.Mutation) []group.Mutation {
	for _, n := range s.stalePollKeys {
		ms = append(ms, group.Mutation{Op: group.OpDelete, Key: pollRecKey(n)})
	}
	s.stalePollKeys = nil
	for _, d := range s.b.dirtyDests {
		if !d.tm.scheduled() && d.pollKey != 0 {
			ms = append(ms, group.Mutation{Op: group.OpDelete, Key: pollRecKey(d.pollKey)})
			delete(s.pollKeys, d.pollKey)
			d.pollKey, d.pollStored, d.everyStored = 0, time.Time{}, 0
		}
	}
	for _, d := range s.b.dirtyDests {
		d.pollDirty = false
		if !d.tm.scheduled() || (d.pollKey != 0 && d.pollStored.Equal(s.timers.at(&d.tm)) && d.everyStored == d.every) {
			continue
		}
		if d.pollKey == 0 {
			d.pollKey = s.freePollKey(d.name)
			s.pollKeys[d.pollKey] = d
		}
		d.pollStored, d.everyStored = s.timers.at(&d.tm), d.every
		ms = append(ms, group.Mutation{Op: group.OpPut, Key: pollRecKey(d.pollKey), Value: encodePollRec(d.name, s.timers.at(&d.tm), d.every)})
	}
	return ms
}

// freePollKey returns the first unused record number from name's hash on.
func (s *Sender) freePollKey(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	n := h.Sum64()
	for n == 0 || s.pollKeys[n] != nil {
		n++
	}
	return n
}

func encodePollRec(name string, at time.Time, every time.Duration) []byte {
	e := group.NewRecordEncoder(make([]byte, 0, 24+len(name)))
	e.Byte(pollRecV1)
	e.Str(name)
	e.Time(at)
	if every > 0 {
		e.Uvarint(uint64(every)) // optional and last
	}
	return e.Encoded()
}

func decodePollRec(b []byte) (storedPoll, error) {
	d := group.NewRecordDecoder(b)
	d.Version(pollRecV1)
	r := storedPoll{name: d.Str(), at: d.Time()}
	if d.Err() == nil && r.name == "" {
		d.Fail("poll record without destination")
	}
	if d.Err() == nil && d.Len() > 0 {
		v := d.Uvarint()
		if v == 0 || v > uint64(maxDuration) {
			d.Fail("bad poll interval")
		}
		r.every = time.Duration(v)
	}
	return r, end(&d, "poll record")
}

// storedPoll is a poll record read by Recover.
type storedPoll struct {
	key   uint64
	name  string
	at    time.Time
	every time.Duration
}

// recoverPolls rebuilds the poll sets from the loaded groups and arms each
// destination's timer at its stored instant (one in the past fires at the
// first Tick: a poll missed while down). A set without a record polls at
// the first Tick; a record without a set is deleted by the next Persist.
func (s *Sender) recoverPolls(recs []storedPoll) {
	for _, g := range s.groups {
		if s.wantsPoll(g) {
			s.dest(g.to).pollGroups[g] = struct{}{}
		}
	}
	for _, r := range recs {
		d := s.dests[r.name]
		if d == nil || len(d.pollGroups) == 0 || d.pollKey != 0 {
			s.stalePollKeys = append(s.stalePollKeys, r.key)
			continue
		}
		d.pollKey, d.pollStored, d.every, d.everyStored = r.key, r.at, r.every, r.every
		s.pollKeys[r.key] = d
		s.timers.set(&d.tm, d, r.at)
	}
	for _, d := range s.dests {
		if len(d.pollGroups) > 0 && !d.tm.scheduled() {
			s.timers.set(&d.tm, d, time.Time{})
		}
	}
}
