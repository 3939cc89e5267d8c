package sender

import (
	"errors"
	"fmt"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// Errors returned to the producer by Submit (wrapped with detail).
var (
	// ErrInvalidSubmission: the submission breaks a rule of the protocol
	// (R07, R13, R16, R18, D10) or a limit on its fields; Submit's refusal
	// is a *FieldError naming the field (validate.go).
	ErrInvalidSubmission = errors.New("sender: invalid submission")
	// ErrGroupParams: the key's open group was opened with other
	// destination, flags, timing or reply pattern (R14, R20).
	ErrGroupParams = errors.New("sender: submission does not match its open group")
	// ErrGroupAborted: the key's group was aborted and the outcomes of the
	// abort are not all handled yet (R28, D16); retry once they are.
	ErrGroupAborted = errors.New("sender: group aborted")
	// ErrBoundsFull: accepting the message would exceed a Limit.
	ErrBoundsFull = errors.New("sender: bounds full")
)

// Sender is the sending RMP's state. It is not safe for concurrent use.
type Sender struct {
	cfg Config
	// groups holds every group in state by seq (ids.go); foreign those of
	// them recovered under another instance id, by id.
	groups  map[uint64]*groupState
	foreign map[string]*groupState
	ids     idCache
	// keys maps a producer key to its open group (not closed, terminated
	// or aborted).
	keys map[string]*groupState
	// abortedKeys counts, per key, unhandled outcomes of an abort that
	// blocks it (D16).
	abortedKeys map[string]int
	outbox      map[OutcomeID]*outboxEntry
	// latest maps a message to its newest outcome in the outbox (Message).
	latest map[MessageRef]OutcomeID
	dests  map[string]*destState
	// pollKeys maps the numbers of stored poll records to their
	// destinations; stalePollKeys are records for the next Persist to
	// delete (pollrec.go).
	pollKeys      map[uint64]*destState
	stalePollKeys []uint64
	timers        timerHeap
	// nextGroupSeq and nextOutcome are persisted counters: ids are never
	// reused after a restart (R05, D27).
	nextGroupSeq uint64
	nextOutcome  OutcomeID
	nextPoll     PollID
	pending      int
	pendingBytes int64
	// outboxBytes is the size of the business responses in outbox
	// (MaxOutboxBytes).
	outboxBytes int64
	// pendFree keeps emptied pending maps for reuse (extra.go).
	pendFree group.MapPool[*message]
	// replay: the next Ready re-emits the whole outbox (after Recover).
	replay bool
	// refill are recovered groups with messages waiting for the window,
	// for the next input to transmit (window.go).
	refill []*groupState
	// list indexes the groups in state for pages of groups (listing.go).
	list *Listing

	b batch
	// spare holds the emptied slices of a Ready handed back by Recycle,
	// for the next one.
	spare Ready
	// arena holds the values of Persist, which are never written again
	// (the driver may keep them without a copy).
	arena group.Arena
}

// New returns an empty Sender, or an error for an invalid Config.
func New(cfg Config) (*Sender, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Sender{
		cfg:         cfg,
		groups:      make(map[uint64]*groupState),
		keys:        make(map[string]*groupState),
		abortedKeys: make(map[string]int),
		outbox:      make(map[OutcomeID]*outboxEntry),
		latest:      make(map[MessageRef]OutcomeID),
		dests:       make(map[string]*destState),
		pollKeys:    make(map[uint64]*destState),
	}
	s.timers.inst = cfg.InstanceID
	s.list = s.newListing()
	return s, nil
}

// Submit accepts a message from the producer, stores it and transmits it
// for the first time. The error is for the producer (bad input, aborted
// group, bounds full); a refused submission changes nothing and comes with
// an empty Ready.
func (s *Sender) Submit(now time.Time, sub Submission) (MessageRef, Ready, error) {
	now = now.UTC()
	expiry, err := s.check(now, &sub)
	if err != nil {
		return MessageRef{}, Ready{}, err
	}
	g := s.openGroup(now, sub.GroupKey)
	if g == nil && sub.GroupKey != "" && s.abortedKeys[sub.GroupKey] > 0 {
		return MessageRef{}, Ready{}, fmt.Errorf("%w: key %q: the abort's outcomes are not all handled", ErrGroupAborted, sub.GroupKey)
	}
	timing := sub.Timing
	if g != nil {
		if g.to != sub.To || g.flags != sub.Flags || g.pattern != sub.Pattern || g.replyURL() != sub.ReplyTo || !sameTiming(g.life.Timing, sub.Timing) {
			return MessageRef{}, Ready{}, fmt.Errorf("%w: key %q, group %s", ErrGroupParams, sub.GroupKey, s.idOf(g))
		}
		timing = g.life.Timing
	}
	if err := checkGroupExpiry(expiry, timing); err != nil {
		return MessageRef{}, Ready{}, err
	}
	if err := s.checkBounds(&sub, g, nil); err != nil {
		return MessageRef{}, Ready{}, err
	}

	s.begin()
	if g == nil {
		g = s.newGroup(now, &sub)
	}
	s.touch(g)
	n := g.next
	last := g.singleton || sub.Last || n == maxNumber // D2: close at the sender's maximum
	if last {
		g.set(gClosed, true)
		g.life.HasLast, g.life.Last = !g.singleton, n
		if s.keys[g.key] == g {
			delete(s.keys, g.key)
		}
	} else {
		g.next++
	}
	m := &message{g: g, number: n, last: last, expiry: expiry, action: sub.Action, payload: sub.Payload}
	if g.flags.AckRequested && s.windowFull(g) {
		s.wait(m)
	} else {
		s.transmit(now, m)
	}
	if g.flags.AckRequested {
		s.addPending(g, m)
		s.hold(m)
		s.joinPoll(now, g)
		if m.attempts > 0 {
			s.armRetry(now, m)
		} else {
			s.scheduleMessage(m) // its ExpiryTime (D10)
		}
	}
	return s.ref(g, n), s.finish(now), nil
}

func sameTiming(a, b group.Timing) bool {
	return a.Expiry.Equal(b.Expiry) && a.HasMaxIdle == b.HasMaxIdle && (!a.HasMaxIdle || a.MaxIdle == b.MaxIdle)
}

// check validates a submission against the limits and Validate's rules,
// and returns its ExpiryTime in UTC.
func (s *Sender) check(now time.Time, sub *Submission) (time.Time, error) {
	l := &s.cfg.Limits
	if sub.To == "" {
		return time.Time{}, refuse("to", "", "no destination")
	}
	for _, f := range [...]struct {
		field, v string
	}{{"to", sub.To}, {"group", sub.GroupKey}, {"replyPattern", sub.ReplyTo}, {"action", sub.Action}} {
		if len(f.v) > l.MaxStringBytes {
			return time.Time{}, refuse(f.field, "", fmt.Sprintf("a string field is longer than %d bytes", l.MaxStringBytes))
		}
	}
	if len(sub.Payload) > l.MaxPayloadBytes {
		return time.Time{}, refuse("body", "", fmt.Sprintf("payload of %d bytes exceeds %d", len(sub.Payload), l.MaxPayloadBytes))
	}
	if sub.Pattern == 0 {
		sub.Pattern = group.ReplyResponse
	}
	switch sub.Pattern {
	case group.ReplyResponse, group.ReplyPoll:
	case group.ReplyCallback:
		if sub.ReplyTo == "" {
			return time.Time{}, refuse("replyPattern", "R18", "Callback without ReplyTo")
		}
	default:
		return time.Time{}, refuse("replyPattern", "R17", fmt.Sprintf("unknown reply pattern %d", sub.Pattern))
	}
	return checkRules(now, sub, s.cfg.DefaultLifetime)
}

// openGroup returns the key's open group, or nil when there is none or it
// has ended by now (its termination is then applied by the next Tick; the
// key already opens a new group).
func (s *Sender) openGroup(now time.Time, key string) *groupState {
	if key == "" {
		return nil
	}
	g := s.keys[key]
	if g == nil {
		return nil
	}
	l := g.life
	l.Complete = len(g.pending) == 0
	if l.SenderAdvance(now).Terminated {
		return nil
	}
	return g
}

// checkBounds refuses a submission the bounds have no room for. add is
// what the earlier submissions of a batch will hold once applied (nil for
// one Submit); with it, g == nil may be a group an earlier one opens.
func (s *Sender) checkBounds(sub *Submission, g *groupState, add *batchLoad) error {
	l := &s.cfg.Limits
	newGroup, groupPending := g == nil, 0
	var more batchLoad
	var dl destLoad
	if g != nil {
		groupPending = len(g.pending)
	}
	if add != nil {
		more, dl = *add, add.dests[sub.To]
		newGroup = add.opens
		groupPending += add.groupPending
	}
	if len(s.outbox) >= l.MaxOutbox || s.outboxBytes >= l.MaxOutboxBytes {
		return fmt.Errorf("%w: %d outcomes (%d bytes of business responses) not handled by the producer", ErrBoundsFull, len(s.outbox), s.outboxBytes)
	}
	if newGroup && len(s.groups)+more.groups >= l.MaxGroups {
		return fmt.Errorf("%w: %d groups", ErrBoundsFull, len(s.groups)+more.groups)
	}
	if !sub.Flags.AckRequested {
		return nil
	}
	size := int64(len(sub.Payload))
	if s.pending+more.pending+1 > l.MaxPending || s.pendingBytes+more.bytes+size > l.MaxPendingBytes {
		return fmt.Errorf("%w: %d messages / %d bytes pending", ErrBoundsFull, s.pending+more.pending, s.pendingBytes+more.bytes)
	}
	if !newGroup && groupPending+1 > l.MaxPendingPerGroup {
		name := "opened earlier in the batch"
		if g != nil {
			name = s.idOf(g)
		}
		return fmt.Errorf("%w: %d messages pending in group %s", ErrBoundsFull, groupPending, name)
	}
	if d := s.dests[sub.To]; d != nil || dl.pending > 0 {
		if d != nil {
			dl.pending, dl.bytes = dl.pending+d.pending, dl.bytes+d.bytes
		}
		if dl.pending+1 > l.MaxPendingPerDest || dl.bytes+size > l.MaxPendingBytesPerDest {
			return fmt.Errorf("%w: %d messages / %d bytes pending for %s", ErrBoundsFull, dl.pending, dl.bytes, sub.To)
		}
	} else if 1 > l.MaxPendingPerDest || size > l.MaxPendingBytesPerDest {
		return fmt.Errorf("%w: message does not fit the per-destination bounds", ErrBoundsFull)
	}
	return nil
}

func (s *Sender) newGroup(now time.Time, sub *Submission) *groupState {
	seq := s.nextGroupSeq
	s.nextGroupSeq++
	s.b.instanceDirty = true
	g := &groupState{
		seq: seq, key: sub.GroupKey, singleton: sub.GroupKey == "",
		to: sub.To, flags: sub.Flags, pattern: sub.Pattern,
	}
	g.setReplyTo(sub.ReplyTo)
	g.life.Timing = sub.Timing
	g.life.Ordered = sub.Flags.MessageOrder
	s.groups[g.seq] = g
	if !g.singleton {
		s.keys[g.key] = g
	}
	s.relist(g)
	return g
}

// transmit emits the next transmission of m and counts it as activity of
// its group (R35).
func (s *Sender) transmit(now time.Time, m *message) {
	g := m.g
	s.b.rd.Send = append(s.b.rd.Send, Transmission{
		Ref: s.ref(g, m.number), Attempt: m.attempts, To: g.to, Action: m.action,
		Header: Header{
			GroupID: s.idOf(g), Sequenced: !g.singleton, Number: m.number, Last: m.last && !g.singleton,
			Expiry: m.expiry, Timing: g.life.Timing, Flags: g.flags, Pattern: g.pattern, ReplyTo: g.replyURL(),
		},
		Payload: m.payload,
	})
	if m.attempts > 0 && g.pattern == group.ReplyCallback && !g.has(gCBSuspect) {
		// The callback channel lost or delayed an answer: poll this
		// group's acknowledged numbers too (poll.go, D13).
		g.set(gCBSuspect, true)
		s.joinPoll(now, g)
	}
	m.attempts++
	g.life.Observe(now, m.expiry)
	s.touch(g)
	g.dirty = true
	if g.flags.AckRequested {
		s.dirtyMessage(m) // R21; without AckRequested nothing is stored
	}
}

// armRetry schedules m's next resend after the transmission just made.
func (s *Sender) armRetry(now time.Time, m *message) {
	p, _ := s.cfg.policy(m.g.to)
	m.nextAt = addClamped(now, retryInterval(p, s.cfg.JitterSeed, s.idOf(m.g), m.number, m.attempts))
	s.scheduleMessage(m)
}

// scheduleMessage sets m's timer to its next resend or to just after its
// ExpiryTime, whichever is first (D10).
func (s *Sender) scheduleMessage(m *message) {
	at := group.PassDeadline(m.expiry)
	if !m.finalPoll && m.nextAt.Before(at) {
		at = m.nextAt
	}
	s.timers.set(&m.tm, m, at)
}

// hold counts a new pending message against the bounds.
func (s *Sender) hold(m *message) {
	g := m.g
	size := int64(len(m.payload))
	s.pending++
	s.pendingBytes += size
	d := s.dest(g.to)
	d.pending++
	d.bytes += size
}

func (s *Sender) dest(name string) *destState {
	d := s.dests[name]
	if d == nil {
		d = &destState{name: name, pollGroups: make(map[*groupState]struct{})}
		s.dests[name] = d
	}
	return d
}

// release removes a message from pending, its timer and its bounds.
func (s *Sender) release(m *message) {
	g := m.g
	if m.attempts == 0 && g.extra().waiting > 0 {
		g.x.waiting-- // never transmitted (window.go)
	}
	s.removePending(g, m.number)
	m.done = true
	s.timers.remove(&m.tm)
	size := int64(len(m.payload))
	s.pending--
	s.pendingBytes -= size
	d := s.dests[g.to]
	d.pending--
	d.bytes -= size
	// An acknowledged message keeps its group in the poll set (D13).
	s.leavePoll(g)
	s.dropDest(d)
	s.b.deletedMsgs = append(s.b.deletedMsgs, m)
	s.touch(g)
}

// NextDeadline returns the earliest instant at which Tick has work, and
// false when there is none.
func (s *Sender) NextDeadline() (time.Time, bool) {
	at, _, ok := s.timers.peek()
	return at, ok
}

// Stats are counts for metrics and tests.
type Stats struct {
	Groups       int
	Pending      int
	PendingBytes int64
	Outbox       int
	Timers       int
}

// Stats returns the current counts.
func (s *Sender) Stats() Stats {
	return Stats{Groups: len(s.groups), Pending: s.pending, PendingBytes: s.pendingBytes, Outbox: len(s.outbox), Timers: len(s.timers.items)}
}
