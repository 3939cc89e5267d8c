package sender

import (
	"fmt"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// BatchError is a batch's refusal: submission Index (from 0) was refused
// with Err, and no submission of the batch was applied.
type BatchError struct {
	Index int
	Err   error
}

func (e *BatchError) Error() string { return fmt.Sprintf("submission %d: %v", e.Index, e.Err) }

func (e *BatchError) Unwrap() error { return e.Err }

// batchLoad is what the earlier submissions of a batch will hold once
// applied, for checkBounds; opens and groupPending are about the
// submission being checked.
type batchLoad struct {
	groups, pending int
	bytes           int64
	dests           map[string]destLoad
	opens           bool
	groupPending    int
}

type destLoad struct {
	pending int
	bytes   int64
}

// batchGroup is a group as the earlier submissions of a batch leave it.
type batchGroup struct {
	g                *groupState // nil: opened by the batch
	to, replyTo      string
	flags            group.Flags
	pattern          group.ReplyPattern
	timing           group.Timing
	next             uint64
	pending          int // added by the batch
	closed, existing bool
}

// CheckBatch reports whether Submit would accept every submission of subs
// applied in order, without changing anything: the refusal of the first
// it would refuse, as a *BatchError, or nil. A producer's batch is all or
// nothing (#22): check it, then Submit each in order within one input.
func (s *Sender) CheckBatch(now time.Time, subs []Submission) error {
	now = now.UTC()
	keys := map[string]*batchGroup{}
	load := batchLoad{dests: map[string]destLoad{}}
	for i := range subs {
		sub := subs[i]
		if err := s.checkOne(now, &sub, keys, &load); err != nil {
			return &BatchError{Index: i, Err: err}
		}
	}
	return nil
}

// checkOne is Submit's checks on sub against the sender as the batch so
// far leaves it, and then counts sub into keys and load.
func (s *Sender) checkOne(now time.Time, sub *Submission, keys map[string]*batchGroup, load *batchLoad) error {
	expiry, err := s.check(now, sub)
	if err != nil {
		return err
	}
	vg := keys[sub.GroupKey]
	if sub.GroupKey == "" || vg == nil || vg.closed {
		vg = nil
		if sub.GroupKey != "" && keys[sub.GroupKey] == nil {
			if g := s.openGroup(now, sub.GroupKey); g != nil {
				vg = &batchGroup{g: g, to: g.to, replyTo: g.replyURL(), flags: g.flags, pattern: g.pattern,
					timing: g.life.Timing, next: g.next, existing: true}
			} else if s.abortedKeys[sub.GroupKey] > 0 {
				return fmt.Errorf("%w: key %q: the abort's outcomes are not all handled", ErrGroupAborted, sub.GroupKey)
			}
		}
	}
	load.opens = vg == nil
	if vg != nil && (vg.to != sub.To || vg.flags != sub.Flags || vg.pattern != sub.Pattern || vg.replyTo != sub.ReplyTo || !sameTiming(vg.timing, sub.Timing)) {
		return fmt.Errorf("%w: key %q", ErrGroupParams, sub.GroupKey)
	}
	if vg == nil {
		vg = &batchGroup{to: sub.To, replyTo: sub.ReplyTo, flags: sub.Flags, pattern: sub.Pattern, timing: sub.Timing}
	}
	if err := checkGroupExpiry(expiry, vg.timing); err != nil {
		return err
	}
	load.groupPending = vg.pending
	var g *groupState
	if vg.existing {
		g = vg.g
	}
	if err := s.checkBounds(sub, g, load); err != nil {
		return err
	}
	if load.opens {
		load.groups++
	}
	if sub.Flags.AckRequested {
		size := int64(len(sub.Payload))
		load.pending++
		load.bytes += size
		d := load.dests[sub.To]
		load.dests[sub.To] = destLoad{d.pending + 1, d.bytes + size}
		vg.pending++
	}
	if sub.GroupKey == "" || sub.Last || vg.next == maxNumber {
		vg.closed = true
	} else {
		vg.next++
	}
	if sub.GroupKey != "" {
		keys[sub.GroupKey] = vg
	}
	return nil
}
