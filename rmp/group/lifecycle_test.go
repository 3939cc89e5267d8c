package group

import (
	"reflect"
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

type side int

const (
	receiver side = iota
	sender
)

func (s side) String() string { return [...]string{"receiver", "sender"}[s] }

func (s side) advance(l *Lifecycle, now time.Time) Transition {
	if s == receiver {
		return l.ReceiverAdvance(now)
	}
	return l.SenderAdvance(now)
}

func (s side) deadline(l *Lifecycle) (time.Time, bool) {
	if s == receiver {
		return l.ReceiverDeadline()
	}
	return l.SenderDeadline()
}

// lcCase is one termination rule on one side.
type lcCase struct {
	name string
	side side
	l    Lifecycle
	// fires is the spec instant that must pass (terminate strictly after
	// it); the zero Time means due at once (a completion, D22/D23).
	fires time.Time
	rule  Rule
	// remove is the expected RemoveAt; the zero Time means at termination.
	remove time.Time
}

const (
	second = time.Second
	minute = time.Minute
	hour   = time.Hour
	ns     = time.Nanosecond
)

// life builds a lifecycle whose last message came at t0 with the given max
// ExpiryTime.
func life(timing Timing, maxExpiry time.Time) Lifecycle {
	return Lifecycle{Timing: timing, LastActivity: t0, MaxExpiry: maxExpiry}
}

func withLast(l Lifecycle, last uint64, complete bool) Lifecycle {
	l.Last, l.HasLast, l.Complete = last, true, complete
	return l
}

func blocked(l Lifecycle) Lifecycle {
	l.Ordered, l.Blocked = true, true
	return l
}

func complete(l Lifecycle) Lifecycle { l.Complete = true; return l }

var (
	expiry1h = Timing{Expiry: at(hour)}
	idle30s  = Timing{MaxIdle: Fixed(30 * second), HasMaxIdle: true}
	both     = Timing{Expiry: at(hour), MaxIdle: Fixed(10 * second), HasMaxIdle: true}
)

var lifecycleCases = []lcCase{
	// Receiver.
	{name: "D20 t1", side: receiver, l: life(expiry1h, at(10*minute)), fires: at(hour), rule: RuleT1},
	{name: "D20 t1 keeps state to max expiry if R62 was bypassed", side: receiver,
		l: life(expiry1h, at(2*hour)), fires: at(hour), rule: RuleT1, remove: at(2*hour + ns)},
	{name: "D20 t1 also ends a blocked ordered group", side: receiver,
		l: blocked(life(expiry1h, at(10*minute))), fires: at(hour), rule: RuleT1},
	{name: "D21 t2 keeps state to max expiry", side: receiver, l: life(idle30s, at(minute)),
		fires: at(30 * second), rule: RuleT2, remove: at(minute + ns)},
	{name: "D21 t2 with a calendar duration", side: receiver,
		l:     life(Timing{MaxIdle: Duration{Days: 1}, HasMaxIdle: true}, at(hour)),
		fires: at(24 * hour), rule: RuleT2},
	{name: "D22 t3.1 groupExpiryTime: removed per t1", side: receiver,
		l: withLast(life(expiry1h, at(10*minute)), 7, true), rule: RuleT31, remove: at(hour + ns)},
	{name: "D22 t3.1 groupMaxIdleDuration: removed per t2", side: receiver,
		l: withLast(life(idle30s, at(10*minute)), 7, true), rule: RuleT31, remove: at(10*minute + ns)},
	{name: "D22 t3.1 both (D25): the earlier removal", side: receiver,
		l: withLast(life(both, at(10*minute)), 7, true), rule: RuleT31, remove: at(10*minute + ns)},
	{name: "D22 t3.2 by t1", side: receiver, l: withLast(life(expiry1h, at(10*minute)), 7, false),
		fires: at(hour), rule: RuleT32},
	{name: "D22 t3.2 by t2", side: receiver, l: withLast(life(idle30s, at(minute)), 7, false),
		fires: at(30 * second), rule: RuleT32, remove: at(minute + ns)},
	{name: "D23 t4.1 removed at max expiry", side: receiver,
		l: withLast(life(Timing{}, at(10*minute)), 3, true), rule: RuleT41, remove: at(10*minute + ns)},
	{name: "D23 t4.2 ends when max expiry passes", side: receiver,
		l: withLast(life(Timing{}, at(10*minute)), 3, false), fires: at(10 * minute), rule: RuleT42},
	{name: "R58 t0", side: receiver, l: life(Timing{}, at(10*minute)), fires: at(10 * minute), rule: RuleT0},
	{name: "D25 both, idle first", side: receiver, l: life(both, at(minute)), fires: at(10 * second),
		rule: RuleT2, remove: at(minute + ns)},
	{name: "D25 both, expiry first", side: receiver,
		l:     life(Timing{Expiry: at(5 * second), MaxIdle: Fixed(10 * second), HasMaxIdle: true}, at(4*second)),
		fires: at(5 * second), rule: RuleT1},

	// Sender: every termination removes at once.
	{name: "D20 t1", side: sender, l: life(expiry1h, at(10*minute)), fires: at(hour), rule: RuleT1},
	{name: "D21 t2 from the last send (R35)", side: sender, l: life(idle30s, at(minute)),
		fires: at(30 * second), rule: RuleT2},
	{name: "D21 t2 ignores Blocked", side: sender, l: blocked(life(idle30s, at(minute))),
		fires: at(30 * second), rule: RuleT2},
	{name: "D22 t3.1", side: sender, l: withLast(life(expiry1h, at(10*minute)), 4, true), rule: RuleT31},
	{name: "D22 t3.2 by t1", side: sender, l: withLast(life(expiry1h, at(10*minute)), 4, false),
		fires: at(hour), rule: RuleT32},
	{name: "D22 t3.2 by t2", side: sender, l: withLast(life(idle30s, at(10*minute)), 4, false),
		fires: at(30 * second), rule: RuleT32},
	{name: "D23 t4.1", side: sender, l: withLast(life(Timing{}, at(10*minute)), 4, true), rule: RuleT41},
	{name: "t0 nothing pending", side: sender, l: complete(life(Timing{}, at(10*minute))),
		fires: at(10 * minute), rule: RuleT0},
	{name: "D25 both, idle first", side: sender, l: life(both, at(minute)), fires: at(10 * second), rule: RuleT2},
}

// TestLifecycleRules checks each termination case at the boundary: not at
// one nanosecond before nor exactly at the instant (an instant passes strictly
// after itself), and at one nanosecond after; then removal at RemoveAt.
func TestLifecycleRules(t *testing.T) {
	for _, c := range lifecycleCases {
		t.Run(c.side.String()+"/"+c.name, func(t *testing.T) {
			l := c.l
			dl, ok := c.side.deadline(&l)
			if !ok {
				t.Fatal("no deadline")
			}
			var now time.Time
			if c.fires.IsZero() {
				// Due at once: the deadline has come with the last message.
				if !dl.Equal(l.LastActivity) {
					t.Fatalf("deadline %v, want due at once (%v)", dl, l.LastActivity)
				}
				now = at(3 * second)
			} else {
				if want := c.fires.Add(ns); !dl.Equal(want) {
					t.Fatalf("deadline %v, want %v", dl, want)
				}
				for _, early := range []time.Time{c.fires.Add(-ns), c.fires} {
					if tr := c.side.advance(&l, early); tr != (Transition{}) || l.Terminated {
						t.Fatalf("at %v: %+v, want nothing", early, tr)
					}
				}
				// A fresh copy advanced late terminates under the same rule.
				late := c.l
				if tr := c.side.advance(&late, c.fires.Add(2*ns)); !tr.Terminated || tr.Rule != c.rule {
					t.Fatalf("late: %+v, want %v", tr, c.rule)
				}
				now = c.fires.Add(ns)
			}
			tr := c.side.advance(&l, now)
			if !tr.Terminated || tr.Rule != c.rule || l.Rule != c.rule || !l.Terminated || !l.TerminatedAt.Equal(now) {
				t.Fatalf("at %v: %+v (rule %v), want %v", now, tr, l.Rule, c.rule)
			}
			wantRemove := c.remove
			if wantRemove.IsZero() {
				wantRemove = now
			}
			if !l.RemoveAt.Equal(wantRemove) {
				t.Fatalf("RemoveAt %v, want %v", l.RemoveAt, wantRemove)
			}
			if tr.Removable != !now.Before(wantRemove) {
				t.Fatalf("Removable %v at termination", tr.Removable)
			}
			if d, ok := c.side.deadline(&l); !ok || !d.Equal(l.RemoveAt) {
				t.Fatalf("deadline after termination %v,%v want %v", d, ok, l.RemoveAt)
			}
			if wantRemove.After(now) {
				if tr := c.side.advance(&l, wantRemove.Add(-ns)); tr.Removable || tr.Terminated {
					t.Fatalf("removable early: %+v", tr)
				}
			}
			if tr := c.side.advance(&l, wantRemove); !tr.Removable || tr.Terminated || tr.Rule != c.rule {
				t.Fatalf("at RemoveAt: %+v", tr)
			}
		})
	}
}

// Cases where nothing may ever fire by time alone.
func TestLifecycleNoDeadline(t *testing.T) {
	cases := []struct {
		name string
		side side
		l    Lifecycle
	}{
		{"receiver D21 blocked (D14 is the receiver's own)", receiver, blocked(life(idle30s, time.Time{}))},
		{"receiver no timing, no ExpiryTime seen", receiver, life(Timing{}, time.Time{})},
		{"sender D23 t4.2: pending messages end by expiry first", sender, withLast(life(Timing{}, at(minute)), 2, false)},
		{"sender t0 waits while messages are pending", sender, life(Timing{}, at(minute))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := c.l
			if d, ok := c.side.deadline(&l); ok {
				t.Fatalf("deadline %v", d)
			}
			if tr := c.side.advance(&l, at(1000*hour)); tr != (Transition{}) || l.Terminated {
				t.Fatalf("advance: %+v", tr)
			}
		})
	}
}

// D21: a new message postpones t2; Observe keeps the latest activity and
// the greatest ExpiryTime.
func TestLifecycleObserveMovesIdleDeadline(t *testing.T) {
	l := life(idle30s, at(minute))
	l.Observe(at(20*second), at(5*minute))
	l.Observe(at(10*second), at(2*minute)) // older instant, smaller expiry
	if !l.LastActivity.Equal(at(20*second)) || !l.MaxExpiry.Equal(at(5*minute)) {
		t.Fatalf("Observe: %v %v", l.LastActivity, l.MaxExpiry)
	}
	if d, _ := l.ReceiverDeadline(); !d.Equal(at(50*second + ns)) {
		t.Fatalf("deadline %v", d)
	}
	if !l.IdleDeadline().Equal(at(50*second+ns)) || !l.MaxExpiryRemoval().Equal(at(5*minute+ns)) {
		t.Fatal("IdleDeadline/MaxExpiryRemoval")
	}
	if tr := l.ReceiverAdvance(at(50 * second)); tr.Terminated {
		t.Fatal("terminated at the idle limit itself")
	}
	if tr := l.ReceiverAdvance(at(50*second + ns)); tr.Rule != RuleT2 {
		t.Fatalf("%+v", tr)
	}
	if !(&Lifecycle{}).MaxExpiryRemoval().IsZero() {
		t.Fatal("MaxExpiryRemoval without expiry")
	}
}

// Terminate is idempotent and never schedules removal before termination;
// state machines use it for D14, D16 and operator deletion.
func TestLifecycleTerminate(t *testing.T) {
	l := life(idle30s, at(minute))
	l.Terminate(at(10*second), RuleSenderAbort, at(5*second))
	if !l.Terminated || l.Rule != RuleSenderAbort || !l.RemoveAt.Equal(at(10*second)) {
		t.Fatalf("%+v", l)
	}
	l.Terminate(at(20*second), RuleDeleted, at(hour))
	if l.Rule != RuleSenderAbort || !l.TerminatedAt.Equal(at(10*second)) {
		t.Fatal("second Terminate changed the state")
	}
	if tr := l.SenderAdvance(at(10 * second)); !tr.Removable || tr.Terminated || tr.Rule != RuleSenderAbort {
		t.Fatalf("%+v", tr)
	}
}

// D17: a singleton's id is kept until its ExpiryTime has passed.
func TestSingletonLifecycle(t *testing.T) {
	exp := at(10 * minute)
	l := Singleton(t0, exp)
	if !l.Terminated || l.Rule != RuleSingleton || !l.TerminatedAt.Equal(t0) || !l.MaxExpiry.Equal(exp) {
		t.Fatalf("%+v", l)
	}
	if !SingletonRemoveAt(exp).Equal(exp.Add(ns)) || !l.RemoveAt.Equal(exp.Add(ns)) {
		t.Fatal("removal instant")
	}
	if d, ok := l.ReceiverDeadline(); !ok || !d.Equal(exp.Add(ns)) {
		t.Fatalf("deadline %v", d)
	}
	for _, now := range []time.Time{exp.Add(-ns), exp} {
		if tr := l.ReceiverAdvance(now); tr.Removable {
			t.Fatalf("removable at %v", now)
		}
	}
	if tr := l.ReceiverAdvance(exp.Add(ns)); !tr.Removable || tr.Rule != RuleSingleton {
		t.Fatalf("%+v", tr)
	}
	// Already expired on arrival (refused by D11 anyway): removable at once.
	late := Singleton(at(hour), exp)
	if tr := late.ReceiverAdvance(at(hour)); !tr.Removable {
		t.Fatal("expired singleton kept")
	}
}

func TestRuleString(t *testing.T) {
	want := map[Rule]string{RuleNone: "none", RuleT1: "t1", RuleT2: "t2", RuleT31: "t3.1", RuleT32: "t3.2",
		RuleT41: "t4.1", RuleT42: "t4.2", RuleT0: "t0", RuleOrderAbort: "d14", RuleSenderAbort: "d16",
		RuleDeleted: "deleted", RuleSingleton: "singleton", RuleSingleton + 1: "Rule(?)"}
	for r, s := range want {
		if r.String() != s {
			t.Errorf("%d: %q want %q", r, r.String(), s)
		}
	}
}

// TestLifecycleNoPadding pins the field order: only the struct's tail may
// be padding, since every group of both roles embeds a Lifecycle (memory
// per idle group, BENCHMARKS.md).
func TestLifecycleNoPadding(t *testing.T) {
	ty := reflect.TypeOf(Lifecycle{})
	var end uintptr
	for i := 0; i < ty.NumField(); i++ {
		f := ty.Field(i)
		if f.Offset != end {
			t.Fatalf("%d bytes of padding before Lifecycle.%s", f.Offset-end, f.Name)
		}
		end = f.Offset + f.Type.Size()
	}
	if tail := ty.Size() - end; tail >= uintptr(ty.Align()) {
		t.Fatalf("%d bytes of tail padding, alignment %d", tail, ty.Align())
	}
}
