package group

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	jan31 := time.Date(2024, 1, 31, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		d    Duration
		from time.Time
		want time.Time
	}{
		{Fixed(90 * time.Second), jan31, jan31.Add(90 * time.Second)},
		{Fixed(-time.Hour), jan31, jan31.Add(-time.Hour)},
		{Duration{Months: 1}, jan31, time.Date(2024, 3, 2, 10, 0, 0, 0, time.UTC)}, // Go's AddDate normalisation
		{Duration{Years: 1, Days: 1, Clock: time.Minute}, jan31, time.Date(2025, 2, 1, 10, 1, 0, 0, time.UTC)},
		{Duration{Negative: true, Days: 1, Clock: time.Hour}, jan31, time.Date(2024, 1, 30, 9, 0, 0, 0, time.UTC)},
		// D3: computed in UTC whatever the zone of the instant.
		{Duration{Days: 1}, jan31.In(time.FixedZone("x", 5*3600)), jan31.AddDate(0, 0, 1)},
	}
	for i, c := range cases {
		got := c.d.AddTo(c.from)
		if !got.Equal(c.want) || got.Location() != time.UTC {
			t.Errorf("%d: %v + %+v = %v, want %v", i, c.from, c.d, got, c.want)
		}
	}
	if !(Duration{}).IsZero() || Fixed(time.Second).IsZero() || (Duration{Days: 1}).IsZero() || !Fixed(0).IsZero() {
		t.Error("IsZero")
	}
	if d := Fixed(-time.Second); !d.Negative || d.Clock != time.Second {
		t.Errorf("Fixed(-1s) = %+v", d)
	}
}

func TestTimingAndPassed(t *testing.T) {
	if !(Timing{}).None() || (Timing{}).HasExpiry() {
		t.Error("empty timing")
	}
	if (Timing{Expiry: t0}).None() || !(Timing{Expiry: t0}).HasExpiry() || (Timing{HasMaxIdle: true}).None() {
		t.Error("timing with a parameter")
	}
	if Passed(t0, t0) || Passed(t0, t0.Add(-ns)) || !Passed(t0, t0.Add(ns)) {
		t.Error("Passed: an instant passes strictly after itself (D9)")
	}
	if d := PassDeadline(t0); !d.Equal(t0.Add(ns)) || !Passed(t0, d) || Passed(t0, d.Add(-ns)) {
		t.Error("PassDeadline is the first instant at which Passed holds")
	}
}

func TestReplyPattern(t *testing.T) {
	for _, p := range []ReplyPattern{ReplyResponse, ReplyCallback, ReplyPoll} {
		got, ok := ParseReplyPattern(p.String())
		if !ok || got != p {
			t.Errorf("round trip of %v", p)
		}
	}
	if ReplyPattern(0).String() != "" || ReplyPattern(9).String() != "" {
		t.Error("unknown pattern has a wire value")
	}
	for _, s := range []string{"", "response", "POLL", "Callback "} {
		if _, ok := ParseReplyPattern(s); ok {
			t.Errorf("ParseReplyPattern(%q) accepted (R17: case-sensitive)", s)
		}
	}
}

func TestRoleString(t *testing.T) {
	want := map[Role]string{RoleReceiver: "receiver", RoleSender: "sender", RoleOutbox: "outbox", 0: "Role(?)", 9: "Role(?)"}
	for r, s := range want {
		if r.String() != s {
			t.Errorf("%d: %q", r, r.String())
		}
	}
}
