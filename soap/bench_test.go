package soap

import (
	"testing"

	"github.com/beevik/etree"
	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// Goals (BENCHMARKS.md "## soap"): ParseRequest ≤ 1.3× EtreeReadOnly;
// BuildResponse ≤ 0.2× EtreeWriteCeiling. Ratios are taken in one run.

func BenchmarkParseRequest(b *testing.B) {
	data := readTestdata(b, "bench-request-s11.xml")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		env, err := Parse(data, ParseOptions{})
		if err != nil || env.Request == nil || env.Request.MessageID.Sequence.Number != 41 {
			b.Fatal(err)
		}
	}
}

// BenchmarkEtreeReadOnly is the ceiling: etree reading the same bytes and
// nothing else.
func BenchmarkEtreeReadOnly(b *testing.B) {
	data := readTestdata(b, "bench-request-s11.xml")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		doc := etree.NewDocument()
		if err := doc.ReadFromBytes(data); err != nil {
			b.Fatal(err)
		}
	}
}

// benchAck is an ack with several groups and ranges, one fault.
func benchAck() *Response {
	return &Response{Replies: []group.Reply{
		{GroupID: "mid:7f3c2a10-8e5b-4c1e-9d2a-1b2c3d4e5f60@producer.example.com", Sequenced: true,
			Ranges: []group.ReplyRange{{From: 0, To: 41}}},
		{GroupID: "mid:0a1b2c3d-0000-4000-8000-000000000005@producer.example.com", Sequenced: true,
			Ranges: []group.ReplyRange{{From: 0, To: 2}, {From: 5, To: 9},
				{From: 11, To: 11, Fault: faults.MessageProcessingFailure}}},
		{GroupID: "mid:0a1b2c3d-0000-4000-8000-000000000003@producer.example.com"},
	}}
}

func BenchmarkBuildResponse(b *testing.B) {
	r := benchAck()
	buf := make([]byte, 0, 2048)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		buf, err = AppendResponseEnvelope(buf[:0], SOAP11, r, faults.Strict11, nil)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

// etreeAck builds the same envelope as BuildResponse with etree.
func etreeAck(r *Response) ([]byte, error) {
	doc := etree.NewDocument()
	env := doc.CreateElement("S11:Envelope")
	env.CreateAttr("xmlns:S11", NamespaceSOAP11)
	env.CreateAttr("xmlns:wsrm", NamespaceWSRM)
	resp := env.CreateElement("S11:Header").CreateElement("wsrm:Response")
	resp.CreateAttr("S11:mustUnderstand", "1")
	for _, rep := range r.Replies {
		if !rep.Sequenced {
			e := resp.CreateElement("wsrm:NonSequenceReply")
			e.CreateAttr("groupId", rep.GroupID)
			if rep.Fault != 0 {
				e.CreateAttr("fault", rep.Fault.QName("wsrm"))
			}
			continue
		}
		e := resp.CreateElement("wsrm:SequenceReplies")
		e.CreateAttr("groupId", rep.GroupID)
		for _, rg := range rep.Ranges {
			x := e.CreateElement("wsrm:ReplyRange")
			x.CreateAttr("from", itoa(rg.From))
			x.CreateAttr("to", itoa(rg.To))
			if rg.Fault != 0 {
				x.CreateAttr("fault", rg.Fault.QName("wsrm"))
			}
		}
	}
	env.CreateElement("S11:Body")
	return doc.WriteToBytes()
}

// BenchmarkEtreeWriteCeiling builds and writes the same tree with etree.
func BenchmarkEtreeWriteCeiling(b *testing.B) {
	r := benchAck()
	b.ReportAllocs()
	var n int
	for b.Loop() {
		out, err := etreeAck(r)
		if err != nil {
			b.Fatal(err)
		}
		n = len(out)
	}
	b.SetBytes(int64(n))
}

// The two writers of the benchmark produce the same document.
func TestBenchWritersAgree(t *testing.T) {
	a, err := AppendResponseEnvelope(nil, SOAP11, benchAck(), faults.Strict11, nil)
	noErr(t, err)
	e, err := etreeAck(benchAck())
	noErr(t, err)
	equal(t, string(e), string(a))
}

// BenchmarkScanRequest is the Scanner over an envelope that arrives in one
// piece, as ReadRequest feeds it (httpbody.Limits.Scan).
func BenchmarkScanRequest(b *testing.B) {
	data := readTestdata(b, "bench-request-s11.xml")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewScanner(ParseOptions{}, "").Write(data); err != nil {
			b.Fatal(err)
		}
	}
}
