package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRunExitStatus(t *testing.T) {
	cases := []struct {
		args   []string
		status int
		stderr string
	}{
		{nil, 2, "usage: wsrkit"},
		{[]string{"-h"}, 0, "usage: wsrkit"},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"serve", "-h"}, 0, "-max-held-per-group"},
		{[]string{"serve", "-max-body", "lots"}, 2, "invalid size"},
		{[]string{"serve", "-retry-jitter", "2", "-data", "x"}, 1, "-retry-jitter must be in [0, 1)"},
		{[]string{"serve", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"demo", "-loss", "1"}, 2, "-loss must be in [0, 1)"},
		{[]string{"demo", "-h"}, 0, "-messages"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if got := run(c.args, &out, &errb); got != c.status {
			t.Errorf("run(%q) = %d, want %d (stderr %q)", c.args, got, c.status, errb.String())
		}
		if !strings.Contains(errb.String(), c.stderr) {
			t.Errorf("run(%q) stderr = %q, want it to contain %q", c.args, errb.String(), c.stderr)
		}
	}
}

// TestDemoPassesItsChecks runs the demo with a small count: every check
// must hold (exit 0) and the summary must name them.
func TestDemoPassesItsChecks(t *testing.T) {
	var out, errb bytes.Buffer
	if got := run([]string{"demo", "-messages", "200", "-group-size", "20", "-seed", "7"}, &out, &errb); got != 0 {
		t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", got, out.String(), errb.String())
	}
	for _, want := range []string{"submitted                                    200", "check: nothing delivered twice", "PASS", "outcomes reported                            200/200"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "FAIL") {
		t.Errorf("a check failed:\n%s", out.String())
	}
}

// TestConformIsWired: the subcommand reaches the conformance runner.
func TestConformIsWired(t *testing.T) {
	var out, errb bytes.Buffer
	run([]string{"conform", "-h"}, &out, &errb)
	if !strings.Contains(errb.String()+out.String(), "usage: wsrkit conform") {
		t.Fatalf("conform -h printed %q / %q", out.String(), errb.String())
	}
}
