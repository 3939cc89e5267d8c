package gateway

import (
	"fmt"
	"net/url"
	"runtime"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/internal/benchkit"
	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/soap"
	"github.com/wsrkit/wsrkit/store/memstore"
)

// pageEngine is a pure engine holding pageGroups receiving groups: 90%
// with number 0 delivered, 10% holding 1 behind the gap of 0.
func pageEngine(b *testing.B) *rmp.Engine {
	var cfg rmp.Config
	cfg.Sender.InstanceID = "page"
	cfg.Receiver.MaxGroups = 2 * pageGroups
	e, err := rmp.LoadEngine(cfg, memstore.New(memstore.Options{}))
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range pageGroups {
		n := uint64(0)
		if i%10 == 9 {
			n = 1
		}
		env, _ := soap.AppendRequestEnvelope(nil, soap.SOAP11, &soap.Request{
			MessageID:    soap.MessageID{GroupID: fmt.Sprintf("urn:bench:page:%06d", i), Sequence: &soap.SequenceNum{Number: n}},
			ExpiryTime:   now.Add(time.Hour),
			ReplyPattern: soap.ReplyPattern{Value: group.ReplyResponse},
			Flags:        group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: true},
		}, []byte("<o/>"))
		e.Receive(now, uint64(i+1), soap.ContentTypeSOAP11, env)
		for e.HasReady() {
			rd := e.Ready()
			e.Advance()
			for _, d := range rd.Deliver {
				e.Taken(now, d.Ref)
			}
		}
	}
	return e
}

// BenchmarkGroupsPageEngine is the work GET /v1/groups does in the node's
// loop for one page over 100,000 groups; fullscan is the straightforward
// pass over every group's view, for the ratio.
func BenchmarkGroupsPageEngine(b *testing.B) {
	e := pageEngine(b)
	a := e.Admin()
	query := func(b *testing.B, s string) groupQuery {
		v, _ := url.ParseQuery(s)
		q, err := parseGroupQuery(v)
		if err != nil {
			b.Fatal(err)
		}
		return q
	}
	mid := indexedPage(a, query(b, "limit=1000"))
	for range 49 {
		mid = indexedPage(a, query(b, "limit=1000&after="+*mid.Next))
	}
	cases := append(pageQueries(*mid.Next), struct{ name, query string }{"fullscan", "limit=100"})
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			q := query(b, c.query)
			page := indexedPage
			if c.name == "fullscan" {
				page = referencePage
			}
			runtime.GC() // the setup's garbage is not the page's
			cpu := benchkit.CPUTime()
			for b.Loop() {
				if out := page(a, q); len(out.Groups) == 0 {
					b.Fatal("empty page")
				}
			}
			reportPage(b, cpu)
		})
	}
}
