package group

import "time"

// Rule names the termination or removal rule that ended a group (D20–D23,
// D14, D16). Its String is the stable label scenarios print.
type Rule uint8

const (
	RuleNone Rule = iota
	// RuleT1: groupExpiryTime passed (D20).
	RuleT1
	// RuleT2: groupMaxIdleDuration passed since the last message (D21).
	RuleT2
	// RuleT31: last received (sender: last sent), the group had timing, and
	// the group is complete (D22).
	RuleT31
	// RuleT32: last received, the group had timing, incomplete; it ended by
	// its t1 or t2 criterion (D22).
	RuleT32
	// RuleT41: last received, no timing, complete (D23).
	RuleT41
	// RuleT42: last received, no timing, incomplete; max expiry passed (D23).
	RuleT42
	// RuleT0: neither timing parameter nor last: the max ExpiryTime is the
	// group's effective expiry (R58, digest §6.3 t0).
	RuleT0
	// RuleOrderAbort: an ordered group whose earliest held ExpiryTime passed
	// (D14) at the receiver.
	RuleOrderAbort
	// RuleSenderAbort: an ordered group terminated at the sender after a
	// message failed or expired (D16).
	RuleSenderAbort
	// RuleDeleted: removed by an operator.
	RuleDeleted
	// RuleSingleton: a singleton's id kept until its ExpiryTime (D17).
	RuleSingleton
)

var ruleNames = [...]string{
	RuleNone:        "none",
	RuleT1:          "t1",
	RuleT2:          "t2",
	RuleT31:         "t3.1",
	RuleT32:         "t3.2",
	RuleT41:         "t4.1",
	RuleT42:         "t4.2",
	RuleT0:          "t0",
	RuleOrderAbort:  "d14",
	RuleSenderAbort: "d16",
	RuleDeleted:     "deleted",
	RuleSingleton:   "singleton",
}

func (r Rule) String() string {
	if int(r) < len(ruleNames) {
		return ruleNames[r]
	}
	return "Rule(?)"
}

// Lifecycle is the part of a group's state that decides when it terminates
// and when its state may be removed. The same type serves the receiving and
// the sending side; the Receiver* and Sender* methods apply each side's
// rules of D20–D23.
//
// Protocol: on every input at now, call Advance(now) first (a deadline may
// have passed before the input), then Observe the message, update Last,
// Complete and Blocked, and call Advance(now) again; set the
// driver's timer to Deadline(). Termination fires for the earliest due rule
// ("first to fire wins", D25), so the result does not depend on how late
// Advance is called.
type Lifecycle struct {
	Timing Timing
	// LastActivity is the last message received (receiver) or sent,
	// retries included (sender) (D21, R35).
	LastActivity time.Time
	// MaxExpiry is the maximum ExpiryTime received or sent in the group; the
	// zero Time means none seen.
	MaxExpiry time.Time
	// TerminatedAt is when Terminated was set.
	TerminatedAt time.Time
	// RemoveAt is when the terminated group's state may be removed; never
	// before TerminatedAt.
	RemoveAt time.Time
	// Last is the number of the message with last="true"; valid when HasLast.
	Last uint64

	// The one-byte fields close the struct, which leaves no padding
	// between fields (memory per idle group is a goal, BENCHMARKS.md).

	Ordered bool
	HasLast bool
	// Complete: receiver — every number 0..Last received; sender — every
	// sent message acknowledged, faulted or failed (nothing pending).
	Complete bool
	// Blocked: receiver only — an ordered group holding out-of-order
	// messages; t2 does not end it, D14 does (D21). The receiver applies
	// D14 itself from its ordering buffer's earliest held expiry, so the
	// Lifecycle keeps none (24 bytes of every group on both sides).
	Blocked bool
	// Terminated is set once the group expects no new message.
	Terminated bool
	// Rule is why the group terminated; valid when Terminated.
	Rule Rule
}

// Transition says what an Advance call changed.
type Transition struct {
	// Terminated is true when the group terminated in this call.
	Terminated bool
	// Removable is true when the group is terminated and its state may be
	// removed now.
	Removable bool
	Rule      Rule
}

// Observe records a message received (receiver) or sent (sender) at now with
// the given ExpiryTime: it refreshes LastActivity and MaxExpiry.
func (l *Lifecycle) Observe(now, expiry time.Time) {
	if now.After(l.LastActivity) {
		l.LastActivity = now
	}
	if expiry.After(l.MaxExpiry) {
		l.MaxExpiry = expiry
	}
}

// Terminate ends the group at now under rule, removable at removeAt (now if
// removeAt is earlier). It does nothing when the group is already
// terminated. State machines call it for the rules they detect themselves:
// RuleOrderAbort, RuleSenderAbort (D16), RuleDeleted.
func (l *Lifecycle) Terminate(now time.Time, rule Rule, removeAt time.Time) {
	if l.Terminated {
		return
	}
	if removeAt.Before(now) {
		removeAt = now
	}
	l.Terminated, l.TerminatedAt, l.Rule, l.RemoveAt = true, now, rule, removeAt
}

// IdleDeadline is the first instant at which groupMaxIdleDuration has passed
// since LastActivity: the idle time must exceed the duration (D21).
func (l *Lifecycle) IdleDeadline() time.Time {
	return PassDeadline(l.Timing.MaxIdle.AddTo(l.LastActivity))
}

// MaxExpiryRemoval is the first instant after every ExpiryTime of the group:
// from then on no copy of its messages can be accepted (D11), so duplicate
// records are no longer needed (D17, R59). It is the zero Time when no
// ExpiryTime was seen.
func (l *Lifecycle) MaxExpiryRemoval() time.Time {
	if l.MaxExpiry.IsZero() {
		return time.Time{}
	}
	return PassDeadline(l.MaxExpiry)
}

// event is one termination rule that is due at an instant.
type event struct {
	at   time.Time
	rule Rule
	// remove is the removal instant (raised to the termination instant by
	// Terminate).
	remove time.Time
}

// events keeps the earliest event offered; ties go to the first offered.
type events struct {
	e  event
	ok bool
}

func (es *events) offer(e event) {
	if !es.ok || e.at.Before(es.e.at) {
		es.e, es.ok = e, true
	}
}

// completion reports the t3.1/t4.1 event of a group that is complete and
// whose last number is known: due at once (D22, D23).
func (l *Lifecycle) completion() (Rule, bool) {
	if !l.HasLast || !l.Complete {
		return RuleNone, false
	}
	if l.Timing.None() {
		return RuleT41, true
	}
	return RuleT31, true
}

// withLast labels a t1/t2 termination t3.2 when last was seen (D22).
func (l *Lifecycle) withLast(r Rule) Rule {
	if l.HasLast {
		return RuleT32
	}
	return r
}

// laterOf returns the later of two instants.
func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// receiverNext returns the receiving side's next termination event. A due
// completion (t3.1/t4.1) comes first; otherwise the earliest of t1, t2, D14
// and t0/t4.2, ties in that order.
func (l *Lifecycle) receiverNext() (event, bool) {
	t := l.Timing
	if rule, ok := l.completion(); ok {
		// D22 t3.1: remove per t1 (groupExpiryTime passed) or t2 (max
		// expiry passed); with both, the earlier (D25). D23 t4.1: per t2.
		// Never before max expiry (R59).
		remove := l.MaxExpiryRemoval()
		if t.HasExpiry() && !t.HasMaxIdle {
			remove = laterOf(PassDeadline(t.Expiry), remove)
		}
		return event{at: l.LastActivity, rule: rule, remove: remove}, true
	}
	var es events
	if t.HasExpiry() {
		// D20 t1: remove as soon as possible; a late duplicate cannot be
		// accepted once max expiry passed (R62 keeps it ≤ groupExpiryTime),
		// so the removal instant is raised to it only if R62 was bypassed.
		at := PassDeadline(t.Expiry)
		es.offer(event{at: at, rule: l.withLast(RuleT1), remove: l.MaxExpiryRemoval()})
	}
	if t.HasMaxIdle && !l.Blocked {
		// D21 t2: not for an ordered group that is out of order (D14 governs
		// it); keep the state until max expiry for duplicate checks.
		es.offer(event{at: l.IdleDeadline(), rule: l.withLast(RuleT2), remove: l.MaxExpiryRemoval()})
	}
	if t.None() && !l.MaxExpiry.IsZero() {
		// D23 t4.2 / R58 t0: max ExpiryTime is the effective expiry; the
		// state goes with it.
		rule := RuleT0
		if l.HasLast {
			rule = RuleT42
		}
		es.offer(event{at: l.MaxExpiryRemoval(), rule: rule})
	}
	return es.e, es.ok
}

// ReceiverAdvance applies the receiving side of D20–D23 and D14 at now.
func (l *Lifecycle) ReceiverAdvance(now time.Time) Transition {
	return l.advance(now, l.receiverNext)
}

// ReceiverDeadline returns the next instant at which ReceiverAdvance changes
// something (it may already have passed), and false when nothing is pending.
func (l *Lifecycle) ReceiverDeadline() (time.Time, bool) {
	return l.deadline(l.receiverNext)
}

// senderNext returns the sending side's next termination event; every
// sender termination removes the state at once (D20–D23 sender side).
func (l *Lifecycle) senderNext() (event, bool) {
	t := l.Timing
	if rule, ok := l.completion(); ok {
		// D22 t3.1 / D23 t4.1 (sender: "see t3.1"): last sent and nothing
		// pending.
		return event{at: l.LastActivity, rule: rule}, true
	}
	var es events
	if t.HasExpiry() {
		es.offer(event{at: PassDeadline(t.Expiry), rule: l.withLast(RuleT1)}) // D20
	}
	if t.HasMaxIdle {
		// D21, idle measured from the last send, retries included (R35).
		es.offer(event{at: l.IdleDeadline(), rule: l.withLast(RuleT2)})
	}
	if t.None() && !l.HasLast && l.Complete && !l.MaxExpiry.IsZero() {
		// t0: no timing, no last, nothing pending, and every message
		// expired: the receiver forgets the group then (R58), so the sender
		// must not extend it either. With last sent, pending messages end
		// by expiry (D10) and the group then completes (t4.1).
		es.offer(event{at: l.MaxExpiryRemoval(), rule: RuleT0})
	}
	return es.e, es.ok
}

// SenderAdvance applies the sending side of D20–D23 at now. A sending group
// is removed as soon as it terminates.
func (l *Lifecycle) SenderAdvance(now time.Time) Transition {
	return l.advance(now, l.senderNext)
}

// SenderDeadline returns the next instant at which SenderAdvance changes
// something (it may already have passed), and false when nothing is pending.
func (l *Lifecycle) SenderDeadline() (time.Time, bool) {
	return l.deadline(l.senderNext)
}

func (l *Lifecycle) advance(now time.Time, next func() (event, bool)) Transition {
	if l.Terminated {
		return Transition{Removable: !now.Before(l.RemoveAt), Rule: l.Rule}
	}
	e, ok := next()
	if !ok || now.Before(e.at) {
		return Transition{}
	}
	l.Terminate(now, e.rule, e.remove)
	return Transition{Terminated: true, Removable: !now.Before(l.RemoveAt), Rule: l.Rule}
}

func (l *Lifecycle) deadline(next func() (event, bool)) (time.Time, bool) {
	if l.Terminated {
		return l.RemoveAt, true
	}
	e, ok := next()
	return e.at, ok
}

// Singleton returns the receiving side's lifecycle of a singleton (a message
// without SequenceNum, D1) received at now with the given ExpiryTime: it is
// terminated at once (no other message can join it) under RuleSingleton,
// and its id is kept for duplicate checks until its ExpiryTime has passed
// (D17, R59).
func Singleton(now, expiry time.Time) Lifecycle {
	l := Lifecycle{HasLast: true, Complete: true}
	l.Observe(now, expiry)
	l.Terminate(now, RuleSingleton, SingletonRemoveAt(expiry))
	return l
}

// SingletonRemoveAt returns when a singleton's id may be forgotten: the first
// instant after its ExpiryTime (D17).
func SingletonRemoveAt(expiry time.Time) time.Time { return PassDeadline(expiry) }
