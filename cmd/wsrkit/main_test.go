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
		{[]string{"demo"}, 1, "not built yet"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if got := run(c.args, &out, &errb); got != c.status {
			t.Errorf("run(%q) = %d, want %d", c.args, got, c.status)
		}
		if !strings.Contains(errb.String(), c.stderr) {
			t.Errorf("run(%q) stderr = %q, want it to contain %q", c.args, errb.String(), c.stderr)
		}
	}
}
