package gateway

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/etcdstore"
)

// shardClaim is the claim name of a shard, under the shard's own prefix
// (etcd key <prefix>shard/<i>/oshard): its fenced store compares it.
const shardClaim = "shard"

// Settings every instance of a deployment shares, written by the first.
const (
	settingShards  = "shards"
	settingCluster = "cluster"
)

// cluster is the etcd side of a gateway with -store etcd: its lease, its
// membership, the shards it holds (each an rmp.Node on a fenced store) and
// the loop that balances shards over the live instances.
type cluster struct {
	cfg  *Config
	log  *slog.Logger
	self string // this instance's URL for forwarded requests
	id   string // the deployment's cluster id (group ids embed it)
	base *etcdstore.Store
	// etcdTLS is the client's TLS configuration (-etcd-ca, -etcd-cert),
	// nil without; it explains a failed first request.
	etcdTLS *tls.Config
	owner   *etcdstore.Owner
	stores  []*etcdstore.Store // per shard, unfenced, on base's client
	// open starts the node of a shard on its fenced store; dropped runs
	// after a shard's node closed.
	open    func(shard int, instance string, st store.Store, f fence) (*rmp.Node, error)
	dropped func(shard int, cluster string)

	lost   chan error
	report func(error)

	mu      sync.RWMutex
	held    map[int]*heldShard
	holders []etcdstore.Holder // last read, per shard
	urls    map[string]string  // live node id → URL, last read

	stop     chan struct{} // halts the balance loop
	loopDone chan struct{}
	stopOnce sync.Once
	closing  chan struct{} // close: the lease's end is expected
}

type heldShard struct {
	claim etcdstore.Claim
	node  *rmp.Node
}

// openCluster joins the deployment: checks -shards against the stored
// setting, starts the lease, announces self and takes a first share of the
// shards before it returns.
func openCluster(ctx context.Context, cfg *Config, log *slog.Logger, self string,
	open func(int, string, store.Store, fence) (*rmp.Node, error), dropped func(int, string)) (*cluster, error) {
	eo, err := etcdOptions(cfg)
	if err != nil {
		return nil, err
	}
	base, err := etcdstore.Open(eo)
	if err != nil {
		return nil, etcdHint(cfg, eo.TLS, err)
	}
	c := &cluster{cfg: cfg, log: log, self: self, base: base, etcdTLS: eo.TLS, open: open, dropped: dropped,
		held: map[int]*heldShard{}, urls: map[string]string{}, lost: make(chan error, 1),
		stop: make(chan struct{}), loopDone: make(chan struct{}), closing: make(chan struct{})}
	var once sync.Once
	c.report = func(err error) {
		once.Do(func() {
			c.lost <- err
			c.halt()
		})
	}
	if err := c.join(ctx); err != nil {
		for _, s := range c.stores {
			s.Close()
		}
		if c.owner != nil {
			c.owner.Close()
		}
		base.Close()
		return nil, err
	}
	go c.watchLease()
	if err := c.step(ctx); err != nil {
		log.Warn("first shard balance", "err", err)
	}
	go c.loop()
	return c, nil
}

// join reads (or writes) the deployment settings, opens the shard stores,
// starts the lease and announces this instance.
func (c *cluster) join(ctx context.Context) error {
	cfg := c.cfg
	// Bounded calls first: NewOwner's session would wait without a bound
	// when no endpoint answers, so wrong -etcd-endpoints would hang serve.
	got, err := c.base.Setting(ctx, settingShards, []byte(strconv.Itoa(cfg.Shards)))
	if err != nil {
		return fmt.Errorf("etcd %s: %w", strings.Join(cfg.EtcdEndpoints, ","), etcdHint(cfg, c.etcdTLS, err))
	}
	if string(got) != strconv.Itoa(cfg.Shards) {
		return fmt.Errorf("-shards %d does not match the %s shards this deployment was started with (etcd key %sx%s); every instance needs the same -shards",
			cfg.Shards, got, cfg.EtcdPrefix, settingShards)
	}
	var b [8]byte
	rand.Read(b[:])
	id, err := c.base.Setting(ctx, settingCluster, []byte(hex.EncodeToString(b[:])))
	if err != nil {
		return err
	}
	c.id = string(id)
	for i := range cfg.Shards {
		s, err := etcdstore.Open(etcdstore.Options{Client: c.base.Client(), Prefix: shardPrefix(cfg.EtcdPrefix, i),
			RequestTimeout: cfg.EtcdTimeout})
		if err != nil {
			return err
		}
		c.stores = append(c.stores, s)
	}
	c.owner, err = etcdstore.NewOwner(c.base, cfg.NodeID, cfg.LeaseTTL)
	if err != nil {
		return err
	}
	return c.owner.Announce(ctx, cfg.NodeID, c.self)
}

// watchLease reports the end of the lease unless close ended it: every
// shard claim ended with it.
func (c *cluster) watchLease() {
	select {
	case <-c.owner.Done():
		c.report(fmt.Errorf("%w: lease of node %q ended", ErrLost, c.cfg.NodeID))
	case <-c.closing:
	}
}

// halt stops the balance loop (idempotent).
func (c *cluster) halt() { c.stopOnce.Do(func() { close(c.stop) }) }

func (c *cluster) loop() {
	defer close(c.loopDone)
	every(c.cfg.BalanceInterval, c.stop, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.EtcdTimeout)
		if err := c.step(ctx); err != nil {
			c.log.Warn("shard balance", "err", err)
		}
		cancel()
		return true
	})
}

// step reads the members and the shard holders, then claims and releases
// shards as balance says.
func (c *cluster) step(ctx context.Context) error {
	if err := c.restartFailed(ctx); err != nil {
		return err
	}
	ann, err := c.base.Announced(ctx)
	if err != nil {
		return err
	}
	hs, err := etcdstore.Holders(ctx, c.stores, shardClaim)
	if err != nil {
		return err
	}
	urls := make(map[string]string, len(ann))
	members := make([]string, 0, len(ann))
	for _, a := range ann {
		urls[a.Key] = a.Value
		members = append(members, a.Key)
	}
	names := make([]string, len(hs))
	c.mu.Lock()
	c.holders, c.urls = hs, urls
	var mine []int
	for i, h := range hs {
		names[i] = h.Node
		held := c.held[i]
		switch {
		case held != nil && h.Revision != held.claim.Revision:
			c.mu.Unlock()
			c.report(fmt.Errorf("%w: shard %d is held by %q since revision %d", ErrLost, i, h.Node, h.Revision))
			return nil
		case held != nil:
			mine = append(mine, i)
		case h.Node == c.cfg.NodeID:
			names[i] = "" // a claim of ours without a node (an open failed): counts as free
		}
	}
	c.mu.Unlock()
	claim, release := balance(c.cfg.NodeID, members, names, mine)
	for _, i := range release {
		if err := c.release(ctx, i); err != nil {
			return err
		}
	}
	for _, i := range claim {
		select {
		case <-c.stop:
			return nil
		default:
		}
		if err := c.claim(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

// claim takes shard i if it is free and starts its node on the fenced
// store, which loads the shard's state from etcd (pending retries, held
// messages, callbacks, deliveries, outcomes).
func (c *cluster) claim(ctx context.Context, i int) error {
	owner := c.owner.In(c.stores[i])
	cl, err := owner.TryAcquire(ctx, shardClaim)
	if errors.Is(err, etcdstore.ErrOwned) {
		return nil // another instance was quicker
	}
	if err != nil {
		return err
	}
	st := &fencedStore{Store: c.stores[i].Stamped(cl), lost: c.report}
	n, err := c.open(i, shardInstance(c.id, i), st, c.fence(i, cl))
	if err != nil {
		rctx, cancel := context.WithTimeout(context.Background(), c.cfg.EtcdTimeout)
		defer cancel()
		return errors.Join(fmt.Errorf("shard %d: %w", i, err), owner.Release(rctx, cl))
	}
	c.mu.Lock()
	c.held[i] = &heldShard{claim: cl, node: n}
	if i < len(c.holders) {
		c.holders[i] = etcdstore.Holder{Node: c.cfg.NodeID, Revision: cl.Revision}
	}
	c.mu.Unlock()
	c.log.Info("holding shard", "node", c.cfg.NodeID, "shard", i, "revision", cl.Revision)
	return nil
}

// fence is what guards shard i's deliveries under claim cl.
func (c *cluster) fence(i int, cl etcdstore.Claim) fence {
	return fence{token: strconv.Itoa(i) + "/" + strconv.FormatInt(cl.Revision, 10), alive: c.owner.Alive}
}

// restartFailed restarts, under the same claim, each shard node that a
// failed commit stopped (an etcd outcome unknown, say a member lost in
// the middle of a transaction): the new node loads what etcd holds.
func (c *cluster) restartFailed(ctx context.Context) error {
	for _, sn := range c.nodes() {
		nerr := sn.node.Err()
		if nerr == nil {
			continue
		}
		i := sn.shard
		c.mu.Lock()
		h := c.held[i]
		delete(c.held, i)
		c.mu.Unlock()
		h.node.Close(ctx)
		c.dropped(i, c.id)
		c.log.Warn("restarting shard node", "shard", i, "err", nerr)
		// The failed store refuses every call: a fresh one on the client.
		s, err := etcdstore.Open(etcdstore.Options{Client: c.base.Client(), Prefix: shardPrefix(c.cfg.EtcdPrefix, i),
			RequestTimeout: c.cfg.EtcdTimeout})
		if err != nil {
			return err
		}
		c.stores[i].Close()
		c.stores[i] = s
		n, err := c.open(i, shardInstance(c.id, i), &fencedStore{Store: s.Stamped(h.claim), lost: c.report}, c.fence(i, h.claim))
		if err != nil {
			return errors.Join(fmt.Errorf("restarting shard %d: %w", i, err), c.owner.In(s).Release(ctx, h.claim))
		}
		c.mu.Lock()
		c.held[i] = &heldShard{claim: h.claim, node: n}
		c.mu.Unlock()
	}
	return nil
}

// release hands shard i over gracefully: no new requests reach its node,
// the node commits what it took and closes, then the claim goes.
func (c *cluster) release(ctx context.Context, i int) error {
	c.mu.Lock()
	h := c.held[i]
	delete(c.held, i)
	c.mu.Unlock()
	if h == nil {
		return nil
	}
	err := h.node.Close(ctx)
	c.dropped(i, c.id)
	if err := c.owner.In(c.stores[i]).Release(ctx, h.claim); err != nil {
		return err
	}
	c.log.Info("released shard", "node", c.cfg.NodeID, "shard", i, "err", err)
	return nil
}

// route says where requests about shard i go: the local node, or the URL
// of the instance holding it; neither when the holder is unknown.
func (c *cluster) route(i int) (*rmp.Node, string) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if h := c.held[i]; h != nil {
		return h.node, ""
	}
	if i >= len(c.holders) {
		return nil, ""
	}
	node := c.holders[i].Node
	if node == "" || node == c.cfg.NodeID {
		return nil, ""
	}
	return nil, c.urls[node]
}

// nodes returns the held shards' nodes in shard order.
func (c *cluster) nodes() []shardNode {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]shardNode, 0, len(c.held))
	for i := range c.cfg.Shards {
		if h := c.held[i]; h != nil {
			out = append(out, shardNode{shard: i, node: h.node})
		}
	}
	return out
}

// close stops balancing, closes every held node (committing what it took),
// then revokes the lease, which frees the shards at once.
func (c *cluster) close(ctx context.Context) error {
	select {
	case <-c.closing:
		return errors.New("gateway: cluster already closed")
	default:
		close(c.closing)
	}
	c.halt()
	<-c.loopDone
	c.mu.Lock()
	held := c.held
	c.held = map[int]*heldShard{}
	c.mu.Unlock()
	var errs []error
	for i := range c.cfg.Shards {
		if h := held[i]; h != nil {
			errs = append(errs, h.node.Close(ctx))
		}
	}
	errs = append(errs, c.owner.Close())
	for _, s := range c.stores {
		s.Close()
	}
	errs = append(errs, c.base.Close())
	return errors.Join(errs...)
}

// kill drops the etcd connection under the running nodes, as a crash would:
// nothing is released; the lease expires after its TTL.
func (c *cluster) kill() {
	c.halt()
	c.base.Close()
}
