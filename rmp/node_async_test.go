package rmp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/store/memstore"
)

// gatedLog is a commitLog whose Apply waits while the gate is shut.
type gatedLog struct {
	*commitLog
	gate chan struct{} // a token per Apply let through; closed: all
}

func (g *gatedLog) Apply(batch []group.Mutation) error {
	<-g.gate
	return g.commitLog.Apply(batch)
}

// SubmitAsync returns before its message is stored: while the store holds
// its first commit, a producer hands over more messages without waiting,
// none is sent before it is stored (R21), Wait reports each once durable,
// numbered in call order within its group, and the rest meet in few
// commits; every message arrives once, in order (#22).
func TestNodeSubmitAsyncPipelinesSubmissions(t *testing.T) {
	rc, rsrv := receiverServer(t)

	sc := newCollector()
	log := &gatedLog{gate: make(chan struct{}), commitLog: newCommitLog()}
	cfg := nodeConfig("s", log, sc)
	cfg.Transport = log
	sn, err := Open(cfg)
	require.NoError(t, err)
	defer sn.Close(context.Background())

	const total = 40
	keys := make([]string, total)
	pending := make([]*PendingSubmit, total)
	for i := range total {
		keys[i] = []string{"a", "b"}[i%2]
		s := submission(keys[i], i, false)
		s.To = rsrv.URL
		// The store lets nothing through yet: Submit would block here.
		pending[i], err = sn.SubmitAsync(context.Background(), s)
		require.NoError(t, err, "message %d", i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err = pending[0].Wait(ctx)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "reported stored before the store took it")

	close(log.gate)
	next := map[string]uint64{}
	groups := map[string]string{}
	for i, p := range pending {
		ref, err := p.Wait(context.Background())
		require.NoError(t, err, "message %d", i)
		require.Equal(t, next[keys[i]], ref.Number, "message %d of group %q", i, keys[i])
		next[keys[i]]++
		if g, ok := groups[keys[i]]; ok {
			require.Equal(t, g, ref.GroupID)
		}
		groups[keys[i]] = ref.GroupID
	}
	require.NotEqual(t, groups["a"], groups["b"])

	// Wait again, from several goroutines at once: the same answer.
	var wg sync.WaitGroup
	again := make([]sender.MessageRef, 8)
	for k := range again {
		wg.Go(func() {
			ref, err := pending[7].Wait(context.Background())
			require.NoError(t, err)
			again[k] = ref
		})
	}
	wg.Wait()
	first, _ := pending[7].Wait(context.Background())
	for _, ref := range again {
		require.Equal(t, first, ref)
	}

	log.mu.Lock()
	require.Empty(t, log.early, "sent before stored (R21)")
	commits := map[int]bool{}
	for i := range total {
		at, ok := log.storedIn[fmt.Sprintf("<p>m%d</p>", i)]
		require.True(t, ok, "message %d never stored", i)
		commits[at] = true
	}
	log.mu.Unlock()
	// The loop took all 40 while the first commit was held: they cannot
	// need a commit each.
	require.Less(t, len(commits), total/2, "commits that stored the messages")

	sc.waitFor(t, "every outcome", func() bool { return len(sc.outcomes) == total })
	rc.waitFor(t, "every delivery", func() bool { return len(rc.delivered) == total })
	rc.mu.Lock()
	defer rc.mu.Unlock()
	got := map[string][]string{}
	for _, m := range rc.delivered {
		var i int
		_, err := fmt.Sscanf(m, "m%d", &i)
		require.NoError(t, err)
		got[keys[i]] = append(got[keys[i]], m)
	}
	for _, k := range []string{"a", "b"} {
		require.Len(t, got[k], total/2, "group %q", k)
		for j, m := range got[k] {
			want := 2*j + map[string]int{"a": 0, "b": 1}[k]
			require.Equal(t, fmt.Sprintf("m%d", want), m, "group %q, delivery %d", k, j)
		}
	}
}

// A submission the engine refuses is refused through Wait with Submit's
// error; a destination the policy refuses, and a closed Node, at once.
func TestNodeSubmitAsyncRefusals(t *testing.T) {
	cfg := nodeConfig("s", memstore.New(memstore.Options{}), newCollector())
	cfg.Engine.Sender.Limits.MaxPayloadBytes = 64
	sn, err := Open(cfg)
	require.NoError(t, err)

	big := submission("a", 0, false)
	big.To = "http://127.0.0.1:1/rmp"
	big.Payload = []byte("<p>" + string(make([]byte, 100)) + "</p>")
	p, err := sn.SubmitAsync(context.Background(), big)
	require.NoError(t, err)
	_, werr := p.Wait(context.Background())
	_, serr := sn.Submit(context.Background(), big)
	require.ErrorIs(t, werr, sender.ErrInvalidSubmission)
	require.Equal(t, serr.Error(), werr.Error())

	far := submission("a", 1, false)
	far.To = "http://10.1.2.3/rmp" // private: refused by the outbound policy (#18)
	p, err = sn.SubmitAsync(context.Background(), far)
	require.ErrorIs(t, err, sender.ErrInvalidSubmission)
	require.Nil(t, p)

	ok := submission("a", 2, false)
	ok.To = "http://127.0.0.1:1/rmp"
	p, err = sn.SubmitAsync(context.Background(), ok)
	require.NoError(t, err)
	require.NoError(t, sn.Close(context.Background()))
	// Close commits what the loop took: the message was stored.
	ref, err := p.Wait(context.Background())
	require.NoError(t, err)
	require.Equal(t, uint64(0), ref.Number)

	_, err = sn.SubmitAsync(context.Background(), ok)
	require.True(t, errors.Is(err, ErrClosed), "after Close: %v", err)
}
