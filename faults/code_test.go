package faults

import (
	"testing"
)

// row is digest §7 (class, SOAP 1.1 faultcode, SOAP 1.2 Code) and §9 (HTTP
// status of a SOAP Fault), extended with the two codes of D5.
type row struct {
	code      Code
	name      string
	class     Class
	retryable bool
	inSchema  bool
	soap11    string
	soap12    string
	http11    int
	http12    int
}

var table = []row{
	{InvalidRequest, "InvalidRequest", Format, false, true, "Client", "Sender", 500, 400},
	{InvalidPollRequest, "InvalidPollRequest", Format, false, true, "Client", "Sender", 500, 400},
	{InvalidMessageId, "InvalidMessageId", Format, false, true, "Client", "Sender", 500, 400},
	{InvalidMessageParameters, "InvalidMessageParameters", Format, false, true, "Client", "Sender", 500, 400},
	{InvalidExpiryTime, "InvalidExpiryTime", Format, false, true, "Client", "Sender", 500, 400},
	{InvalidReplyPattern, "InvalidReplyPattern", Format, false, true, "Client", "Sender", 500, 400},
	{FeatureNotSupported, "FeatureNotSupported", Processing, false, true, "Server", "Receiver", 500, 500},
	{PermanentProcessingFailure, "PermanentProcessingFailure", Processing, false, true, "Server", "Receiver", 500, 500},
	// R26: MessageProcessingFailure is transient.
	{MessageProcessingFailure, "MessageProcessingFailure", Processing, true, true, "Server", "Receiver", 500, 500},
	{GroupAborted, "GroupAborted", Processing, false, true, "Server", "Receiver", 500, 500},
	// D5: the two codes of the resolutions, outside the 1.1 schema; D15:
	// MessageStoreOverflow is transient.
	{MessageExpired, "MessageExpired", Processing, false, false, "Server", "Receiver", 500, 500},
	{MessageStoreOverflow, "MessageStoreOverflow", Processing, true, false, "Server", "Receiver", 500, 500},
}

func TestCodeTable(t *testing.T) {
	all := All()
	if len(all) != 12 || len(table) != 12 {
		t.Fatalf("All() has %d codes, want 12 (D5)", len(all))
	}
	for i, r := range table {
		c := r.code
		if all[i] != c {
			t.Errorf("All()[%d] = %v, want %v", i, all[i], c)
		}
		if !c.Valid() {
			t.Errorf("%v not valid", c)
		}
		if c.String() != r.name {
			t.Errorf("String = %q, want %q", c.String(), r.name)
		}
		if c.Error() != "wsrm:"+r.name {
			t.Errorf("Error = %q", c.Error())
		}
		if c.QName("wsrm") != "wsrm:"+r.name || c.QName("q") != "q:"+r.name || c.QName("") != r.name {
			t.Errorf("QName wrong for %v", c)
		}
		if c.Class() != r.class {
			t.Errorf("%v Class = %v, want %v", c, c.Class(), r.class)
		}
		if c.Retryable() != r.retryable {
			t.Errorf("%v Retryable = %v", c, c.Retryable())
		}
		if c.InSchema() != r.inSchema {
			t.Errorf("%v InSchema = %v", c, c.InSchema())
		}
		if c.SOAP11FaultCode() != r.soap11 || c.SOAP12Code() != r.soap12 {
			t.Errorf("%v SOAP codes = %s/%s", c, c.SOAP11FaultCode(), c.SOAP12Code())
		}
		if c.HTTPStatus(false) != r.http11 || c.HTTPStatus(true) != r.http12 {
			t.Errorf("%v HTTP = %d/%d, want %d/%d (R86)", c, c.HTTPStatus(false), c.HTTPStatus(true), r.http11, r.http12)
		}
		// D6: every code is accepted on input, by local name.
		p, ok := Parse(r.name)
		if !ok || p != c {
			t.Errorf("Parse(%q) = %v, %v", r.name, p, ok)
		}
		p, ok = Parse(" \t" + r.name + "\n")
		if !ok || p != c {
			t.Errorf("Parse with spaces = %v, %v", p, ok)
		}
	}
}

func TestInvalidCodes(t *testing.T) {
	for _, c := range []Code{0, 13, 255} {
		if c.Valid() || c.InSchema() {
			t.Errorf("%d valid or in schema", c)
		}
	}
	if Code(0).String() != "Code(0)" || Code(13).String() != "Code(13)" {
		t.Errorf("String of invalid: %q %q", Code(0).String(), Code(13).String())
	}
	for _, s := range []string{"", "invalidrequest", "wsrm:InvalidRequest", "InvalidMessageHeader", "Code(1)"} {
		if c, ok := Parse(s); ok {
			t.Errorf("Parse(%q) = %v", s, c)
		}
	}
	if Format.String() != "format" || Processing.String() != "processing" || Class(9).String() != "Class(9)" {
		t.Error("Class.String")
	}
}

func TestDialect(t *testing.T) {
	for _, c := range All() {
		if Extended.Wire(c) != c {
			t.Errorf("Extended changed %v", c)
		}
		w := Strict11.Wire(c)
		if !w.InSchema() {
			t.Errorf("Strict11 emits %v for %v, outside the 1.1 schema (D6)", w, c)
		}
		if c.InSchema() && w != c {
			t.Errorf("Strict11 changed schema code %v to %v", c, w)
		}
		// The mapping keeps the class and whether the sender retries.
		if w.Class() != c.Class() || w.Retryable() != c.Retryable() {
			t.Errorf("Strict11 %v → %v changes class or retryability", c, w)
		}
	}
	if Strict11.Wire(MessageExpired) != PermanentProcessingFailure || Strict11.Wire(MessageStoreOverflow) != MessageProcessingFailure {
		t.Error("D6 mapping")
	}
	if Dialect(0) != Extended {
		t.Error("the zero Dialect must be Extended (the default, D6)")
	}
	if Extended.String() != "extended" || Strict11.String() != "strict-1.1" || Dialect(7).String() != "Dialect(7)" {
		t.Error("Dialect.String")
	}
}
