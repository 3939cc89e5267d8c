package faults

import (
	"errors"
	"fmt"
	"testing"
)

func TestFaultError(t *testing.T) {
	cases := []struct {
		f    *Fault
		want string
	}{
		{New(InvalidRequest, "soap.request.missing-message-id", "no MessageId"),
			"wsrm:InvalidRequest [soap.request.missing-message-id] no MessageId"},
		{&Fault{Code: MessageExpired}, "wsrm:MessageExpired"},
		{&Fault{Code: GroupAborted, Scope: ScopeGroup, GroupID: "g", Rule: "r"}, "wsrm:GroupAborted [r] (group g)"},
		{&Fault{Code: InvalidMessageId, GroupID: "g", HasNumber: true, From: 7, To: 7}, "wsrm:InvalidMessageId (group g 7)"},
		{&Fault{Code: GroupAborted, GroupID: "g", HasNumber: true, From: 3, To: 18446744073709551615, Reason: "why"},
			"wsrm:GroupAborted why (group g 3..18446744073709551615)"},
	}
	for _, c := range cases {
		if got := c.f.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
	f := New(InvalidPollRequest, "x", "y")
	if f.Scope != ScopeRequest || f.Code != InvalidPollRequest || f.Rule != "x" || f.Reason != "y" {
		t.Errorf("New = %+v", f)
	}
}

func TestFaultIsAsThroughWrapping(t *testing.T) {
	f := &Fault{Code: MessageExpired, Scope: ScopeMessage, GroupID: "g", Rule: "receiver.expired"}
	wrapped := fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", f))
	if !errors.Is(wrapped, MessageExpired) {
		t.Error("errors.Is(wrapped, code)")
	}
	if errors.Is(wrapped, GroupAborted) {
		t.Error("errors.Is matched another code")
	}
	if !errors.Is(wrapped, &Fault{Code: MessageExpired}) {
		t.Error("errors.Is(wrapped, *Fault same code)")
	}
	if errors.Is(wrapped, &Fault{Code: GroupAborted}) {
		t.Error("errors.Is(wrapped, *Fault other code)")
	}
	if errors.Is(wrapped, (*Fault)(nil)) {
		t.Error("errors.Is(wrapped, nil *Fault)")
	}
	var got *Fault
	if !errors.As(wrapped, &got) || got != f {
		t.Error("errors.As did not find the fault")
	}
	if CodeOf(wrapped) != MessageExpired {
		t.Errorf("CodeOf = %v", CodeOf(wrapped))
	}
	// A bare Code is an error too, and CodeOf finds it.
	if CodeOf(fmt.Errorf("w: %w", GroupAborted)) != GroupAborted {
		t.Error("CodeOf(bare code)")
	}
	if CodeOf(errors.New("plain")) != 0 || CodeOf(nil) != 0 {
		t.Error("CodeOf of a non-fault")
	}
	if !errors.Is(fmt.Errorf("w: %w", GroupAborted), GroupAborted) {
		t.Error("errors.Is on a bare code")
	}
}

func TestScopeString(t *testing.T) {
	for s, want := range map[Scope]string{ScopeRequest: "request", ScopeMessage: "message", ScopeRange: "range", ScopeGroup: "group", 9: "Scope(9)"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q", s, s.String())
		}
	}
}
