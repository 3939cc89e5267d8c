package soap

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/wsrkit/wsrkit/faults"
)

// addExamples seeds a fuzzer with the digest §12 envelopes; more seeds live
// in testdata/fuzz/<FuzzName>/.
func addExamples(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*.xml"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzParse: Parse never panics; every error is a fault with a valid code
// and a rule; an accepted envelope has exactly one root element (issue 18,
// XML 1.0 §2.1) by an independent reader's count, and can be forwarded and
// stripped.
func FuzzParse(f *testing.F) {
	addExamples(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := Parse(data, ParseOptions{})
		if err != nil {
			var flt *faults.Fault
			if !errors.As(err, &flt) || !flt.Code.Valid() || flt.Rule == "" {
				t.Fatalf("error is not a fault with a rule: %v", err)
			}
			if flt.Scope == faults.ScopeMessage && (env == nil || env.Request == nil || flt.GroupID == "") {
				t.Fatalf("message fault without the identified request: %v", err)
			}
			return
		}
		if n := topLevelElements(t, data); n != 1 {
			t.Fatalf("accepted a document with %d root elements: %q", n, data)
		}
		_ = env.BodyContent()
		out, err := env.WithoutWSRM()
		if err != nil {
			t.Fatalf("WithoutWSRM: %v", err)
		}
		if ref := withoutWSRMByCopy(t, env); !bytes.Equal(out, ref) {
			t.Fatalf("WithoutWSRM differs from the deep-copy reference:\n got %s\nwant %s", out, ref)
		}
		stripped, err := Parse(out, ParseOptions{MaxBytes: 1 << 30, MaxAttributes: 1 << 20})
		if err != nil {
			t.Fatalf("stripped envelope does not parse: %v\n%s", err, out)
		}
		if stripped.Request != nil || stripped.Response != nil || stripped.PollRequest != nil {
			t.Fatalf("wsrm blocks survived WithoutWSRM: %s", out)
		}
	})
}

// topLevelElements counts the root elements of data with encoding/xml's
// tokenizer, a reader independent of both of Parse's.
func topLevelElements(t *testing.T, data []byte) int {
	b, err := ToUTF8(data, "")
	if err != nil {
		t.Fatalf("accepted, but ToUTF8 refuses it: %v", err)
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	depth, roots := 0, 0
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			return roots
		}
		if err != nil {
			t.Fatalf("accepted, but encoding/xml cannot read it: %v\n%q", err, data)
		}
		switch tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
			}
			depth++
		case xml.EndElement:
			depth--
		}
	}
}

// FuzzRoundTrip: parse → write → parse gives equal structs, and writing is
// deterministic.
func FuzzRoundTrip(f *testing.F) {
	addExamples(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := Parse(data, ParseOptions{})
		if err != nil {
			return
		}
		h := Headers{Request: env.Request, Response: env.Response, PollRequest: env.PollRequest}
		if h.Response != nil && len(h.Response.Replies) == 0 {
			h.Response = nil // A14: accepted on input, never written
		}
		body := env.BodyContent()
		out, err := AppendEnvelope(nil, env.Version, h, faults.Extended, body)
		if err != nil {
			t.Fatalf("parsed headers cannot be written: %v", err)
		}
		again, err := AppendEnvelope(nil, env.Version, h, faults.Extended, body)
		if err != nil || string(again) != string(out) {
			t.Fatalf("writing is not deterministic")
		}
		back, err := Parse(out, ParseOptions{MaxBytes: 1 << 30, MaxAttributes: 1 << 20})
		if err != nil {
			t.Fatalf("written envelope does not parse: %v\n%s", err, out)
		}
		// Writers always set mustUnderstand (R03).
		for _, r := range []*Request{h.Request} {
			if r != nil {
				r.MustUnderstand = true
			}
		}
		if h.Response != nil {
			h.Response.MustUnderstand = true
		}
		if h.PollRequest != nil {
			h.PollRequest.MustUnderstand = true
		}
		equal(t, h.Request, back.Request, "Request")
		equal(t, h.Response, back.Response, "Response")
		equal(t, h.PollRequest, back.PollRequest, "PollRequest")
		if (env.Fault == nil) != (back.Fault == nil) || env.Fault != nil && (env.Fault.Code != back.Fault.Code || env.Fault.SOAPCode != back.Fault.SOAPCode) {
			t.Fatalf("fault changed: %+v → %+v", env.Fault, back.Fault)
		}
	})
}
