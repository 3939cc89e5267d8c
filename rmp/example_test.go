package rmp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/store/memstore"
	"github.com/wsrkit/wsrkit/store/pebblestore"
)

// A receiving RMP embedded in an http.ServeMux: reliable messages POSTed to
// /rmp are acknowledged once durably stored and handed to the consumer.
func ExampleNode_ServeHTTP() {
	delivered := make(chan string, 1)
	receiving, err := rmp.Open(rmp.NodeConfig{
		Store: memstore.New(memstore.Options{}),
		Consumer: rmp.ConsumerFunc(func(_ context.Context, d rmp.Delivery) ([]byte, error) {
			body := string(d.Payload)
			delivered <- body[strings.Index(body, "<o:Order"):strings.Index(body, "</S11:Body>")]
			return nil, nil
		}),
	})
	if err != nil {
		panic(err)
	}
	defer receiving.Close(context.Background())
	mux := http.NewServeMux()
	mux.Handle("POST /rmp", receiving)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// Any WS-Reliability 1.1 sender can now POST to srv.URL+"/rmp".
	envelope := `<S11:Envelope xmlns:S11="http://schemas.xmlsoap.org/soap/envelope/"
  xmlns:wsrm="http://docs.oasis-open.org/wsrm/2004/06/ws-reliability-1.1.xsd">
 <S11:Header><wsrm:Request S11:mustUnderstand="1">
  <wsrm:MessageId groupId="mid:example-1@producer"/>
  <wsrm:ExpiryTime>2999-01-01T00:00:00Z</wsrm:ExpiryTime>
  <wsrm:ReplyPattern><wsrm:Value>Response</wsrm:Value></wsrm:ReplyPattern>
  <wsrm:AckRequested/>
 </wsrm:Request></S11:Header>
 <S11:Body><o:Order xmlns:o="urn:example">42</o:Order></S11:Body>
</S11:Envelope>`
	resp, err := http.Post(srv.URL+"/rmp", "text/xml; charset=utf-8", strings.NewReader(envelope))
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println("HTTP", resp.StatusCode)
	fmt.Println("delivered", <-delivered)
	// Output:
	// HTTP 200
	// delivered <o:Order xmlns:o="urn:example">42</o:Order>
}

// A sending RMP: Submit returns once the message is durably stored; the
// outcome arrives later through the OutcomeHandler.
func ExampleNode_Submit() {
	receiving, _ := rmp.Open(rmp.NodeConfig{
		Store:    memstore.New(memstore.Options{}),
		Consumer: rmp.ConsumerFunc(func(context.Context, rmp.Delivery) ([]byte, error) { return nil, nil }),
	})
	defer receiving.Close(context.Background())
	srv := httptest.NewServer(receiving)
	defer srv.Close()

	outcomes := make(chan sender.Outcome, 1)
	cfg := rmp.NodeConfig{
		Store: memstore.New(memstore.Options{}),
		// The default policy calls public addresses only.
		Outbound: outbound.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		Outcomes: rmp.OutcomeFunc(func(_ context.Context, o sender.Outcome) error {
			outcomes <- o
			return nil
		}),
	}
	cfg.Engine.Sender.InstanceID = "example"
	sending, err := rmp.Open(cfg)
	if err != nil {
		panic(err)
	}
	defer sending.Close(context.Background())

	ref, err := sending.Submit(context.Background(), rmp.Submission{
		To:       srv.URL,
		GroupKey: "orders",
		Flags:    group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: true},
		Lifetime: time.Minute,
		Pattern:  group.ReplyResponse,
		Payload:  []byte(`<o:Order xmlns:o="urn:example">42</o:Order>`),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("stored as number", ref.Number, "of", ref.GroupID)
	o := <-outcomes
	fmt.Println(o.Kind)
	// Output:
	// stored as number 0 of mid:0.example@wsrkit
	// acknowledged
}

// The README's embedding snippet, between the "README" lines as it is
// printed there (TestREADMEEmbeddingIsExampleOpen): one Node on a pebble
// store serves a receiving RMP at POST /rmp and submits as a sending one.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "wsrkit-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	st, err := pebblestore.Open(pebblestore.Options{Dir: dir})
	if err != nil {
		panic(err)
	}
	consumer := rmp.ConsumerFunc(func(context.Context, rmp.Delivery) ([]byte, error) { return nil, nil })
	outcomes := rmp.OutcomeFunc(func(context.Context, sender.Outcome) error { return nil })
	mux := http.NewServeMux()
	ctx := context.Background()
	body := []byte(`<o:Order xmlns:o="urn:example">42</o:Order>`)

	// README
	node, err := rmp.Open(rmp.NodeConfig{
		Store:    st,       // pebblestore.Open(pebblestore.Options{Dir: "data"})
		Consumer: consumer, // rmp.ConsumerFunc: return (response, nil) once the message is taken
		Outcomes: outcomes, // rmp.OutcomeFunc: acknowledged (with the peer's response), or failed with a reason
	})
	mux.Handle("POST /rmp", node)
	ref, err := node.Submit(ctx, rmp.Submission{
		To: "http://peer/rmp", GroupKey: "orders", Lifetime: time.Minute,
		Flags:   group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: true},
		Pattern: group.ReplyResponse, Payload: body,
	})
	// README

	if err != nil {
		panic(err)
	}
	// Stored; sending to http://peer/rmp goes on in the background until
	// Close.
	fmt.Println("stored as number", ref.Number)
	node.Close(ctx)
	// Output:
	// stored as number 0
}
