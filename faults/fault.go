package faults

import (
	"errors"
	"strconv"
	"strings"
)

// Scope says what a Fault is about.
type Scope uint8

const (
	// ScopeRequest: the request as a whole could not be read or identified;
	// it becomes a SOAP Fault on the HTTP response (D7, R38).
	ScopeRequest Scope = iota
	// ScopeMessage: one identified message (a singleton, or one number).
	ScopeMessage
	// ScopeRange: the numbers From..To of a group.
	ScopeRange
	// ScopeGroup: a whole group.
	ScopeGroup
)

func (s Scope) String() string {
	switch s {
	case ScopeRequest:
		return "request"
	case ScopeMessage:
		return "message"
	case ScopeRange:
		return "range"
	case ScopeGroup:
		return "group"
	}
	return "Scope(" + strconv.Itoa(int(s)) + ")"
}

// Fault is a protocol fault with what it is about and which check raised it.
// It is an error; errors.Is(f, code) compares codes, and errors.Is(f, g) for
// another *Fault g compares codes too.
type Fault struct {
	Code  Code
	Scope Scope
	// GroupID is the MessageId/@groupId the fault is about, when identified.
	GroupID string
	// HasNumber says whether From and To are set (sequenced messages only).
	HasNumber bool
	// From..To, inclusive, are the sequence numbers concerned; From == To
	// for one message.
	From, To uint64
	// Rule is a stable label of the exact check that fired, such as
	// "receiver.number-after-last"; scenarios pin it.
	Rule string
	// Reason is a human explanation; it is not part of the contract.
	Reason string
}

// New returns a request-scoped fault with a rule label and reason.
func New(code Code, rule, reason string) *Fault {
	return &Fault{Code: code, Scope: ScopeRequest, Rule: rule, Reason: reason}
}

// Error formats the fault as "wsrm:Code [rule] reason (group g n..m)".
func (f *Fault) Error() string {
	var b strings.Builder
	b.WriteString(f.Code.Error())
	if f.Rule != "" {
		b.WriteString(" [")
		b.WriteString(f.Rule)
		b.WriteString("]")
	}
	if f.Reason != "" {
		b.WriteString(" ")
		b.WriteString(f.Reason)
	}
	if f.GroupID != "" {
		b.WriteString(" (group ")
		b.WriteString(f.GroupID)
		if f.HasNumber {
			b.WriteString(" ")
			b.WriteString(strconv.FormatUint(f.From, 10))
			if f.To != f.From {
				b.WriteString("..")
				b.WriteString(strconv.FormatUint(f.To, 10))
			}
		}
		b.WriteString(")")
	}
	return b.String()
}

// Is reports whether target is f's Code, or a *Fault with the same Code.
func (f *Fault) Is(target error) bool {
	switch t := target.(type) {
	case Code:
		return f.Code == t
	case *Fault:
		return t != nil && f.Code == t.Code
	}
	return false
}

// CodeOf returns the code of the first *Fault or Code in err's chain, or 0.
func CodeOf(err error) Code {
	var f *Fault
	if errors.As(err, &f) {
		return f.Code
	}
	var c Code
	if errors.As(err, &c) {
		return c
	}
	return 0
}
