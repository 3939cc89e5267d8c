package sender

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// TestFieldErrors: every refusal of a submission by itself is a
// *FieldError naming the gateway's JSON field and the rule; Validate
// refuses what Submit refuses, with the same error, and accepts what it
// accepts.
func TestFieldErrors(t *testing.T) {
	ge := t0.Add(time.Hour)
	idle := group.Timing{HasMaxIdle: true, MaxIdle: group.Fixed(time.Minute)}
	cases := []struct {
		sub         Submission
		field, rule string
		validate    bool // Validate sees it too (not a limit or a pattern)
	}{
		{Submission{Flags: group.Flags{MessageOrder: true}}, "ordered", "R07", true},
		{Submission{GroupKey: "k", Timing: group.Timing{Expiry: ge, HasMaxIdle: true, MaxIdle: group.Fixed(time.Minute)}}, "groupMaxIdle", "R13", true},
		{Submission{GroupKey: "k", Timing: group.Timing{Expiry: ge}, Expiry: ge.Add(time.Second)}, "expiryTime", "R16", true},
		{Submission{GroupKey: "k", Timing: group.Timing{Expiry: ge}, Lifetime: 2 * time.Hour}, "expiryTime", "R16", true},
		{Submission{Expiry: t0.Add(-time.Nanosecond)}, "expiryTime", "D10", true},
		{Submission{Timing: group.Timing{Expiry: ge}}, "groupExpiryTime", "", true},
		{Submission{Timing: idle}, "groupMaxIdle", "", true},
		{Submission{Last: true}, "last", "", true},
		{Submission{GroupKey: "k", Timing: group.Timing{HasMaxIdle: true}}, "groupMaxIdle", "", true},
		{Submission{Lifetime: -time.Second}, "expiryTime", "", true},
		{Submission{Pattern: group.ReplyCallback}, "replyPattern", "R18", false},
		{Submission{Pattern: 9}, "replyPattern", "R17", false},
		{Submission{Action: strings.Repeat("a", 5000)}, "action", "", false},
		{Submission{GroupKey: strings.Repeat("k", 5000)}, "group", "", false},
		{Submission{Payload: make([]byte, 6)}, "body", "", false},
	}
	cfg := testConfig()
	cfg.Limits.MaxPayloadBytes = 5
	h := newHarness(t, cfg)
	for _, c := range cases {
		err := h.submitErr(c.sub)
		var fe *FieldError
		if !errors.As(err, &fe) || !errors.Is(err, ErrInvalidSubmission) {
			t.Fatalf("%+v: got %v, want a *FieldError", c.sub, err)
		}
		if fe.Field != c.field || fe.Rule != c.rule {
			t.Errorf("%+v: field %q rule %q, want %q %q (%v)", c.sub, fe.Field, fe.Rule, c.field, c.rule, err)
		}
		if c.rule != "" && !strings.HasSuffix(err.Error(), "("+c.rule+")") {
			t.Errorf("%v: the message does not cite %s", err, c.rule)
		}
		sub := c.sub
		sub.To = "http://r.example/rmp"
		verr := Validate(t0, sub, h.cfg.DefaultLifetime)
		switch {
		case c.validate && (verr == nil || verr.Error() != err.Error()):
			t.Errorf("%+v: Validate says %v, Submit %v", c.sub, verr, err)
		case !c.validate && verr != nil:
			t.Errorf("%+v: Validate refuses what only the Sender checks: %v", c.sub, verr)
		}
	}
	ok := Submission{To: "http://r.example/rmp", GroupKey: "k", Last: true, Flags: group.Flags{MessageOrder: true}, Timing: idle}
	if err := Validate(t0, ok, time.Hour); err != nil {
		t.Errorf("a valid submission: %v", err)
	}
	h.submit(ok)
}
