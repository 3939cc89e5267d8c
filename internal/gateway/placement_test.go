package gateway

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/store/etcdstore/etcdtest"
)

var _ placement = (*cluster)(nil)

// TestPlacementSingleNode: with -store pebble every group and key is on
// shard 0 of the one node, nothing is forwarded, nothing can be lost and
// /metrics has no shard series.
func TestPlacementSingleNode(t *testing.T) {
	s := startLocal(t, func(*Config) {})
	p, ok := s.place.(*singleNode)
	require.True(t, ok)
	require.NotNil(t, s.Node())
	require.Equal(t, 0, p.shardOf("mid:1.x@wsrkit"))
	require.Equal(t, 0, p.keyShard("orders"))
	n, url := s.routeShard(7)
	require.Same(t, s.Node(), n)
	require.Empty(t, url)
	require.Len(t, s.nodes(), 1)
	require.False(t, p.spread())
	require.Nil(t, s.Lost())
	require.NotContains(t, metricsText(t, http.DefaultClient, s.URL()), "wsrkit_held_shards")
}

// TestPlacementCluster: with -store etcd a lone instance comes to hold
// every shard; groups and keys map to their hash shards, and /metrics
// counts the held shards.
func TestPlacementCluster(t *testing.T) {
	etcd := etcdtest.StartTB(t, etcdtest.Options{Members: 1})
	s, err := Start(clusterConfig(t, etcd.Endpoints, "gw0", ""), Options{})
	require.NoError(t, err)
	defer s.Shutdown(t.Context())
	c, ok := s.place.(*cluster)
	require.True(t, ok)
	require.Nil(t, s.Node())
	require.NotNil(t, s.Lost())
	require.True(t, c.spread())
	require.Eventually(t, func() bool { return len(s.nodes()) == 8 }, 30*time.Second, 20*time.Millisecond)
	gid := "mid:7.gw0@wsrkit"
	require.Equal(t, ShardOf(gid, c.id, 8), s.shardOf(gid))
	require.Equal(t, keyShard("orders", 8), c.keyShard("orders"))
	n, url := s.routeShard(s.shardOf(gid))
	require.NotNil(t, n)
	require.Empty(t, url)
	require.True(t, strings.Contains(metricsText(t, http.DefaultClient, s.URL()), "wsrkit_held_shards 8\n"))
}
