// Package testtool finds the outside programs some tests run (xmllint,
// Debian's python3 with zeep and spyne, chromium, openssl). The README's
// `go test ./...` must pass with only Go installed, so a missing tool skips
// the test with one line naming the Debian package; CI installs every tool,
// so there (CI set) a missing one fails the test instead.
package testtool

import (
	"os"
	"os/exec"
	"testing"
)

// Need returns the path of program, which Debian package pkg provides. When
// it is not on PATH the test is skipped, or failed when CI is set.
func Need(t testing.TB, program, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err != nil {
		Missing(t, program+" is not installed (apt-get install -y "+pkg+")")
	}
	return path
}

// Missing skips the test with reason, or fails it when CI is set: CI
// installs everything the tests need, so there a missing tool is a bug.
func Missing(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s; CI is set, so this is a failure, not a skip", reason)
	}
	t.Skip(reason)
}
