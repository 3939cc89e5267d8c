package conformance

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// dispatch runs one command.
func (h *harness) dispatch(td *testData) error {
	a := newArgs(h, td.CmdArgs)
	var err error
	switch td.Cmd {
	case "rmp":
		err = h.cmdRMP(a)
	case "consumer":
		err = h.cmdConsumer(a)
	case "send":
		err = h.cmdSend(a)
	case "post":
		err = h.cmdPost(a, td.Input)
	case "poll":
		err = h.cmdPoll(a, td.Input)
	case "reply":
		err = h.cmdReply(a, td.Input)
	case "submit":
		err = h.cmdSubmit(a)
	case "abort":
		err = h.cmdAbort(a)
	case "respond":
		err = h.cmdRespond(a, td.Input)
	case "net":
		err = h.cmdNet(a)
	case "release":
		rev := a.has("reverse")
		if err = a.done(); err == nil {
			if h.release(rev) == 0 {
				h.printf("net: nothing held")
			}
		}
	case "advance":
		err = h.cmdAdvance(a)
	case "restart", "crash":
		err = h.cmdRestart(a, td.Cmd == "crash")
	case "state":
		err = h.cmdState(a)
	case "groups":
		err = h.cmdGroups(a)
	case "reset":
		if err = a.done(); err == nil {
			h.reset()
			h.printf("reset: no RMP, time T")
		}
	default:
		return fmt.Errorf("unknown command %q", td.Cmd)
	}
	return err
}

// endpoint turns a node name into its URL; a URI (http://…, mailto:x)
// stays as it is.
func endpoint(v string) string {
	if strings.Contains(v, ":") {
		return v
	}
	return "http://" + v + ".test/rmp"
}

func (h *harness) cmdConsumer(a *args) error {
	n, err := h.node(a.str("on", "r"))
	if err != nil {
		return err
	}
	switch v := a.str("mode", "take"); v {
	case "take":
		n.refuse = false
	case "refuse":
		n.refuse = true
	default:
		return fmt.Errorf("consumer mode=%q: want take or refuse", v)
	}
	if err := a.done(); err != nil {
		return err
	}
	h.printf("%s: consumer %s", n.name, a.str("mode", "take"))
	return nil
}

func (h *harness) cmdAdvance(a *args) error {
	target := h.now
	if t, ok := a.instant("to"); ok {
		target = t
	} else {
		var keys []string
		for _, c := range a.list {
			if c.Key != "to" && len(c.Vals) == 0 {
				keys = append(keys, c.Key)
			}
		}
		if len(keys) != 1 {
			return fmt.Errorf("advance takes one duration (advance 5s) or to=INSTANT")
		}
		d, err := time.ParseDuration(keys[0])
		if err != nil {
			return err
		}
		a.used[keys[0]] = true
		target = h.now.Add(d)
	}
	if err := a.done(); err != nil {
		return err
	}
	if err := h.advanceTo(target); err != nil {
		return err
	}
	h.stamp = false
	h.printf("now %s", h.rel(h.now))
	return nil
}

func (h *harness) cmdRestart(a *args, crash bool) error {
	names := h.names()
	if v := a.str("name", ""); v != "" {
		names = []string{v}
	}
	if err := a.done(); err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		n, err := h.node(name)
		if err != nil {
			return err
		}
		if err := h.reopen(n, crash); err != nil {
			return err
		}
		if crash {
			h.printf("%s: crashed and recovered", name)
		} else {
			h.printf("%s: restarted", name)
		}
	}
	return nil
}
