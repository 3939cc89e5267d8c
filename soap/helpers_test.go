package soap

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/wsrkit/wsrkit/faults"
)

// The module's go.mod lacks the go.yaml.in/yaml/v3 requirement testify
// v1.12.1 needs, so these tests use small local helpers instead.

func equal(t testing.TB, want, got any, msg ...any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%s\nwant: %#v\n got: %#v", fmt.Sprint(msg...), want, got)
	}
}

func noErr(t testing.TB, err error, msg ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", fmt.Sprint(msg...), err)
	}
}

func contains(t testing.TB, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("%q does not contain %q", s, sub)
	}
}

// wantFault checks err is a *faults.Fault with the code, rule and scope.
func wantFault(t testing.TB, err error, code faults.Code, rule string, scope faults.Scope) *faults.Fault {
	t.Helper()
	var f *faults.Fault
	if !errors.As(err, &f) {
		t.Fatalf("want fault %v [%s], got %v", code, rule, err)
	}
	if f.Code != code || f.Rule != rule || f.Scope != scope {
		t.Fatalf("want %v [%s] scope %v, got %v [%s] scope %v (%v)", code, rule, scope, f.Code, f.Rule, f.Scope, f)
	}
	return f
}
