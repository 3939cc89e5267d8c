package conformance

import (
	"fmt"
	"strconv"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
)

// cmdRMP creates an RMP named name at http://NAME.test/rmp with the
// configuration the arguments give.
func (h *harness) cmdRMP(a *args) error {
	name := a.str("name", "")
	if name == "" {
		return fmt.Errorf("rmp needs name=")
	}
	if _, dup := h.nodes[name]; dup {
		return fmt.Errorf("an RMP named %q exists", name)
	}
	n := &node{name: name, url: endpoint(name)}
	cfg := rmp.Config{ReplyTo: n.url}
	cfg.Sender.InstanceID = a.str("instance", name)
	switch v := a.str("dialect", "extended"); v {
	case "extended":
		cfg.Receiver.Dialect = faults.Extended
	case "strict":
		cfg.Receiver.Dialect = faults.Strict11
	default:
		return fmt.Errorf("dialect=%q: want extended or strict", v)
	}
	switch v := a.str("ack-point", "accept"); v {
	case "accept":
	case "delivery":
		cfg.Receiver.AckOnDelivery = true
	default:
		return fmt.Errorf("ack-point=%q: want accept or delivery", v)
	}
	switch v := a.str("consumer", "take"); v {
	case "take":
	case "refuse":
		n.refuse = true
	default:
		return fmt.Errorf("consumer=%q: want take or refuse", v)
	}
	n.respond = a.has("respond")
	for _, f := range a.list1("disable") {
		switch f {
		case "response":
			cfg.Receiver.DisableResponse = true
		case "callback":
			cfg.Receiver.DisableCallback = true
		case "poll":
			cfg.Receiver.DisablePoll = true
		case "ordering":
			cfg.Receiver.DisableOrdering = true
		default:
			return fmt.Errorf("disable=%q: want response, callback, poll or ordering", f)
		}
	}
	rc := &cfg.Receiver
	rc.MaxGroups = a.int("max-groups", 0)
	rc.MaxRangesPerGroup = a.int("max-ranges", 0)
	rc.MaxHeldPerGroup = a.int("max-held-per-group", 0)
	rc.MaxHeldBytesPerGroup = a.int("max-held-bytes-per-group", 0)
	rc.MaxHeldTotal = a.int("max-held-total", 0)
	rc.MaxHeldBytesTotal = a.int("max-held-bytes-total", 0)
	rc.MaxCallbackBatch = a.int("max-callback-batch", 0)
	rc.MaxPollRefs = a.int("max-poll-refs", 0)
	rc.FaultRetention = a.dur("fault-retention", 0)
	rc.MaxDeliveryRun = a.int("delivery-run", 0)
	var err error
	if rc.DeliveryRetry, err = backoff(a.list1("delivery-retry")); err != nil {
		return err
	}
	if rc.CallbackRetry, err = backoff(a.list1("callback-retry")); err != nil {
		return err
	}
	sc := &cfg.Sender
	if v := a.list1("retry"); v != nil {
		if sc.Retry, err = retryPolicy(v); err != nil {
			return err
		}
	}
	sc.PollInterval = a.dur("poll-interval", 0)
	if v, ok := a.uint("jitter-seed"); ok {
		sc.JitterSeed = v
	}
	sc.LateFaultGrace = a.dur("late-fault-grace", 0)
	sc.DefaultLifetime = a.dur("default-lifetime", time.Minute)
	sc.Limits.MaxPending = a.int("max-pending", 0)
	sc.Window = a.int("window", 0)
	sc.Limits.MaxPayloadBytes = a.int("max-payload", 0)
	sc.Limits.MaxGroups = a.int("max-sending-groups", 0)
	sc.Limits.MaxOutbox = a.int("max-outbox", 0)
	sc.Limits.MaxPollRefs = a.int("max-poll-refs-sent", 0)
	if cfg.ReplyVersion, err = parseVersion(a.str("reply-version", "1.1")); err != nil {
		return err
	}
	cfg.Parse = soap.ParseOptions{}
	if err := a.done(); err != nil {
		return err
	}
	n.cfg = cfg
	if err := h.open(n); err != nil {
		return err
	}
	h.nodes[name] = n
	h.printf("%s: ready at %s", name, n.url)
	return nil
}

// backoff reads (initial, factor, max), e.g. (1s,2,1m).
func backoff(v []string) (receiver.Backoff, error) {
	if v == nil {
		return receiver.Backoff{}, nil
	}
	if len(v) != 3 {
		return receiver.Backoff{}, fmt.Errorf("a back-off is (initial,factor,max), got %v", v)
	}
	i, err1 := time.ParseDuration(v[0])
	f, err2 := strconv.Atoi(v[1])
	m, err3 := time.ParseDuration(v[2])
	for _, err := range []error{err1, err2, err3} {
		if err != nil {
			return receiver.Backoff{}, fmt.Errorf("back-off %v: %v", v, err)
		}
	}
	return receiver.Backoff{Initial: i, Factor: f, Max: m}, nil
}

// retryPolicy reads (interval, backoff, cap, jitter, max-retries), e.g.
// (1s,2,8s,0,5) (D26).
func retryPolicy(v []string) (sender.RetryPolicy, error) {
	if len(v) != 5 {
		return sender.RetryPolicy{}, fmt.Errorf("retry is (interval,backoff,cap,jitter,max), got %v", v)
	}
	iv, err1 := time.ParseDuration(v[0])
	bo, err2 := strconv.ParseFloat(v[1], 64)
	mx, err3 := time.ParseDuration(v[2])
	j, err4 := strconv.ParseFloat(v[3], 64)
	n, err5 := strconv.Atoi(v[4])
	for _, err := range []error{err1, err2, err3, err4, err5} {
		if err != nil {
			return sender.RetryPolicy{}, fmt.Errorf("retry %v: %v", v, err)
		}
	}
	return sender.RetryPolicy{Interval: iv, Backoff: bo, MaxInterval: mx, Jitter: j, MaxRetries: n}, nil
}
