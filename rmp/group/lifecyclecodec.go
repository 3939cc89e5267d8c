package group

// The stored Lifecycle: the one encoding of its fields that rmp/sender's
// and rmp/receiver's group meta records write (record codec primitives).
// A meta record writes it in two parts, with its own fields between them:
//
//	Timing:      instant Expiry | bool HasMaxIdle | Duration MaxIdle
//	Termination: instant LastActivity | instant MaxExpiry | last
//	             | bool Terminated | instant TerminatedAt
//	             | Rule (a uvarint, one byte) | instant RemoveAt
//
// where last is, by the record's LastOrder, bool HasLast then uvarint Last
// (receiver) or uvarint Last then bool HasLast (sender): the two records
// were written so before this codec was shared, and must not change.
// Ordered is the group's MessageOrder flag, stored with the flags;
// Complete and Blocked are derived again on recovery.

// LastOrder is where a meta record puts HasLast relative to Last.
type LastOrder uint8

const (
	// HasLastFirst: bool HasLast, then uvarint Last (receiver meta).
	HasLastFirst LastOrder = iota
	// LastFirst: uvarint Last, then bool HasLast (sender meta).
	LastFirst
)

// Timing appends t.
func (e *RecordEncoder) Timing(t Timing) {
	e.Time(t.Expiry)
	e.Bool(t.HasMaxIdle)
	e.Duration(t.MaxIdle)
}

// Timing reads what RecordEncoder.Timing wrote.
func (d *RecordDecoder) Timing() Timing {
	var t Timing
	t.Expiry = d.Time()
	t.HasMaxIdle = d.Bool()
	t.MaxIdle = d.Duration()
	return t
}

// Termination appends l's activity and termination fields, Last and
// HasLast in order o.
func (e *RecordEncoder) Termination(l *Lifecycle, o LastOrder) {
	e.Time(l.LastActivity)
	e.Time(l.MaxExpiry)
	if o == LastFirst {
		e.Uvarint(l.Last)
		e.Bool(l.HasLast)
	} else {
		e.Bool(l.HasLast)
		e.Uvarint(l.Last)
	}
	e.Bool(l.Terminated)
	e.Time(l.TerminatedAt)
	// A Rule is below 128: its uvarint is the one byte the sender wrote
	// as a byte.
	e.Uvarint(uint64(l.Rule))
	e.Time(l.RemoveAt)
}

// Termination reads what RecordEncoder.Termination wrote in order o into
// l, refusing an unknown Rule.
func (d *RecordDecoder) Termination(l *Lifecycle, o LastOrder) {
	l.LastActivity = d.Time()
	l.MaxExpiry = d.Time()
	if o == LastFirst {
		l.Last = d.Uvarint()
		l.HasLast = d.Bool()
	} else {
		l.HasLast = d.Bool()
		l.Last = d.Uvarint()
	}
	l.Terminated = d.Bool()
	l.TerminatedAt = d.Time()
	rule := d.Uvarint()
	if rule > uint64(RuleSingleton) {
		d.Fail("rule")
	}
	l.Rule = Rule(rule)
	l.RemoveAt = d.Time()
}
