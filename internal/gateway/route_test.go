package gateway

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/store/etcdstore/etcdtest"
)

// TestClusterRouting: with two gateways, a submit, a message status and a
// group request sent to the instance that does not hold the shard are
// forwarded once to the holder; a request already forwarded is not
// forwarded again (503, the sender resends); a mismatched -shards is
// refused with one clear error.
func TestClusterRouting(t *testing.T) {
	etcd := etcdtest.StartTB(t, etcdtest.Options{Members: 3})
	sink := &deliveries{byGroup: map[string][]uint64{}}
	consumer := httptest.NewServer(sink)
	defer consumer.Close()
	var gws [2]*Server
	for i := range gws {
		cfg := clusterConfig(t, etcd.Endpoints, fmt.Sprintf("r%d", i), consumer.URL)
		cfg.EtcdPrefix = "/r/"
		s, err := Start(cfg, Options{})
		require.NoError(t, err)
		defer s.Shutdown(t.Context())
		gws[i] = s
	}
	require.Eventually(t, func() bool { return len(gws[0].nodes()) == 4 && len(gws[1].nodes()) == 4 }, 20*time.Second, 20*time.Millisecond)

	// A key whose shard r1 holds, submitted to r0.
	key := ""
	for i := 0; key == ""; i++ {
		k := fmt.Sprintf("k%d", i)
		if n, url := gws[0].routeShard(keyShard(k, 8)); n == nil && url == gws[1].URL() {
			key = k
		}
	}
	var ans SubmitAnswer
	require.Equal(t, 202, postJSON(t, gws[0].URL()+"/v1/messages", map[string]any{"to": gws[0].URL() + "/rmp", "group": key,
		"ordered": true, "ack": true, "expiresIn": "1m", "body": "<x/>"}, &ans))
	require.Equal(t, keyShard(key, 8), gws[0].shardOf(ans.GroupID), "the group id names the key's shard")
	var grp GroupJSON
	require.Eventually(t, func() bool {
		return getJSON(gws[1].URL()+"/v1/groups/"+ans.GroupID+"?role=sender", &grp) == 200 && len(grp.Ranges) == 1
	}, 10*time.Second, 20*time.Millisecond, "r1's sending RMP has the group and its ack")
	require.Equal(t, 200, getJSON(gws[0].URL()+"/v1/groups/"+ans.GroupID+"?role=sender", &grp), "forwarded to r1")
	var ms MessageStatus
	require.Equal(t, 200, getJSON(gws[0].URL()+"/v1/messages/"+ans.ID, &ms))
	require.Equal(t, "acknowledged", ms.State)
	// The message went r1 → (cluster) → consumer once.
	require.Eventually(t, func() bool { return sink.distinct() == 1 }, 10*time.Second, 20*time.Millisecond)

	// A forwarded request reaching an instance without the shard is 503.
	req, _ := http.NewRequest("GET", gws[0].URL()+"/v1/groups/"+ans.GroupID, nil)
	req.Header.Set(HeaderForwardedBy, "elsewhere")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 503, resp.StatusCode)
	// An RMP request naming no group (malformed) is answered by a local
	// node with a fault (forwarding by groupId: TestClusterFailover).
	resp, err = http.Post(gws[0].URL()+"/rmp", "text/xml; charset=utf-8", bytes.NewReader([]byte("<not-soap")))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 500, resp.StatusCode)

	cfg := clusterConfig(t, etcd.Endpoints, "r9", consumer.URL)
	cfg.EtcdPrefix, cfg.Shards = "/r/", 16
	_, err = Open(cfg, Options{})
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "-shards 16 does not match the 8 shards"), err.Error())
}
