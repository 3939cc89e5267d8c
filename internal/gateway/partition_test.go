package gateway

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/internal/lbtest"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/etcdstore"
	"github.com/wsrkit/wsrkit/store/etcdstore/etcdtest"
)

// pausable holds every commit while paused (a frozen process) and records
// how each held commit ended.
type pausable struct {
	store.Store
	gate *gate
}

type gate struct {
	mu      sync.Mutex
	paused  chan struct{} // closed when resumed; nil when running
	held    int
	results []error
}

func (g *gate) pause() {
	g.mu.Lock()
	g.paused = make(chan struct{})
	g.mu.Unlock()
}

func (g *gate) resume() {
	g.mu.Lock()
	if g.paused != nil {
		close(g.paused)
		g.paused = nil
	}
	g.mu.Unlock()
}

func (p *pausable) Apply(batch []group.Mutation) error {
	p.gate.mu.Lock()
	ch := p.gate.paused
	if ch != nil {
		p.gate.held++
	}
	p.gate.mu.Unlock()
	if ch == nil {
		return p.Store.Apply(batch)
	}
	<-ch
	err := p.Store.Apply(batch)
	p.gate.mu.Lock()
	p.gate.results = append(p.gate.results, err)
	p.gate.mu.Unlock()
	return err
}

// TestClusterPartition: gateway a is paused (its commits held) while the
// load balancer still sends it traffic; its lease ends as the TTL would
// end it; b takes a's shards over and gets every message acknowledged and
// delivered; when a resumes, its held commits are refused with ErrFenced,
// a reports the loss and nothing is delivered twice.
func TestClusterPartition(t *testing.T) {
	etcd := etcdtest.StartTB(t, etcdtest.Options{Members: 3})
	sink := &deliveries{byGroup: map[string][]uint64{}}
	consumer := httptest.NewServer(sink)
	defer consumer.Close()
	g := &gate{}
	acfg := clusterConfig(t, etcd.Endpoints, "a", consumer.URL)
	acfg.Shards = 4
	a, err := Start(acfg, Options{WrapShardStore: func(_ int, s store.Store) store.Store { return &pausable{Store: s, gate: g} }})
	require.NoError(t, err)
	var killA sync.Once
	t.Cleanup(func() { g.resume(); killA.Do(a.Kill) })
	bcfg := clusterConfig(t, etcd.Endpoints, "b", consumer.URL)
	bcfg.Shards = 4
	b, err := Start(bcfg, Options{})
	require.NoError(t, err)
	defer b.Shutdown(t.Context())
	require.Eventually(t, func() bool { return len(a.nodes()) == 2 && len(b.nodes()) == 2 }, 20*time.Second, 20*time.Millisecond)
	fr := lbtest.New(2*time.Second, a.URL())
	lb := httptest.NewServer(fr)
	defer lb.Close()

	sender := startSender(t)

	g.pause()
	const groups, perGroup = 6, 4
	var ids []string
	want := map[string][]uint64{}
	for k := range perGroup {
		for gi := range groups {
			var ans SubmitAnswer
			require.Equal(t, 202, postJSON(t, sender.URL()+"/v1/messages", map[string]any{"to": lb.URL + "/rmp", "group": fmt.Sprintf("p%d", gi),
				"ordered": true, "ack": true, "dupElim": true, "expiresIn": "5m", "body": fmt.Sprintf("<m k='%d'/>", k)}, &ans))
			ids = append(ids, ans.ID)
			want[ans.GroupID] = append(want[ans.GroupID], *ans.Number)
		}
	}
	// a holds commits of its shards' groups while it still believes it
	// owns them.
	require.Eventually(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.held > 0 }, 10*time.Second, 10*time.Millisecond)

	// The pause outlasts a's lease: etcd ends it, b takes the shards.
	require.NoError(t, etcd.ExpireLease(etcdstore.ClaimKey(shardPrefix("/c/", a.nodes()[0].shard), shardClaim)))
	select {
	case err := <-a.Lost():
		require.ErrorIs(t, err, ErrLost)
	case <-time.After(10 * time.Second):
		t.Fatal("a did not report losing its lease")
	}
	require.Eventually(t, func() bool { return len(b.nodes()) == 4 }, 10*time.Second, 20*time.Millisecond)
	fr.Remove(a.URL())
	fr.Add(b.URL())
	require.Eventually(t, func() bool {
		for _, id := range ids {
			var ms MessageStatus
			if getJSON(sender.URL()+"/v1/messages/"+id, &ms) != 200 || ms.State != "acknowledged" {
				return false
			}
		}
		return true
	}, 30*time.Second, 100*time.Millisecond)

	// a resumes: its late commits are fenced off, applying nothing.
	g.resume()
	require.Eventually(t, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.results) == g.held
	}, 10*time.Second, 10*time.Millisecond)
	g.mu.Lock()
	for _, err := range g.results {
		require.True(t, errors.Is(err, etcdstore.ErrFenced), "a's late commit: %v", err)
	}
	t.Logf("%d commits of the paused gateway fenced off", len(g.results))
	g.mu.Unlock()
	killA.Do(a.Kill)

	// Deliveries follow the acks (D8: ack once stored).
	require.Eventually(t, func() bool { return sink.distinct() == len(ids) }, 20*time.Second, 20*time.Millisecond)
	time.Sleep(300 * time.Millisecond) // any stray repeat would arrive by now
	for gid, nums := range want {
		require.Equal(t, nums, sink.group(gid), "group %s: each number once, in order", gid)
	}
	checkOwnership(t, etcd, "/c/shard/")
}
