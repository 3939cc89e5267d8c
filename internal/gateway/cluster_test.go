package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/internal/lbtest"
	"github.com/wsrkit/wsrkit/store/etcdstore/etcdtest"
)

// deliveries records every hand-off a -deliver target gets, per group.
type deliveries struct {
	mu      sync.Mutex
	byGroup map[string][]uint64
}

func (d *deliveries) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	n, _ := strconv.ParseUint(r.Header.Get(HeaderSequenceNumber), 10, 64)
	d.mu.Lock()
	d.byGroup[r.Header.Get(HeaderGroupID)] = append(d.byGroup[r.Header.Get(HeaderGroupID)], n)
	d.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// group returns a copy of the numbers handed out for gid, in order.
func (d *deliveries) group(gid string) []uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]uint64(nil), d.byGroup[gid]...)
}

func (d *deliveries) distinct() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, ns := range d.byGroup {
		seen := map[uint64]bool{}
		for _, x := range ns {
			seen[x] = true
		}
		n += len(seen)
	}
	return n
}

func clusterConfig(t *testing.T, eps []string, node, deliver string) Config {
	cfg := loopbackConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.Store = StoreEtcd
	cfg.EtcdEndpoints = eps
	cfg.EtcdPrefix = "/c/"
	cfg.EtcdTimeout = 5 * time.Second
	cfg.NodeID = node
	cfg.LeaseTTL = 3 * time.Second
	cfg.Shards = 8
	cfg.BalanceInterval = 200 * time.Millisecond
	cfg.Deliver = deliver
	cfg.RetryInterval = 100 * time.Millisecond
	cfg.RetryMaxInterval = 500 * time.Millisecond
	cfg.MaxRetries = 1000
	return cfg
}

// startSender starts a pebble gateway that resends quickly and long,
// stopped at the end of t.
func startSender(t *testing.T) *Server {
	return startLocal(t, func(cfg *Config) {
		cfg.RetryInterval, cfg.RetryMaxInterval, cfg.MaxRetries = 100*time.Millisecond, 300*time.Millisecond, 1000
	})
}

func postJSON(t *testing.T, url string, in, out any) int {
	t.Helper()
	return postJSONWith(t, http.DefaultClient, url, in, out)
}

func getJSON(url string, out any) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(out)
	return resp.StatusCode
}

// TestClusterFailover: 3 gateways on a 3-member etcd cluster receive
// ordered exactly-once traffic from 12 groups through a load balancer; one
// gateway is killed mid-stream and, later, one etcd member is stopped.
// Every message is acknowledged and handed to the consumer in order, each
// number once apart from re-hand-offs after a takeover (R92), and etcd's
// history shows that no shard was ever held by two instances at once and
// that every commit was made under the claim current at its revision.
func TestClusterFailover(t *testing.T) {
	etcd := etcdtest.StartTB(t, etcdtest.Options{Members: 3})
	sink := &deliveries{byGroup: map[string][]uint64{}}
	consumer := httptest.NewServer(sink)
	defer consumer.Close()
	var gws []*Server
	fr := lbtest.New(2 * time.Second)
	for i := range 3 {
		s, err := Start(clusterConfig(t, etcd.Endpoints, fmt.Sprintf("gw%d", i), consumer.URL), Options{})
		require.NoError(t, err)
		gws = append(gws, s)
		fr.Add(s.URL())
	}
	killed := map[int]bool{}
	defer func() {
		for i, s := range gws {
			if !killed[i] {
				s.Shutdown(t.Context())
			}
		}
	}()
	lb := httptest.NewServer(fr)
	defer lb.Close()
	// Every shard held once, the counts 3/3/2.
	require.Eventually(t, func() bool {
		total, ok := 0, true
		for _, s := range gws {
			n := len(s.nodes())
			total += n
			ok = ok && n >= 2 && n <= 3
		}
		return ok && total == 8
	}, 20*time.Second, 50*time.Millisecond)

	sender := startSender(t)

	const groups, perGroup = 12, 9
	var ids []string
	wantNumbers := map[string][]uint64{}
	gidOf := map[string]string{}
	submitWave := func(from, to int) {
		for k := from; k < to; k++ {
			for gi := range groups {
				var a SubmitAnswer
				st := postJSON(t, sender.URL()+"/v1/messages", map[string]any{"to": lb.URL + "/rmp", "group": fmt.Sprintf("g%d", gi),
					"ordered": true, "ack": true, "dupElim": true, "expiresIn": "5m", "body": fmt.Sprintf("<m g='%d' k='%d'/>", gi, k)}, &a)
				require.Equal(t, 202, st)
				ids = append(ids, a.ID)
				gidOf[a.ID] = a.GroupID
				wantNumbers[a.GroupID] = append(wantNumbers[a.GroupID], *a.Number)
			}
		}
	}
	submitWave(0, 3)
	require.Eventually(t, func() bool { return sink.distinct() >= groups }, 20*time.Second, 20*time.Millisecond)
	// Kill gw1 mid-stream: its etcd connection goes, its lease expires
	// after the TTL, and gw0 and gw2 take its shards over.
	gws[1].Kill()
	killed[1] = true
	fr.Remove(gws[1].URL())
	submitWave(3, 6)
	require.Eventually(t, func() bool { return sink.distinct() >= 4*groups }, 30*time.Second, 20*time.Millisecond)
	// Stop one etcd member mid-stream.
	require.NoError(t, etcd.Stop(2))
	submitWave(6, perGroup)

	var acked atomic.Int64
	require.Eventually(t, func() bool {
		n := 0
		for _, id := range ids {
			var ms MessageStatus
			if getJSON(sender.URL()+"/v1/messages/"+id, &ms) == 200 && ms.State == "acknowledged" {
				n++
			}
		}
		acked.Store(int64(n))
		return n == len(ids)
	}, 60*time.Second, 200*time.Millisecond, "acknowledged %d of %d", acked.Load(), len(ids))
	require.Eventually(t, func() bool { return sink.distinct() == len(ids) }, 20*time.Second, 20*time.Millisecond)

	// In order, each number once; a repeat only of the number handed out
	// last (a hand-off whose Taken a takeover lost, R92).
	repeats := 0
	for gid, want := range wantNumbers {
		var firsts []uint64
		seen := map[uint64]bool{}
		got := sink.group(gid)
		for _, n := range got {
			if seen[n] {
				require.Equal(t, firsts[len(firsts)-1], n, "group %s: %v", gid, got)
				repeats++
				continue
			}
			seen[n] = true
			firsts = append(firsts, n)
		}
		require.Equal(t, want, firsts, "group %s", gid)
	}
	t.Logf("%d messages in %d groups delivered in order; %d re-hand-offs after the takeover", len(ids), groups, repeats)

	checkOwnership(t, etcd, "/c/shard/")
}

// checkOwnership reads etcd's history of the shard claims and commit
// stamps: per shard, holdings never overlap (a claim is created only after
// the previous one was deleted), every stamp names the holding current at
// its revision, and at least one shard changed hands.
func checkOwnership(t *testing.T, etcd *etcdtest.Cluster, prefix string) {
	t.Helper()
	evs, err := etcd.History(prefix)
	require.NoError(t, err)
	type holding struct {
		node string
		rev  int64
	}
	current := map[string]*holding{}   // shard prefix → live holding
	holdersOf := map[string][]string{} // shard prefix → nodes in order
	stamps := 0
	for _, ev := range evs {
		rest := strings.TrimPrefix(ev.Key, prefix)
		shard, key, ok := strings.Cut(rest, "/")
		require.True(t, ok, ev.Key)
		switch key {
		case "o" + shardClaim:
			if ev.Delete {
				require.NotNil(t, current[shard], "shard %s: deletion of a claim nobody held at %d", shard, ev.Revision)
				current[shard] = nil
				continue
			}
			require.Nil(t, current[shard], "shard %s: claimed by %s at %d while %+v holds it", shard, ev.Value, ev.Revision, current[shard])
			require.Equal(t, ev.Revision, ev.CreateRevision, "a claim is only ever created")
			current[shard] = &holding{node: ev.Value, rev: ev.CreateRevision}
			holdersOf[shard] = append(holdersOf[shard], ev.Value)
		case "w": // etcdstore.StampKey
			h := current[shard]
			require.NotNil(t, h, "shard %s: commit at %d with no holder", shard, ev.Revision)
			require.Equal(t, fmt.Sprintf("%s %d", h.node, h.rev), ev.Value, "shard %s: commit at %d under a stale claim", shard, ev.Revision)
			stamps++
		}
	}
	moved := 0
	for _, hs := range holdersOf {
		for i := 1; i < len(hs); i++ {
			if hs[i] != hs[i-1] {
				moved++
			}
		}
	}
	require.Positive(t, moved, "no shard changed hands: %v", holdersOf)
	require.Positive(t, stamps)
	t.Logf("ownership history: %d events, %d stamped commits, %d hand-overs, holders %v", len(evs), stamps, moved, holdersOf)
}
