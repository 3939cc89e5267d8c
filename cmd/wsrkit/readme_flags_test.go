package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// helpFlag is one flag of `serve -h`: its name and the default it prints.
type helpFlag struct{ name, def string }

// serveHelpFlags parses the flag list `wsrkit serve -h` prints.
func serveHelpFlags(t *testing.T) []helpFlag {
	var out, errb bytes.Buffer
	if got := run([]string{"serve", "-h"}, &out, &errb); got != 0 {
		t.Fatalf("serve -h = %d", got)
	}
	var flags []helpFlag
	defRE := regexp.MustCompile(`\(default (.*)\)$`)
	for _, line := range strings.Split(errb.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "  -"):
			flags = append(flags, helpFlag{name: strings.Fields(line)[0]})
		case len(flags) > 0 && strings.HasPrefix(line, "    \t"):
			if m := defRE.FindStringSubmatch(line); m != nil {
				flags[len(flags)-1].def = strings.Trim(m[1], `"`)
			}
		}
	}
	if len(flags) < 50 {
		t.Fatalf("parsed %d flags from serve -h:\n%s", len(flags), errb.String())
	}
	return flags
}

// shortDuration writes a duration as the README does: 1h, 5m, 30s.
func shortDuration(s string) string {
	d, err := time.ParseDuration(s)
	if err != nil || d == 0 {
		return s
	}
	s = d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// TestREADMEListsEveryServeFlag: every flag `wsrkit serve -h` prints is
// named in the README's "The gateway" section, and the entry of each with
// a plain default (a value, not a sentence) states that default.
func TestREADMEListsEveryServeFlag(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "## The gateway")
	if start < 0 {
		t.Fatal("README.md has no section The gateway")
	}
	s = s[start:]
	for _, f := range serveHelpFlags(t) {
		loc := regexp.MustCompile("`" + regexp.QuoteMeta(f.name) + "[` =]").FindStringIndex(s)
		if loc == nil {
			t.Errorf("README.md does not list %s", f.name)
			continue
		}
		entry := s[loc[1]:]
		if next := strings.Index(entry, "`-"); next >= 0 {
			entry = entry[:next]
		}
		if f.def == "" || f.def == "false" || strings.Contains(f.def, " ") || f.name == "-node-id" {
			continue // none, or prose (or the host name)
		}
		want := shortDuration(f.def)
		if !regexp.MustCompile(`(^|[^0-9A-Za-z.])` + regexp.QuoteMeta(want) + `($|[^0-9A-Za-z])`).MatchString(entry) {
			t.Errorf("README.md lists %s without its default %s: %q", f.name, want, entry)
		}
	}
}
