package rmp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/rmp/clock"
	"github.com/wsrkit/wsrkit/store/memstore"
)

// A copy of a request-response message that arrives while the original is
// being handed to the consumer (its sender resent it: the first POST was
// slow) waits for that hand-off and carries the business response, even
// with AwaitDelivery off (R73, D18): acknowledged alone, the producer would
// never get the response (a -route client would see 202).
func TestNodeCopyDuringHandOffCarriesTheResponse(t *testing.T) {
	ctx := context.Background()
	entered, free := make(chan struct{}, 1), make(chan struct{})
	rn, err := Open(NodeConfig{Store: memstore.New(memstore.Options{}), Clock: clock.NewFake(epoch), Consumer: ConsumerFunc(
		func(context.Context, Delivery) ([]byte, error) {
			entered <- struct{}{}
			<-free
			return []byte(`<q:Price xmlns:q="urn:q">10</q:Price>`), nil
		})})
	require.NoError(t, err)
	srv := httptest.NewServer(rn)
	defer rn.Close(ctx)
	defer srv.Close()
	defer func() {
		select {
		case <-free:
		default:
			close(free)
		}
	}()
	s := newSide(t, "sender", engineConfig("s"))
	_, err = s.e.Submit(epoch, submission("", 0, false))
	require.NoError(t, err)
	s.drain(epoch)
	require.Len(t, s.sends, 1)
	o := s.sends[0]
	post := func(out chan<- string) {
		resp, err := http.Post(srv.URL, o.Post.ContentType, bytes.NewReader(o.Post.Body))
		if err != nil {
			out <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out <- string(b)
	}
	first, copied := make(chan string, 1), make(chan string, 1)
	go post(first)
	select {
	case <-entered:
	case <-time.After(time.Minute):
		t.Fatal("the message never reached the consumer")
	}
	go post(copied)
	select {
	case a := <-copied:
		t.Fatalf("the copy was answered while its original was with the consumer: %s", a)
	case <-time.After(300 * time.Millisecond):
	}
	close(free)
	for _, ch := range []chan string{first, copied} {
		a := <-ch
		require.Contains(t, a, `<wsrm:Response`, "its ack")
		require.Contains(t, a, ">10</q:Price>", "the business response")
	}
}
