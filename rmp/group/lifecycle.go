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
type Lifecycle struct {
	Timing  Timing
	Ordered bool
	// LastActivity is the last message received (receiver) or sent,
	// retries included (sender) (D21, R35).
	LastActivity time.Time
	// MaxExpiry is the maximum ExpiryTime received or sent in the group.
	MaxExpiry time.Time
	// Last is the number of the message with last="true"; valid when HasLast.
	Last    uint64
	HasLast bool
	// Complete: receiver — every number 0..Last received; sender — every
	// sent message acknowledged, faulted or failed (nothing pending).
	Complete bool
	// Blocked: receiver only — an ordered group holding out-of-order
	// messages; t2 does not end it, D14 does (D21).
	Blocked bool

	// Terminated is set once the group expects no new message.
	Terminated   bool
	TerminatedAt time.Time
	Rule         Rule
	// RemoveAt is when the terminated group's state may be removed.
	RemoveAt time.Time
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

// Terminate ends the group at now under rule, removable at removeAt. It
// does nothing when the group is already terminated.
func (l *Lifecycle) Terminate(now time.Time, rule Rule, removeAt time.Time) {
	if l.Terminated {
		return
	}
	if removeAt.Before(now) {
		removeAt = now
	}
	l.Terminated, l.TerminatedAt, l.Rule, l.RemoveAt = true, now, rule, removeAt
}

// idleDeadline is the first instant at which groupMaxIdleDuration has passed.
func (l *Lifecycle) idleDeadline() time.Time {
	return PassDeadline(l.Timing.MaxIdle.AddTo(l.LastActivity))
}

// maxExpiryRemoval is the first instant after every ExpiryTime of the group:
// from then on no copy of its messages can be accepted (D11), so duplicate
// records are no longer needed (D17, R59).
func (l *Lifecycle) maxExpiryRemoval() time.Time { return PassDeadline(l.MaxExpiry) }

// ReceiverAdvance applies the receiving side of D20–D23 at now.
func (l *Lifecycle) ReceiverAdvance(now time.Time) Transition {
	if l.Terminated {
		return Transition{Removable: !now.Before(l.RemoveAt), Rule: l.Rule}
	}
	t := l.Timing
	switch {
	case l.HasLast && l.Complete && !t.None():
		// D22 t3.1: remove per t1 (at groupExpiryTime) or t2 (at max expiry).
		remove := l.maxExpiryRemoval()
		if t.HasExpiry() {
			remove = PassDeadline(t.Expiry)
		}
		l.Terminate(now, RuleT31, remove)
	case l.HasLast && l.Complete:
		// D23 t4.1: remove at max expiry.
		l.Terminate(now, RuleT41, l.maxExpiryRemoval())
	case t.HasExpiry() && Passed(t.Expiry, now):
		// D20 t1 (t3.2 when last was seen): remove as soon as possible.
		l.Terminate(now, l.withLast(RuleT1), now)
	case t.HasMaxIdle && !l.Blocked && !now.Before(l.idleDeadline()):
		// D21 t2 (t3.2 when last was seen); an out-of-order ordered group is
		// left to D14. Keep state until max expiry.
		l.Terminate(now, l.withLast(RuleT2), l.maxExpiryRemoval())
	case t.None() && !l.MaxExpiry.IsZero() && Passed(l.MaxExpiry, now):
		// D23 t4.2 / R58 t0: the max ExpiryTime is the effective expiry.
		rule := RuleT0
		if l.HasLast {
			rule = RuleT42
		}
		l.Terminate(now, rule, now)
	default:
		return Transition{}
	}
	return Transition{Terminated: true, Removable: !now.Before(l.RemoveAt), Rule: l.Rule}
}

func (l *Lifecycle) withLast(r Rule) Rule {
	if l.HasLast {
		return RuleT32
	}
	return r
}

// ReceiverDeadline returns the next instant at which ReceiverAdvance changes
// something, and false when nothing is pending.
func (l *Lifecycle) ReceiverDeadline() (time.Time, bool) {
	if l.Terminated {
		return l.RemoveAt, true
	}
	if l.HasLast && l.Complete {
		return l.LastActivity, true // due at once
	}
	var d deadline
	t := l.Timing
	if t.HasExpiry() {
		d.offer(PassDeadline(t.Expiry))
	}
	if t.HasMaxIdle && !l.Blocked {
		d.offer(l.idleDeadline())
	}
	if t.None() && !l.MaxExpiry.IsZero() {
		d.offer(l.maxExpiryRemoval())
	}
	return d.at, d.ok
}

// SenderAdvance applies the sending side of D20–D23 at now. A sending group
// is removed as soon as it terminates.
func (l *Lifecycle) SenderAdvance(now time.Time) Transition {
	if l.Terminated {
		return Transition{Removable: !now.Before(l.RemoveAt), Rule: l.Rule}
	}
	t := l.Timing
	switch {
	case t.HasExpiry() && Passed(t.Expiry, now):
		l.Terminate(now, RuleT1, now) // D20
	case t.HasMaxIdle && !now.Before(l.idleDeadline()):
		l.Terminate(now, RuleT2, now) // D21, measured from the last send (R35)
	case l.HasLast && l.Complete && !t.None():
		l.Terminate(now, RuleT31, now) // D22
	case l.HasLast && l.Complete:
		l.Terminate(now, RuleT41, now) // D23
	case t.None() && l.Complete && !l.MaxExpiry.IsZero() && Passed(l.MaxExpiry, now):
		// No timing, no last, nothing pending, and every message expired:
		// the receiver is about to forget the group (R58), so the sender
		// must not extend it either.
		l.Terminate(now, RuleT0, now)
	default:
		return Transition{}
	}
	return Transition{Terminated: true, Removable: true, Rule: l.Rule}
}

// SenderDeadline returns the next instant at which SenderAdvance changes
// something, and false when nothing is pending.
func (l *Lifecycle) SenderDeadline() (time.Time, bool) {
	if l.Terminated {
		return l.RemoveAt, true
	}
	if l.HasLast && l.Complete {
		return l.LastActivity, true
	}
	var d deadline
	t := l.Timing
	if t.HasExpiry() {
		d.offer(PassDeadline(t.Expiry))
	}
	if t.HasMaxIdle {
		d.offer(l.idleDeadline())
	}
	if t.None() && l.Complete && !l.MaxExpiry.IsZero() {
		d.offer(l.maxExpiryRemoval())
	}
	return d.at, d.ok
}

// deadline keeps the earliest of the instants offered to it.
type deadline struct {
	at time.Time
	ok bool
}

func (d *deadline) offer(t time.Time) {
	if !d.ok || t.Before(d.at) {
		d.at, d.ok = t, true
	}
}
