package rmp

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/store/memstore"
)

// runConsumer holds the first hand-off until released, refuses one number
// once and records every call, with whether it came in a run.
type runConsumer struct {
	mu      sync.Mutex
	calls   []string
	inRun   int
	gate    chan struct{}
	refuse  string // refused once
	refused bool
}

func (c *runConsumer) Deliver(_ context.Context, d Delivery) ([]byte, error) {
	if d.Ref.Number == 0 {
		<-c.gate
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	body := bodyText(d.Payload)
	if d.InRun {
		c.inRun++
	}
	if body == c.refuse && !c.refused {
		c.refused = true
		c.calls = append(c.calls, body+"!")
		return nil, errors.New("consumer busy")
	}
	c.calls = append(c.calls, body)
	return nil, nil
}

func (c *runConsumer) taken() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var got []string
	for _, s := range c.calls {
		if s[len(s)-1] != '!' {
			got = append(got, s)
		}
	}
	return got
}

func TestNodeHandsAnOrderedRunToTheConsumer(t *testing.T) {
	// D14, R49, R92 (#22): messages that arrive while the group's first
	// hand-off is outstanding go out as one run after it; a refused one
	// in a run stops the run there (the rest are handed back unseen and
	// follow it once its retry is taken), so the consumer sees every number
	// once, in order.
	cons := &runConsumer{gate: make(chan struct{}), refuse: "m4"}
	cfg := NodeConfig{Outbound: loopbackOnly, Engine: engineConfig("r"), Store: memstore.New(memstore.Options{}), Consumer: cons}
	cfg.Engine.Receiver.DeliveryRetry.Initial = 20 * time.Millisecond
	rn, err := Open(cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(rn)
	defer srv.Close()
	sc := newCollector()
	sn, err := Open(nodeConfig("s", memstore.New(memstore.Options{}), sc))
	require.NoError(t, err)
	ctx := context.Background()
	const total = 12
	subs := make([]Submission, total)
	for i := range subs {
		subs[i] = submission("g", i, i == total-1)
		subs[i].To = srv.URL
	}
	_, err = sn.SubmitBatch(ctx, subs)
	require.NoError(t, err)
	// 0's answer waits for its hand-off (R73); the others are acked once
	// stored (D8) and wait behind it.
	sc.waitFor(t, "1.. acknowledged", func() bool { return len(sc.outcomes) == total-1 })
	close(cons.gate) // 0 taken: 1.. follow as runs
	want := make([]string, total)
	for i := range want {
		want[i] = fmt.Sprintf("m%d", i)
	}
	waitUntil(t, func() bool { return len(cons.taken()) == total })
	require.Equal(t, want, cons.taken(), "each once, in order")
	cons.mu.Lock()
	calls, inRun := cons.calls, cons.inRun
	cons.mu.Unlock()
	require.Equal(t, "m4!", calls[4], "nothing after the refused hand-off before its retry")
	require.Equal(t, "m4", calls[5])
	require.Positive(t, inRun, "hand-offs came in runs")
	sc.waitFor(t, "every outcome", func() bool { return len(sc.outcomes) == total })
	require.NoError(t, rn.Close(ctx))
	require.NoError(t, sn.Close(ctx))
	for ref, o := range sc.outcomes {
		require.True(t, strings.HasSuffix(o, " acknowledged"), "%s: %s", ref, o)
	}
}
