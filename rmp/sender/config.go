package sender

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// RetryPolicy is a per-agreement resend schedule (D26, A18). The first
// transmission happens at submit; MaxRetries resends follow, the first
// Interval after the first transmission, each next one Backoff times the
// previous, capped at MaxInterval, each ±Jitter (a fraction). None is ever
// sent after the message's ExpiryTime (D10).
type RetryPolicy struct {
	Interval    time.Duration
	Backoff     float64
	MaxInterval time.Duration
	Jitter      float64
	MaxRetries  int
}

// DefaultRetryPolicy returns D26's defaults: 5 s, ×2, cap 5 min, ±10 %, 10.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{Interval: 5 * time.Second, Backoff: 2, MaxInterval: 5 * time.Minute, Jitter: 0.1, MaxRetries: 10}
}

func (p RetryPolicy) validate() error {
	switch {
	case p.Interval <= 0:
		return errors.New("retry interval must be positive")
	case math.IsNaN(p.Backoff) || p.Backoff < 1 || math.IsInf(p.Backoff, 0):
		return errors.New("retry backoff must be a finite factor >= 1")
	case p.MaxInterval < p.Interval:
		return errors.New("retry max interval must be >= interval")
	case math.IsNaN(p.Jitter) || p.Jitter < 0 || p.Jitter >= 1:
		return errors.New("retry jitter must be in [0, 1)")
	case p.MaxRetries < 0:
		return errors.New("max retries must be >= 0")
	}
	return nil
}

// Destination overrides the retry policy and poll interval for one
// destination (D26: "per agreement").
type Destination struct {
	Retry RetryPolicy
	// PollInterval, when non-zero, replaces Config.PollInterval.
	PollInterval time.Duration
	// AckOnDelivery says the receiver there acknowledges a message only
	// once its consumer took it (D8 option): an ack then means delivered,
	// so acknowledged messages are not polled for late faults (D13).
	AckOnDelivery bool
}

// Limits bound what the sender holds; a submission that would exceed one is
// refused with ErrBoundsFull (nothing is accepted and then lost). Zero means
// the default; there is no "unlimited".
type Limits struct {
	// MaxPending / MaxPendingBytes bound unacknowledged messages in total.
	MaxPending      int
	MaxPendingBytes int64
	// MaxPendingPerDest / MaxPendingBytesPerDest bound them per destination.
	MaxPendingPerDest      int
	MaxPendingBytesPerDest int64
	// MaxPendingPerGroup bounds the unacknowledged messages of one group:
	// an abort or termination fails them all in one batch (D16, R28), and
	// the bound keeps that batch within the store's limits by construction
	// (about 3 mutations a message against 65,536).
	MaxPendingPerGroup int
	// MaxPayloadBytes bounds one payload.
	MaxPayloadBytes int
	// MaxGroups bounds the groups held in state (open, or kept for late faults).
	MaxGroups int
	// MaxOutbox bounds outcomes not yet handled by the producer.
	MaxOutbox int
	// MaxOutboxBytes bounds the business responses (Outcome.Response) of
	// outcomes not yet handled: while they hold as much, submissions are
	// refused, as with MaxOutbox. Messages already sent may still add
	// theirs: an acknowledgement is never refused.
	MaxOutboxBytes int64
	// MaxPollRefs bounds the entries of one Poll, each RefToMessageIds
	// counting one plus its ranges as the receiver counts them (R33); more
	// make more Polls, and a group with more ranges is split over refs.
	MaxPollRefs int
	// MaxStringBytes bounds To, GroupKey, ReplyTo and Action.
	MaxStringBytes int
	// MaxStepMutations bounds the mutations the timers one call fires may
	// cause, so that every Persist fits a store batch (store.Limits): Tick
	// stops there and the timers left are due at once for the next call.
	MaxStepMutations int
}

// DefaultLimits are the limits used for zero fields (gateway defaults:
// 100000 pending messages, 1 GiB).
func DefaultLimits() Limits {
	return Limits{
		MaxPending: 100000, MaxPendingBytes: 1 << 30,
		MaxPendingPerDest: 100000, MaxPendingBytesPerDest: 1 << 30, MaxPendingPerGroup: 10000,
		MaxPayloadBytes: 64 << 20, MaxGroups: 1 << 20, MaxOutbox: 1 << 20, MaxOutboxBytes: 1 << 30,
		MaxPollRefs: 1000, MaxStringBytes: 4096, MaxStepMutations: 4096,
	}
}

// Config configures a Sender. Zero fields take their defaults.
type Config struct {
	// InstanceID makes group ids unique across instances: ids are
	// mid:<counter>.<InstanceID>@wsrkit with a persisted counter (R05).
	// Letters, digits, '-', '_' and '.', at most 64 bytes; required.
	InstanceID string
	// Retry is the default policy (zero: DefaultRetryPolicy).
	Retry RetryPolicy
	// Destinations overrides Retry and PollInterval per destination.
	Destinations map[string]Destination
	// PollInterval is how often a PollRequest goes to a destination with
	// unacknowledged Poll-pattern messages (R32); default 5 s.
	PollInterval time.Duration
	// JitterSeed seeds the retry jitter (D26); the same seed gives the same
	// schedule, across restarts too.
	JitterSeed uint64
	// PollIntervalMax caps the late-fault poll interval, which doubles from
	// PollInterval while answers come back clean (poll.go); default the
	// larger of 2 min and PollInterval.
	PollIntervalMax time.Duration
	// LateFaultGrace keeps an acknowledged message's identity for this long
	// after its ExpiryTime, so that a fault sent after the ack (D12, D13) is
	// still mapped to it; late-fault polls that get no answer are given up
	// this long after their window. Default 5 min.
	LateFaultGrace time.Duration
	// LateFaultMargin is the clock skew allowed between the two sides: an
	// acknowledged message is polled for a late fault until its ExpiryTime
	// plus this margin, when the receiver can no longer discard it (D12,
	// D13). Default 30 s.
	LateFaultMargin time.Duration
	// NoLateFaultPolls turns late-fault polling off: only Poll-pattern
	// groups ask about acknowledged numbers, until ExpiryTime plus
	// LateFaultGrace, as their poll answers carry acks anyway.
	NoLateFaultPolls bool
	// DefaultLifetime is the ExpiryTime offset of a submission with neither
	// Expiry nor Lifetime; zero refuses such submissions.
	DefaultLifetime time.Duration
	// Window bounds how many of a group's unacknowledged AckRequested
	// messages are on the wire at once: transmitted, neither acknowledged
	// nor failed. A message submitted beyond it is stored (R21) and waits
	// for its first transmission, in number order, until an ack or a
	// failure frees a place; its retries count from then, and it fails
	// Expired if its ExpiryTime passes first (D10). Zero: no bound.
	Window int
	Limits Limits
}

func (c Config) withDefaults() (Config, error) {
	if err := validInstanceID(c.InstanceID); err != nil {
		return c, err
	}
	if c.Retry == (RetryPolicy{}) {
		c.Retry = DefaultRetryPolicy()
	}
	if err := c.Retry.validate(); err != nil {
		return c, fmt.Errorf("sender: config: %w", err)
	}
	dests := make(map[string]Destination, len(c.Destinations))
	for name, d := range c.Destinations {
		if d.Retry == (RetryPolicy{}) {
			d.Retry = c.Retry
		}
		if err := d.Retry.validate(); err != nil {
			return c, fmt.Errorf("sender: config: destination %q: %w", name, err)
		}
		if d.PollInterval < 0 {
			return c, fmt.Errorf("sender: config: destination %q: negative poll interval", name)
		}
		dests[name] = d
	}
	c.Destinations = dests
	if c.PollInterval == 0 {
		c.PollInterval = 5 * time.Second
	}
	if c.LateFaultGrace == 0 {
		c.LateFaultGrace = 5 * time.Minute
	}
	if c.LateFaultMargin == 0 {
		c.LateFaultMargin = 30 * time.Second
	}
	if c.PollIntervalMax == 0 {
		c.PollIntervalMax = max(2*time.Minute, c.PollInterval)
	}
	if c.Window < 0 {
		return c, errors.New("sender: config: negative window")
	}
	if c.PollInterval < 0 || c.LateFaultGrace < 0 || c.DefaultLifetime < 0 || c.LateFaultMargin < 0 || c.PollIntervalMax < 0 {
		return c, errors.New("sender: config: negative duration")
	}
	d := DefaultLimits()
	l := &c.Limits
	for _, f := range []struct {
		v   *int
		def int
	}{{&l.MaxPending, d.MaxPending}, {&l.MaxPendingPerDest, d.MaxPendingPerDest}, {&l.MaxPendingPerGroup, d.MaxPendingPerGroup}, {&l.MaxPayloadBytes, d.MaxPayloadBytes},
		{&l.MaxGroups, d.MaxGroups}, {&l.MaxOutbox, d.MaxOutbox}, {&l.MaxPollRefs, d.MaxPollRefs}, {&l.MaxStringBytes, d.MaxStringBytes},
		{&l.MaxStepMutations, d.MaxStepMutations}} {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < 0 {
			return c, errors.New("sender: config: negative limit")
		}
	}
	for _, f := range []struct {
		v   *int64
		def int64
	}{{&l.MaxPendingBytes, d.MaxPendingBytes}, {&l.MaxPendingBytesPerDest, d.MaxPendingBytesPerDest}, {&l.MaxOutboxBytes, d.MaxOutboxBytes}} {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < 0 {
			return c, errors.New("sender: config: negative limit")
		}
	}
	return c, nil
}

func validInstanceID(id string) error {
	if id == "" || len(id) > 64 {
		return errors.New("sender: config: InstanceID must be 1..64 bytes")
	}
	for i := 0; i < len(id); i++ {
		b := id[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_' || b == '.') {
			return fmt.Errorf("sender: config: InstanceID %q: only letters, digits, '-', '_' and '.'", id)
		}
	}
	return nil
}

// policy returns the retry policy and poll interval for a destination.
func (c *Config) policy(to string) (RetryPolicy, time.Duration) {
	if d, ok := c.Destinations[to]; ok {
		pi := d.PollInterval
		if pi == 0 {
			pi = c.PollInterval
		}
		return d.Retry, pi
	}
	return c.Retry, c.PollInterval
}

// acksOnDelivery reports whether the receiver at to acks on delivery (D8).
func (c *Config) acksOnDelivery(to string) bool { return c.Destinations[to].AckOnDelivery }
