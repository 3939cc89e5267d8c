package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/store/etcdstore"
	"github.com/wsrkit/wsrkit/store/etcdstore/etcdtest"
)

// shardClaimName is the claim name the gateway takes per shard (etcd key
// <prefix>shard/<i>/oshard).
const shardClaimName = "shard"

// shardHolders reads the node holding each shard claim of a deployment
// under prefix ("" for a free shard).
func shardHolders(t *testing.T, etcd *etcdtest.Cluster, prefix string, shards int) []string {
	t.Helper()
	base, err := etcdstore.Open(etcdstore.Options{Endpoints: etcd.Endpoints, Prefix: prefix})
	require.NoError(t, err)
	defer base.Close()
	stores := make([]*etcdstore.Store, shards)
	for i := range stores {
		stores[i], err = etcdstore.Open(etcdstore.Options{Client: base.Client(), Prefix: fmt.Sprintf("%sshard/%d/", prefix, i)})
		require.NoError(t, err)
		defer stores[i].Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hs, err := etcdstore.Holders(ctx, stores, shardClaimName)
	require.NoError(t, err)
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Node
	}
	return out
}

// checkFencedHistory reads etcd's history of the shard claims and commit
// stamps under prefix (<prefix><i>/…): per shard a claim is created only
// after the previous one ended, every commit stamp names the holding
// current at its revision (no commit under a claim that ended: D8
// fencing), and at least one of node's shards changed hands. It returns
// how many commits node made.
func checkFencedHistory(t *testing.T, etcd *etcdtest.Cluster, prefix, node string) int {
	t.Helper()
	evs, err := etcd.History(prefix)
	require.NoError(t, err)
	claimKey := etcdstore.ClaimKey("", shardClaimName)
	current := map[string]string{} // shard → "node revision" of the live claim
	lostBy := 0                    // claims of node followed by another's
	last := map[string]string{}    // shard → last holder
	stamps := 0
	for _, ev := range evs {
		shard, key, ok := strings.Cut(strings.TrimPrefix(ev.Key, prefix), "/")
		require.True(t, ok, ev.Key)
		switch key {
		case claimKey:
			if ev.Delete {
				require.NotEmpty(t, current[shard], "shard %s: a claim nobody held ended at %d", shard, ev.Revision)
				current[shard] = ""
				continue
			}
			require.Empty(t, current[shard], "shard %s: claimed by %s at %d while %s holds it", shard, ev.Value, ev.Revision, current[shard])
			current[shard] = fmt.Sprintf("%s %d", ev.Value, ev.CreateRevision)
			if last[shard] == node && ev.Value != node {
				lostBy++
			}
			last[shard] = ev.Value
		case etcdstore.StampKey:
			require.NotEmpty(t, current[shard], "shard %s: a commit at %d while nobody held it", shard, ev.Revision)
			require.Equal(t, current[shard], ev.Value, "shard %s: a commit at %d under a claim that had ended", shard, ev.Revision)
			if strings.HasPrefix(ev.Value, node+" ") {
				stamps++
			}
		}
	}
	require.Positive(t, lostBy, "no shard of %s changed hands: %v", node, last)
	return stamps
}
