package receiver

import (
	"errors"
	"time"

	"github.com/wsrkit/wsrkit/faults"
)

// Backoff is a retry schedule: the n-th retry waits Initial·Factorⁿ⁻¹,
// capped at Max.
type Backoff struct {
	Initial time.Duration
	// Factor multiplies the wait after each failure; values below 1 count as 1.
	Factor int
	Max    time.Duration
}

// Delay returns the wait before retry number attempt (1 for the first).
func (b Backoff) Delay(attempt int) time.Duration {
	d := b.Initial
	f := max(b.Factor, 1)
	for i := 1; i < attempt && d < b.Max; i++ {
		d *= time.Duration(f)
	}
	return min(d, b.Max)
}

// Config is the receiving RMP's configuration. Zero fields take the
// defaults of DefaultConfig; negative limits are refused by New.
type Config struct {
	// Dialect maps codes on emission (D6).
	Dialect faults.Dialect
	// AckOnDelivery makes an ack mean "taken by the consumer" instead of
	// "durably accepted"; held messages are then not acknowledged (D8).
	AckOnDelivery bool
	// DisableResponse, DisableCallback and DisablePoll refuse a reply
	// pattern with FeatureNotSupported (R64).
	DisableResponse, DisableCallback, DisablePoll bool
	// DisableOrdering refuses MessageOrder with FeatureNotSupported (R64).
	DisableOrdering bool

	// MaxGroups bounds the group generations with state, singletons
	// included (D15: MessageStoreOverflow).
	MaxGroups int
	// MaxRangesPerGroup bounds a group's received-number ranges
	// (group.ErrTooManyRanges → MessageStoreOverflow).
	MaxRangesPerGroup int
	// MaxHeldPerGroup, MaxHeldBytesPerGroup, MaxHeldTotal and
	// MaxHeldBytesTotal bound the ordering buffers (D15).
	MaxHeldPerGroup      int
	MaxHeldBytesPerGroup int
	MaxHeldTotal         int
	MaxHeldBytesTotal    int
	// MaxCallbackBatch bounds the reply entries of one callback POST.
	MaxCallbackBatch int
	// MaxPollRefs bounds the RefToMessageIds of one PollRequest; more is
	// an InvalidPollRequest.
	MaxPollRefs int
	// BindGroupsToPeer refuses a message into a group opened by another
	// verified peer (VerifiedPeerPrefix) with InvalidMessageId
	// (LabelForeignPeer), and answers a PollRequest about such a group as
	// about an unknown one. A group opened by an unverified sender is
	// bound to no one.
	BindGroupsToPeer bool
	// AllowGroup, when set, says whether a sender (Message.Peer,
	// PollRequest.Peer) may use a groupId (the gateway's -peer-allow): a
	// message into another is refused with InvalidMessageId
	// (LabelGroupNotAllowed) in its own answer, nothing stored; a
	// PollRequest reference to one is answered as about an unknown group
	// (LabelPollGroupNotAllowed). It must not block.
	AllowGroup func(peer, groupID string) bool

	// MaxLifetime bounds how far ahead of its arrival a message's
	// ExpiryTime and its group's groupExpiryTime may be, and
	// groupMaxIdleDuration (#18): beyond it the message is refused
	// (InvalidExpiryTime; InvalidMessageParameters for the idle duration),
	// so that no state outlives it. Zero: no bound (the gateway's default
	// is 7 days).
	MaxLifetime time.Duration
	// MaxGroupsPerPeer bounds the group generations with state that
	// messages from one peer (Message.Peer) opened, so that one peer
	// cannot fill MaxGroups for all (D15: MessageStoreOverflow for that
	// peer only). Zero: MaxGroups. Messages without a peer are not counted.
	MaxGroupsPerPeer int

	// MaxStepMutations bounds the mutations one call's Ready persists, give
	// or take one message's records, so that every Persist fits a store
	// batch (store.Limits) whatever the state: Tick, expiries, aborts and
	// callback clean-up stop there and go on at the next Tick, due at once
	// (budget.go).
	MaxStepMutations int

	// MaxDeliveryRun is how many deliverable messages of an ordered group
	// are handed out together, as one run in one Ready, once the group has
	// none outstanding (D14, R49: still in number order, never one after a
	// hand-off that was not taken). The driver reports every one with Taken,
	// DeliveryFailed or Returned (Delivery.InRun), so that one commit
	// records the run's hand-offs instead of one commit each (R92). Zero or
	// one: one message at a time.
	MaxDeliveryRun int

	// DeliveryRetry schedules hand-off retries after DeliveryFailed, until
	// the message's ExpiryTime.
	DeliveryRetry Backoff
	// CallbackRetry schedules callback POST retries (R75).
	CallbackRetry Backoff
	// FaultRetention is how long a fault waits for its channel: a callback
	// carrying a fault is retried at least this long (acks until the acked
	// message expires, R75), and a terminated group holding Response-pattern
	// faults not yet carried by a Response keeps its state this much longer
	// (D13).
	FaultRetention time.Duration
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		MaxGroups:            100_000,
		MaxRangesPerGroup:    10_000,
		MaxHeldPerGroup:      10_000,
		MaxHeldBytesPerGroup: 64 << 20,
		MaxHeldTotal:         100_000,
		MaxHeldBytesTotal:    512 << 20,
		MaxCallbackBatch:     1000,
		MaxPollRefs:          1000,
		MaxStepMutations:     DefaultMaxStepMutations,
		DeliveryRetry:        Backoff{Initial: time.Second, Factor: 2, Max: time.Minute},
		CallbackRetry:        Backoff{Initial: 5 * time.Second, Factor: 2, Max: 5 * time.Minute},
		FaultRetention:       time.Hour,
	}
}

// ErrConfig is wrapped by the errors New and Recover return for a bad Config.
var ErrConfig = errors.New("receiver: invalid config")

func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	ints := []struct {
		v   *int
		def int
	}{
		{&c.MaxGroups, d.MaxGroups}, {&c.MaxRangesPerGroup, d.MaxRangesPerGroup},
		{&c.MaxHeldPerGroup, d.MaxHeldPerGroup}, {&c.MaxHeldBytesPerGroup, d.MaxHeldBytesPerGroup},
		{&c.MaxHeldTotal, d.MaxHeldTotal}, {&c.MaxHeldBytesTotal, d.MaxHeldBytesTotal},
		{&c.MaxCallbackBatch, d.MaxCallbackBatch}, {&c.MaxPollRefs, d.MaxPollRefs},
		{&c.MaxStepMutations, d.MaxStepMutations},
	}
	if c.MaxDeliveryRun < 0 {
		return c, errors.Join(ErrConfig, errors.New("negative delivery run"))
	}
	c.MaxDeliveryRun = max(c.MaxDeliveryRun, 1)
	for _, f := range ints {
		if *f.v < 0 {
			return c, errors.Join(ErrConfig, errors.New("negative limit"))
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	for _, b := range []*Backoff{&c.DeliveryRetry, &c.CallbackRetry} {
		if b.Initial < 0 || b.Max < 0 {
			return c, errors.Join(ErrConfig, errors.New("negative backoff"))
		}
	}
	if c.DeliveryRetry == (Backoff{}) {
		c.DeliveryRetry = d.DeliveryRetry
	}
	if c.CallbackRetry == (Backoff{}) {
		c.CallbackRetry = d.CallbackRetry
	}
	for _, b := range []*Backoff{&c.DeliveryRetry, &c.CallbackRetry} {
		if b.Initial <= 0 {
			b.Initial = time.Second
		}
		if b.Max < b.Initial {
			b.Max = b.Initial
		}
	}
	if c.MaxGroupsPerPeer < 0 {
		return c, errors.Join(ErrConfig, errors.New("negative limit"))
	}
	if c.MaxGroupsPerPeer == 0 {
		c.MaxGroupsPerPeer = c.MaxGroups
	}
	if c.MaxLifetime < 0 {
		return c, errors.Join(ErrConfig, errors.New("negative lifetime"))
	}
	if c.FaultRetention < 0 {
		return c, errors.Join(ErrConfig, errors.New("negative retention"))
	}
	if c.FaultRetention == 0 {
		c.FaultRetention = d.FaultRetention
	}
	return c, nil
}
