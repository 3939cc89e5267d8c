package main

import (
	"bytes"
	"os"
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

// TestServeFlagsHelpAndErrors: `serve -h` lists every flag of the README
// table and exits 0 without starting; a bad flag or value is exactly one
// line naming the flag, with a non-zero exit (before any data directory is
// touched).
func TestServeFlagsHelpAndErrors(t *testing.T) {
	var out, errb bytes.Buffer
	if got := run([]string{"serve", "-h"}, &out, &errb); got != 0 {
		t.Fatalf("serve -h = %d, want 0 (stderr %q)", got, errb.String())
	}
	for _, f := range []string{"-listen", "-data", "-public-url", "-deliver", "-notify", "-max-body", "-max-depth",
		"-max-open-groups", "-max-held-per-group", "-max-held-bytes-per-group", "-max-held-total", "-max-held-bytes-total",
		"-max-pending", "-max-pending-bytes", "-max-records", "-retry-interval", "-retry-backoff", "-retry-max-interval",
		"-retry-jitter", "-max-retries", "-poll-interval", "-late-fault-polls", "-late-fault-margin", "-poll-interval-max",
		"-peer-ack-on-delivery", "-default-expires-in", "-ack-on-delivery", "-strict-faults",
		"-max-open-groups-per-peer", "-max-lifetime", "-max-batch",
		"-fake-clock", "-fake-clock-start", "-log", "-read-header-timeout", "-read-timeout", "-write-timeout",
		"-idle-timeout", "-max-conns", "-max-header-bytes", "-tls-cert", "-tls-key", "-tls-client-ca", "-tls-client-auth",
		"-peer-ca", "-peer-cert", "-peer-key", "-bind-groups-to-peer", "-admin-listen", "-admin-token-file", "-metrics-public", "-console", "-allow-outbound", "-idempotency-window", "-max-idempotency-keys",
		"-etcd-ca", "-etcd-cert", "-etcd-key", "-etcd-user", "-etcd-password-file", "-cluster-ca", "-cluster-secret-file"} {
		if !strings.Contains(errb.String(), "  "+f+" ") && !strings.Contains(errb.String(), "  "+f+"\n") {
			t.Errorf("serve -h does not list %s:\n%s", f, errb.String())
		}
	}
	if out.Len() != 0 {
		t.Errorf("serve -h wrote to stdout: %q", out.String())
	}

	dir := t.TempDir() + "/never"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-max-body", "lots"}, `invalid value "lots" for flag -max-body`},
		{[]string{"-max-pending", "many"}, `invalid value "many" for flag -max-pending`},
		{[]string{"-retry-interval", "5"}, `invalid value "5" for flag -retry-interval`},
		{[]string{"-fake-clock-start", "yesterday"}, `invalid value "yesterday" for flag -fake-clock-start`},
		{[]string{"-strict-faults=maybe"}, `invalid boolean value "maybe" for -strict-faults`},
		{[]string{"-no-such-flag"}, "flag provided but not defined: -no-such-flag"},
		{[]string{"-log", "loud"}, `invalid -log "loud"`},
		{[]string{"-peer-ack-on-delivery", "r.example/rmp"}, `invalid value "r.example/rmp" for flag -peer-ack-on-delivery`},
		{[]string{"-poll-interval-max", "1s"}, "-poll-interval-max (1s) must not be below -poll-interval (10s)"},
		{[]string{"-late-fault-margin", "0s"}, "-late-fault-margin must be positive"},
		// Refused before anything listens: no non-loopback socket is opened.
		{[]string{"-listen", "0.0.0.0:0"}, "the admin API (/v1/*, /metrics) would be reachable on 0.0.0.0:0 (-listen) without a token: set -admin-token-file FILE"},
		{[]string{"-admin-listen", ":0"}, "(-admin-listen) without a token"},
		{[]string{"-tls-client-auth", "require"}, "-tls-client-auth require needs -tls-client-ca"},
		{[]string{"-store", "etcd", "-etcd-endpoints", "127.0.0.1:1", "-listen", "0.0.0.0:0", "-admin-token-file", "t"},
			"-store etcd instances would take forwarded requests on 0.0.0.0:0 (-listen) from anyone: set -cluster-secret-file FILE (the same on every instance), or -cluster-ca FILE with -tls-cert"},
		{[]string{"-store", "etcd", "-etcd-endpoints", "127.0.0.1:1", "-etcd-user", "wsrkit"}, "-etcd-user and -etcd-password-file go together"},
	} {
		var out, errb bytes.Buffer
		got := run(append(append([]string{"serve"}, c.args...), "-data", dir), &out, &errb)
		if got == 0 {
			t.Errorf("serve %q exited 0", c.args)
		}
		msg := errb.String()
		if !strings.Contains(msg, c.want) {
			t.Errorf("serve %q stderr = %q, want it to contain %q", c.args, msg, c.want)
		}
		if strings.Count(msg, "\n") != 1 || !strings.HasSuffix(msg, "\n") {
			t.Errorf("serve %q: want exactly one line, got %q", c.args, msg)
		}
		if strings.Contains(msg, "  -ack-on-delivery") {
			t.Errorf("serve %q printed the flag list on an error: %q", c.args, msg)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a refused command line created the data directory (stat: %v)", err)
	}
}

// TestConformSuitePasses runs `wsrkit conform conformance/testdata` as a
// user would: every scenario, all three store modes, exit status 0.
func TestConformSuitePasses(t *testing.T) {
	var out, errb bytes.Buffer
	if got := run([]string{"conform", "../../conformance/testdata"}, &out, &errb); got != 0 {
		t.Fatalf("wsrkit conform conformance/testdata = %d\n%s\n%s", got, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "passed in 3 modes") {
		t.Fatalf("summary missing: %q", out.String())
	}
}
