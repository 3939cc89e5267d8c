package sender

import (
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// FieldError is a refused submission: the field at fault and the rule it
// breaks. It wraps ErrInvalidSubmission. The gateway answers it as its 400
// with "field" (internal/gateway/submit.go).
type FieldError struct {
	// Field names the field at fault as the gateway's JSON submit API
	// names it: to, group, last, ordered, expiryTime (also for Expiry and
	// Lifetime), groupExpiryTime, groupMaxIdle, replyPattern (also for
	// ReplyTo), action, body (Payload), soap.
	Field string
	// Rule is the D- or R-id broken; "" for a limit or for wsrkit's own
	// rule.
	Rule string
	// Msg says what is wrong; scenario files read it.
	Msg string
}

// Reason is Msg followed by the rule id, if any.
func (e *FieldError) Reason() string {
	if e.Rule == "" {
		return e.Msg
	}
	return e.Msg + " (" + e.Rule + ")"
}

func (e *FieldError) Error() string { return ErrInvalidSubmission.Error() + ": " + e.Reason() }

func (e *FieldError) Unwrap() error { return ErrInvalidSubmission }

func refuse(field, rule, msg string) *FieldError {
	return &FieldError{Field: field, Rule: rule, Msg: msg}
}

// Validate applies the rules a submission must meet by itself, apart
// from the Sender's limits and state: a group for ordering (R07), group
// timing and last; one group timing (R13); an ExpiryTime not passed and
// not after the group's (D10, R16). defaultLifetime stands for
// Config.DefaultLifetime. The error is a *FieldError. Submit applies the
// same rules; a gateway calls Validate to refuse a submission before it
// reaches a Sender.
func Validate(now time.Time, sub Submission, defaultLifetime time.Duration) error {
	now = now.UTC()
	expiry, err := checkRules(now, &sub, defaultLifetime)
	if err != nil {
		return err
	}
	if err := checkGroupExpiry(expiry, sub.Timing); err != nil {
		return err
	}
	return nil
}

// checkRules applies Validate's rules but R16, normalises sub's group
// timing to UTC and returns its ExpiryTime in UTC.
func checkRules(now time.Time, sub *Submission, defaultLifetime time.Duration) (time.Time, error) {
	if sub.GroupKey == "" {
		switch {
		case sub.Flags.MessageOrder:
			return time.Time{}, refuse("ordered", "R07", "MessageOrder needs a group")
		case !sub.Timing.None():
			f := "groupExpiryTime"
			if sub.Timing.HasMaxIdle {
				f = "groupMaxIdle"
			}
			return time.Time{}, refuse(f, "", "group timing needs a group")
		case sub.Last:
			return time.Time{}, refuse("last", "", "last needs a group")
		}
	}
	t := sub.Timing
	if t.HasExpiry() && t.HasMaxIdle {
		return time.Time{}, refuse("groupMaxIdle", "R13", "both groupExpiryTime and groupMaxIdleDuration")
	}
	if t.HasMaxIdle && (t.MaxIdle.Negative || t.MaxIdle.IsZero()) {
		return time.Time{}, refuse("groupMaxIdle", "", "groupMaxIdleDuration must be positive")
	}
	if t.HasExpiry() {
		sub.Timing.Expiry = t.Expiry.UTC()
	}
	var expiry time.Time
	switch {
	case !sub.Expiry.IsZero():
		expiry = sub.Expiry.UTC()
	case sub.Lifetime > 0:
		expiry = now.Add(sub.Lifetime)
	case sub.Lifetime < 0:
		return time.Time{}, refuse("expiryTime", "", "negative lifetime")
	case defaultLifetime > 0:
		expiry = now.Add(defaultLifetime)
	default:
		return time.Time{}, refuse("expiryTime", "", "no ExpiryTime or lifetime")
	}
	if group.Passed(expiry, now) {
		return time.Time{}, refuse("expiryTime", "D10", "ExpiryTime "+expiry.Format(time.RFC3339Nano)+" has passed")
	}
	return expiry, nil
}

// checkGroupExpiry refuses a message that would expire after its group
// (R16, D10): timing is the submission's own, or its open group's.
func checkGroupExpiry(expiry time.Time, timing group.Timing) error {
	if timing.HasExpiry() && expiry.After(timing.Expiry) {
		return refuse("expiryTime", "R16", "ExpiryTime "+expiry.Format(time.RFC3339Nano)+
			" after groupExpiryTime "+timing.Expiry.Format(time.RFC3339Nano))
	}
	return nil
}
