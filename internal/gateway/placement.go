package gateway

import (
	"context"
	"io"
	"net/http"

	"github.com/wsrkit/wsrkit/rmp"
)

// placement says where the node of a group runs. With -store pebble one
// node runs every group (singleNode); with -store etcd a group belongs to
// a shard, and the node of a shard runs on the one instance holding it
// (cluster, route.go). The gateway asks its placement, never which one it
// has.
type placement interface {
	// nodes returns the nodes this instance runs, in shard order.
	nodes() []shardNode
	// shardOf is the shard of a group id, keyShard the shard whose node
	// sends for a producer's group key.
	shardOf(groupID string) int
	keyShard(key string) int
	// route returns the local node of a shard, or the URL of the instance
	// holding it; neither when its holder is unknown.
	route(shard int) (*rmp.Node, string)
	// spread reports whether groups are spread over instances that
	// forward requests to each other.
	spread() bool
	// serveRMP serves the RMP endpoint.
	serveRMP(g *Gateway, w http.ResponseWriter, r *http.Request)
	// writeMetrics writes the placement's own series.
	writeMetrics(g *Gateway, w io.Writer)
	// lostc reports, once, that the instance must stop (ErrLost); nil when
	// it never does.
	lostc() <-chan error
	// close stops the nodes (committing what they took) and closes their
	// stores; kill closes the stores under the running nodes, as a crash.
	close(ctx context.Context) error
	kill()
}

// singleNode is the placement of -store pebble: one node, shard 0.
type singleNode struct {
	node      *rmp.Node
	stopWatch func() // stops watching the store (storewatch.go)
	closeSt   func() // closes the store
}

func (s *singleNode) nodes() []shardNode               { return []shardNode{{node: s.node}} }
func (s *singleNode) shardOf(string) int               { return 0 }
func (s *singleNode) keyShard(string) int              { return 0 }
func (s *singleNode) route(int) (*rmp.Node, string)    { return s.node, "" }
func (s *singleNode) spread() bool                     { return false }
func (s *singleNode) writeMetrics(*Gateway, io.Writer) {}
func (s *singleNode) lostc() <-chan error              { return nil }
func (s *singleNode) kill()                            { s.closeSt() }
func (s *singleNode) close(ctx context.Context) error  { s.stopWatch(); return s.node.Close(ctx) }
func (s *singleNode) serveRMP(_ *Gateway, w http.ResponseWriter, r *http.Request) {
	s.node.ServeHTTP(w, r)
}

func (c *cluster) shardOf(groupID string) int { return ShardOf(groupID, c.id, c.cfg.Shards) }
func (c *cluster) keyShard(key string) int    { return keyShard(key, c.cfg.Shards) }
func (c *cluster) spread() bool               { return true }
func (c *cluster) lostc() <-chan error        { return c.lost }

func (c *cluster) serveRMP(g *Gateway, w http.ResponseWriter, r *http.Request) {
	g.serveSharded(w, r)
}

func (c *cluster) writeMetrics(g *Gateway, w io.Writer) {
	counter(w, "wsrkit_forwarded_requests_total", "Requests forwarded to the instance holding their shard (-store etcd).", g.forwards.Load())
	gauge(w, "wsrkit_held_shards", "Shards this instance holds (-store etcd).", len(c.nodes()))
}
