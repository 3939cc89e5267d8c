package conformance

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/soap"
)

// args reads a command's arguments; every lookup marks its key as used so
// that unknown keys are reported instead of silently ignored.
type args struct {
	h    *harness
	list []cmdArg
	used map[string]bool
	err  error
}

func newArgs(h *harness, list []cmdArg) *args {
	return &args{h: h, list: list, used: map[string]bool{}}
}

func (a *args) fail(format string, v ...any) {
	if a.err == nil {
		a.err = fmt.Errorf(format, v...)
	}
}

func (a *args) vals(key string) ([]string, bool) {
	for _, c := range a.list {
		if c.Key == key {
			a.used[key] = true
			return c.Vals, true
		}
	}
	return nil, false
}

// has reports a bare key or key=true.
func (a *args) has(key string) bool {
	v, ok := a.vals(key)
	if !ok {
		return false
	}
	if len(v) == 0 {
		return true
	}
	b, err := strconv.ParseBool(v[0])
	if err != nil {
		a.fail("%s=%q: want a boolean", key, v[0])
	}
	return b
}

func (a *args) str(key, def string) string {
	v, ok := a.vals(key)
	if !ok || len(v) == 0 {
		return def
	}
	return v[0]
}

func (a *args) list1(key string) []string {
	v, _ := a.vals(key)
	return v
}

func (a *args) int(key string, def int) int {
	v, ok := a.vals(key)
	if !ok || len(v) == 0 {
		return def
	}
	n, err := strconv.Atoi(v[0])
	if err != nil {
		a.fail("%s=%q: want an integer", key, v[0])
	}
	return n
}

func (a *args) uint(key string) (uint64, bool) {
	v, ok := a.vals(key)
	if !ok || len(v) == 0 {
		return 0, false
	}
	n, err := strconv.ParseUint(v[0], 10, 64)
	if err != nil {
		a.fail("%s=%q: want an unsigned integer", key, v[0])
	}
	return n, true
}

func (a *args) dur(key string, def time.Duration) time.Duration {
	v, ok := a.vals(key)
	if !ok || len(v) == 0 {
		return def
	}
	d, err := time.ParseDuration(v[0])
	if err != nil {
		a.fail("%s=%q: %v", key, v[0], err)
	}
	return d
}

// instant reads a time: T±d (the scenario epoch), +d or -d (relative to
// now), or an xsd:dateTime.
func (a *args) instant(key string) (time.Time, bool) {
	v, ok := a.vals(key)
	if !ok || len(v) == 0 {
		return time.Time{}, false
	}
	t, err := a.h.parseInstant(v[0])
	if err != nil {
		a.fail("%s=%q: %v", key, v[0], err)
	}
	return t, true
}

// done reports the first error, or an unknown key.
func (a *args) done() error {
	if a.err != nil {
		return a.err
	}
	for _, c := range a.list {
		if !a.used[c.Key] {
			return fmt.Errorf("unknown argument %q", c.Key)
		}
	}
	return nil
}

func (h *harness) parseInstant(s string) (time.Time, error) {
	base := h.now
	rest := s
	switch {
	case strings.HasPrefix(s, "T"):
		base, rest = epoch, s[1:]
	case strings.HasPrefix(s, "now"):
		rest = s[3:]
	case strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-"):
	default:
		return soap.ParseDateTime(s)
	}
	if rest == "" {
		return base, nil
	}
	d, err := time.ParseDuration(rest)
	if err != nil {
		return time.Time{}, err
	}
	return base.Add(d), nil
}

// timing reads a group's group-expires= and max-idle= into t.
func (a *args) timing(t *group.Timing) error {
	if v, ok := a.instant("group-expires"); ok {
		t.Expiry = v
	}
	if s := a.str("max-idle", ""); s != "" {
		d, err := parseMaxIdle(s)
		if err != nil {
			return fmt.Errorf("max-idle: %v", err)
		}
		t.MaxIdle, t.HasMaxIdle = d, true
	}
	return nil
}

// parseMaxIdle reads an xsd:duration (PT10S) or a Go duration (10s).
func parseMaxIdle(s string) (group.Duration, error) {
	if strings.HasPrefix(s, "P") || strings.HasPrefix(s, "-P") {
		return soap.ParseDuration(s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return group.Duration{}, err
	}
	return group.Fixed(d), nil
}

// parseFlags reads flags=(ack,dup,order); "none" is no flag.
func parseFlags(vals []string) (group.Flags, error) {
	var f group.Flags
	for _, v := range vals {
		switch v {
		case "ack":
			f.AckRequested = true
		case "dup":
			f.DuplicateElimination = true
		case "order":
			f.MessageOrder = true
		case "none", "":
		default:
			return f, fmt.Errorf("unknown flag %q (ack, dup, order, none)", v)
		}
	}
	return f, nil
}

func parsePattern(s string) (group.ReplyPattern, error) {
	switch strings.ToLower(s) {
	case "response":
		return group.ReplyResponse, nil
	case "callback":
		return group.ReplyCallback, nil
	case "poll":
		return group.ReplyPoll, nil
	}
	return 0, fmt.Errorf("unknown reply pattern %q (response, callback, poll)", s)
}

func parseVersion(s string) (soap.Version, error) {
	switch s {
	case "", "1.1":
		return soap.SOAP11, nil
	case "1.2":
		return soap.SOAP12, nil
	}
	return 0, fmt.Errorf("unknown SOAP version %q (1.1, 1.2)", s)
}

func parseCode(s string) (faults.Code, error) {
	s = strings.TrimPrefix(s, "wsrm:")
	c, ok := faults.Parse(s)
	if !ok {
		return 0, fmt.Errorf("unknown fault code %q", s)
	}
	return c, nil
}

// parseRange reads "3" or "0-5".
func parseRange(s string) (group.Range, error) {
	from, to, found := strings.Cut(s, "-")
	a, err := strconv.ParseUint(from, 10, 64)
	if err != nil {
		return group.Range{}, fmt.Errorf("range %q: %v", s, err)
	}
	b := a
	if found {
		if b, err = strconv.ParseUint(to, 10, 64); err != nil {
			return group.Range{}, fmt.Errorf("range %q: %v", s, err)
		}
	}
	return group.Range{From: a, To: b}, nil
}
