package gateway

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMetricsCountStoreCommits: /metrics shows the synced store batches
// the node committed, and a submission, durable before its 202, adds at
// least one.
func TestMetricsCountStoreCommits(t *testing.T) {
	c := loopbackConfig()
	c.Listen, c.DataDir, c.FakeClock = "127.0.0.1:0", t.TempDir(), true
	s, err := Start(c, Options{})
	require.NoError(t, err)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, s.Shutdown(ctx))
	}()
	commits := func() int {
		resp, err := http.Get(s.URL() + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return sampleOf(t, string(b), "wsrkit_store_commits_total")
	}
	before := commits()
	st, _ := submitKeyed(t, s.URL(), "", `{"to": "http://127.0.0.1:1/rmp", "body": "<m>a</m>"}`)
	require.Equal(t, 202, st)
	require.GreaterOrEqual(t, commits(), before+1, "the submission's commit counted")
}
