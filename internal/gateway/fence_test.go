package gateway

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/receiver"
)

// TestFencedConsumer: a shard node's hand-off reaches -deliver with the
// holding's fence token only while the lease is known to be granted; once
// it is not, nothing is POSTed and the node gets an error (retry later).
func TestFencedConsumer(t *testing.T) {
	var mu sync.Mutex
	var fences []string
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fences = append(fences, r.Header.Get(HeaderFence))
		mu.Unlock()
	}))
	defer sink.Close()
	leaseErr := error(nil)
	c := &fencedConsumer{
		Consumer: &httpConsumer{url: sink.URL, client: sink.Client()},
		fence:    fence{token: "3/42", alive: func(context.Context) error { return leaseErr }},
	}
	d := rmp.Delivery{
		Ref:     receiver.DeliveryRef{Group: group.ID{GroupID: "g", Generation: 1}, Number: 5, HasNumber: true},
		Payload: []byte(`<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Body/></e:Envelope>`),
	}
	_, err := c.Deliver(context.Background(), d)
	require.NoError(t, err)

	leaseErr = errors.New("lease ended")
	_, err = c.Deliver(context.Background(), d)
	require.ErrorContains(t, err, "not handing out g #5: lease ended")

	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"3/42"}, fences, "one POST, carrying the fence; none after the lease ended")

	// Without a fence (one pebble node) the header is absent.
	plain := &httpConsumer{url: sink.URL, client: sink.Client()}
	mu.Unlock()
	_, err = plain.Deliver(context.Background(), d)
	mu.Lock()
	require.NoError(t, err)
	require.Equal(t, []string{"3/42", ""}, fences)
}
