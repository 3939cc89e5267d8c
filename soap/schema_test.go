package soap

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/internal/testtool"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// schemaDir finds the directory holding ws-reliability-1.1.xsd: $WSRKIT_XSD_DIR,
// else ../shared/spec beside the repository root (the directory with go.mod).
func schemaDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("WSRKIT_XSD_DIR"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "ws-reliability-1.1.xsd")); err == nil {
			return d
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			d := filepath.Join(dir, "..", "shared", "spec")
			if _, err := os.Stat(filepath.Join(d, "ws-reliability-1.1.xsd")); err == nil {
				return d
			}
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	t.Skip("ws-reliability-1.1.xsd not found: set WSRKIT_XSD_DIR to the directory holding it (and reference-1.1.xsd)")
	return ""
}

// xmllint validates one standalone header block against the wsrm schema
// (which imports reference-1.1.xsd from the same directory). Without
// xmllint the test skips, or fails when CI is set (testtool.Need).
func xmllint(t *testing.T, dir, name string, block []byte) error {
	t.Helper()
	bin := testtool.Need(t, "xmllint", "libxml2-utils")
	f := filepath.Join(t.TempDir(), name+".xml")
	if err := os.WriteFile(f, block, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--noout", "--schema", filepath.Join(dir, "ws-reliability-1.1.xsd"), f).CombinedOutput()
	if err != nil {
		return &lintError{string(out)}
	}
	return nil
}

type lintError struct{ out string }

func (e *lintError) Error() string { return e.out }

// schemaRequests are requests that exercise every optional part.
func schemaRequests() map[string]*Request {
	single := &Request{MessageID: MessageID{GroupID: "mid:single@h"},
		ExpiryTime:   time.Date(2025, 1, 1, 11, 0, 0, 0, time.UTC),
		ReplyPattern: ReplyPattern{Value: group.ReplyPoll}}
	full := fullRequest()
	full.MessageID.GroupID = "mid:7f3c2a10-8e5b-4c1e-9d2a-1b2c3d4e5f60@producer.example.com"
	full.ReplyPattern.ReplyTo = &ReplyTo{ReferenceScheme: "urn:bare", BareURI: "http://producer.example.com/rmp/acks?a=1&b=2"}
	idle := &Request{MessageID: MessageID{GroupID: "mid:idle@h", Sequence: &SequenceNum{Number: 3,
		Timing: group.Timing{MaxIdle: group.Duration{Clock: 90 * time.Second}, HasMaxIdle: true}}},
		ExpiryTime:   time.Date(2025, 1, 1, 11, 0, 0, 0, time.UTC),
		ReplyPattern: ReplyPattern{Value: group.ReplyResponse}, Flags: group.Flags{AckRequested: true}}
	return map[string]*Request{"single": single, "full": full, "idle": idle}
}

func TestEmittedHeadersValidateAgainstSchema(t *testing.T) {
	dir := schemaDir(t)
	for _, v := range []Version{SOAP11, SOAP12} {
		for name, r := range schemaRequests() {
			b, err := AppendRequestHeader(nil, v, r)
			noErr(t, err)
			if err := xmllint(t, dir, "request-"+name, b); err != nil {
				t.Errorf("%v request %s does not validate:\n%s\n%v", v, name, b, err)
			}
		}
		// D6 strict: every emitted code is in the schema.
		b, err := AppendResponseHeader(nil, v, fullResponse(), faults.Strict11)
		noErr(t, err)
		if err := xmllint(t, dir, "response", b); err != nil {
			t.Errorf("%v strict response does not validate:\n%s\n%v", v, b, err)
		}
		for _, c := range faults.All() {
			r := &Response{Replies: []group.Reply{{GroupID: "g", Fault: c}, {GroupID: "h", Sequenced: true,
				Ranges: []group.ReplyRange{{From: 1, To: 2, Fault: c}}}}}
			b, err := AppendResponseHeader(nil, v, r, faults.Strict11)
			noErr(t, err)
			if err := xmllint(t, dir, "response-"+c.String(), b); err != nil {
				t.Errorf("%v strict response with %v does not validate:\n%s\n%v", v, c, b, err)
			}
		}
		b, err = AppendPollRequestHeader(nil, v, fullPoll())
		noErr(t, err)
		if err := xmllint(t, dir, "poll", b); err != nil {
			t.Errorf("%v poll does not validate:\n%s\n%v", v, b, err)
		}
		// The blocks inside whole envelopes validate too, once cut out with
		// their in-scope namespace declarations.
		env, err := AppendEnvelope(nil, v, Headers{schemaRequests()["full"], fullResponse(), fullPoll()}, faults.Strict11, []byte("<x/>"))
		noErr(t, err)
		doc := etree.NewDocument()
		noErr(t, doc.ReadFromBytes(env))
		blocks := doc.Root().ChildElements()[0].ChildElements()
		equal(t, 3, len(blocks))
		for _, blk := range blocks {
			if err := xmllint(t, dir, "envelope-"+blk.Tag, Standalone(blk)); err != nil {
				t.Errorf("%v envelope block %s does not validate:\n%s\n%v", v, blk.Tag, Standalone(blk), err)
			}
		}
	}
}

// D6 matters: the extended codes are outside the 1.1 schema.
func TestExtendedDialectFailsSchema(t *testing.T) {
	dir := schemaDir(t)
	for _, c := range []faults.Code{faults.MessageExpired, faults.MessageStoreOverflow} {
		r := &Response{Replies: []group.Reply{{GroupID: "g", Fault: c}}}
		ext, err := AppendResponseHeader(nil, SOAP11, r, faults.Extended)
		noErr(t, err)
		err = xmllint(t, dir, "extended-"+c.String(), ext)
		if err == nil {
			t.Fatalf("extended %v validated against the 1.1 schema:\n%s", c, ext)
		}
		if !strings.Contains(err.Error(), "fault") {
			t.Errorf("unexpected xmllint complaint: %v", err)
		}
		strict, err := AppendResponseHeader(nil, SOAP11, r, faults.Strict11)
		noErr(t, err)
		if err := xmllint(t, dir, "strict-"+c.String(), strict); err != nil {
			t.Errorf("strict %v does not validate:\n%s\n%v", c, strict, err)
		}
	}
}
