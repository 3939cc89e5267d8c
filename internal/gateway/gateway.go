// Package gateway is the `wsrkit serve` SOAP gateway: an rmp.Node on a
// pebble store (or a fenced etcd store) behind the RMP endpoint, the JSON submit, inbox, message,
// group, clock and metrics API, and HTTP delivery and notify callbacks.
package gateway

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/clock"
	"github.com/wsrkit/wsrkit/rmp/httpbody"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/pebblestore"
)

// Options are the parts of a Gateway that tests and the demo replace.
type Options struct {
	// Logger receives the node's log lines; nil discards them.
	Logger *slog.Logger
	// Client makes delivery and notify POSTs; nil means operatorClient
	// with a 30 s timeout.
	Client *http.Client
	// Transport sends RMP traffic; nil means outbound.NewHTTPTransport.
	Transport outbound.Transport
	// Context bounds opening (with -store etcd, joining the deployment).
	// nil means context.Background().
	Context context.Context
	// WrapShardStore, when set, wraps the store of each shard node
	// (-store etcd; tests pause commits with it).
	WrapShardStore func(shard int, s store.Store) store.Store
	// Pebble, when set, adjusts the -store pebble store's options before
	// it opens (tests fill the disk with pebblestore.FullDisk).
	Pebble func(*pebblestore.Options)
}

// Gateway is one running `wsrkit serve` instance without its listener:
// Handler serves the whole HTTP API. With -store pebble it runs one node;
// with -store etcd one node per shard it holds (cluster).
type Gateway struct {
	cfg      Config
	inst     string // the -data instance id (the pebble node's InstanceID)
	clk      clock.Clock
	fake     *clock.Fake   // nil without -fake-clock
	place    placement     // one node (-store pebble) or the held shards' nodes (-store etcd)
	nextAny  atomic.Uint64 // round robin of singleton submits over held shards
	inbox    *inbox        // nil with -deliver
	records  *records
	idem     *idempotency // Idempotency-Keys of POST /v1/messages
	waiters  routeWaiters // route requests waiting for their outcome
	consume  rmp.Consumer
	outcome  rmp.OutcomeHandler
	opts     Options
	forward  *http.Client
	forwards atomic.Uint64 // requests forwarded to another instance
	// auth authenticates forwarding between instances (-cluster-ca,
	// -cluster-secret-file); refusedForwards counts the forwards refused.
	auth            *clusterAuth
	refusedForwards atomic.Uint64
	log             *slog.Logger
	bodies          *httpbody.Budget // -max-inflight-bytes, shared by every node and handler
	mux             *http.ServeMux   // the whole API, on one listener
	// With -admin-listen: the public routes and the admin routes apart.
	publicMux, adminMux *http.ServeMux
	// The muxes behind forwardGate, as the listeners serve them.
	handler, publicHandler, adminHandler http.Handler
	token                                *adminToken // nil without -admin-token-file
	peers                                *peerTracker
	stats                                *throughput // per-minute counts of the last hour (GET /v1/stats)
	statsStop                            chan struct{}
	statsOnce                            sync.Once
	peerTLS                              *peerTLS
	peerAllow                            *peerAllow // nil without -peer-allow
	clockMu                              sync.Mutex // serialises fake clock moves
	// -store pebble: a node stopped by its store reports here once the
	// disk takes writes again (storewatch.go).
	storeDown chan error
}

// Layout of the data directory.
const (
	storeDir       = "store"          // the pebble store
	instanceIDFile = "instance-id"    // the sending RMP's InstanceID (R05)
	recordsFile    = "outcomes.jsonl" // handled outcomes, for GET /v1/messages/{id}
	idemFile       = "idempotency.jsonl"
)

// Open opens (or creates) the data directory and starts the node (with
// -store etcd: joins the deployment and starts the nodes of a first share
// of the shards). The config's PublicURL must be set (Start resolves it
// from the listener).
func Open(cfg Config, opts Options) (*Gateway, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = "http://" + cfg.Listen
	}
	cfg.PublicURL = strings.TrimSuffix(cfg.PublicURL, "/")
	if cfg.AdvertiseURL == "" {
		cfg.AdvertiseURL = cfg.PublicURL
	}
	cfg.AdvertiseURL = strings.TrimSuffix(cfg.AdvertiseURL, "/")
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	inst, err := instanceID(filepath.Join(cfg.DataDir, instanceIDFile))
	if err != nil {
		return nil, err
	}
	ptls, err := newPeerTLS(&cfg)
	if err != nil {
		return nil, err
	}
	var token *adminToken
	if cfg.AdminTokenFile != "" {
		if token, err = loadAdminToken(cfg.AdminTokenFile); err != nil {
			return nil, err
		}
	}
	var allow *peerAllow
	if cfg.PeerAllowFile != "" {
		if allow, err = loadPeerAllow(cfg.PeerAllowFile); err != nil {
			return nil, err
		}
	}
	if opts.Client == nil {
		opts.Client = operatorClient(30*time.Second, ptls.config)
	}
	if opts.Transport == nil {
		opts.Transport = outbound.NewHTTPTransport(outbound.Config{MaxResponseBytes: cfg.MaxBody, TLS: ptls.config,
			Policy: cfg.outbound(), MaxPerDestination: cfg.PeerConcurrency})
	}
	if opts.Context == nil {
		opts.Context = context.Background()
	}
	auth, err := newClusterAuth(&cfg)
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g := &Gateway{cfg: cfg, inst: inst, clk: clock.Real(), opts: opts, token: token, peerTLS: ptls, peerAllow: allow, auth: auth, log: log,
		forward: operatorClient(cfg.ForwardTimeout, auth.clientTLS(ptls.config)), bodies: httpbody.NewBudget(cfg.MaxInflightBytes)}
	// The transport's exchanges show which peers answer (GET /v1/peers).
	g.peers = newPeerTracker(opts.Transport, g.Now)
	g.opts.Transport = g.peers
	if cfg.FakeClock {
		start := cfg.FakeClockStart
		if start.IsZero() {
			start = time.Now()
		}
		g.fake = clock.NewFake(start)
		g.clk = g.fake
	}
	g.records, err = openRecords(filepath.Join(cfg.DataDir, recordsFile), cfg.MaxRecords)
	if err != nil {
		return nil, fmt.Errorf("outcome records: %w", err)
	}
	g.idem, err = openIdempotency(filepath.Join(cfg.DataDir, idemFile), cfg.IdempotencyWindow, cfg.MaxIdempotencyKeys, g.Now())
	if err != nil {
		g.records.close()
		return nil, fmt.Errorf("idempotency keys: %w", err)
	}
	if cfg.Deliver != "" {
		g.consume = &httpConsumer{url: cfg.Deliver, client: opts.Client}
	} else {
		g.inbox = newInbox(g.clk.Now)
		g.consume = g.inbox
	}
	g.outcome = &outcomeHandler{records: g.records, now: g.Now, url: cfg.Notify, client: opts.Client, waiters: &g.waiters}
	if cfg.Store == StoreEtcd {
		cl, err := openCluster(opts.Context, &g.cfg, log, g.cfg.AdvertiseURL, g.openShard, g.dropShard)
		if err != nil {
			g.closeFiles()
			return nil, fmt.Errorf("opening store: %w", err)
		}
		g.place = cl
		g.startStats()
		g.routes()
		return g, nil
	}
	st, err := openPebble(&cfg, opts.Pebble)
	if err != nil {
		g.closeFiles()
		return nil, fmt.Errorf("opening store: %w", err)
	}
	n, err := g.openNode(st, inst, cfg.PublicURL+"/rmp", g.consume)
	if err != nil {
		st.Close()
		g.closeFiles()
		return nil, err
	}
	g.place = &singleNode{node: n, stopWatch: g.watchStore(st, n), closeSt: func() { st.Close() }}
	g.startStats()
	g.routes()
	return g, nil
}

// openNode starts a node on st whose sending RMP is instance, whose
// RM-Replies under Callback come to replyTo and whose deliveries go to
// consume.
func (g *Gateway) openNode(st store.Store, instance, replyTo string, consume rmp.Consumer) (*rmp.Node, error) {
	ec := engineConfig(&g.cfg, instance)
	ec.ReplyTo = replyTo
	if _, ok := consume.(*inbox); ok {
		// The inbox defers every hand-off until DELETE confirms it: a run
		// would hand all but its first straight back (#22).
		ec.Receiver.MaxDeliveryRun = 1
	}
	if g.peerAllow != nil {
		ec.Receiver.AllowGroup = g.peerAllow.allowGroup
	}
	return rmp.Open(rmp.NodeConfig{
		Engine:     ec,
		Store:      st,
		Transport:  g.opts.Transport,
		Outbound:   *g.cfg.outbound(),
		Clock:      g.clk,
		Consumer:   consume,
		Outcomes:   g.outcome,
		Logger:     g.opts.Logger,
		RetryDelay: g.cfg.RetryInterval,
		// A service behind -deliver answers each POST over the network:
		// hand out as many at once as it may serve (the inbox needs few).
		DeliveryWorkers: g.cfg.DeliverConcurrency,
		MaxBody:         g.cfg.MaxBody,
		Bodies:          g.bodies,
		AwaitDelivery:   g.cfg.AwaitHeldResponse,
	})
}

// openShard starts the node of a shard this instance just claimed. Its
// callbacks name the shard (?shard=), so they route without parsing; its
// deliveries are guarded by the claim's fence.
func (g *Gateway) openShard(shard int, instance string, st store.Store, f fence) (*rmp.Node, error) {
	if g.opts.WrapShardStore != nil {
		st = g.opts.WrapShardStore(shard, st)
	}
	return g.openNode(st, instance, g.cfg.PublicURL+"/rmp?"+shardParam+"="+strconv.Itoa(shard),
		&fencedConsumer{Consumer: g.consume, fence: f})
}

// dropShard forgets the inbox entries of a shard handed over: its new
// holder hands them out again (R92).
func (g *Gateway) dropShard(shard int, cluster string) {
	if g.inbox != nil {
		g.inbox.dropWhere(func(groupID string) bool { return ShardOf(groupID, cluster, g.cfg.Shards) == shard })
	}
}

// outbound is the policy of -allow-outbound; the -route targets are the
// operator's, exempt.
func (c *Config) outbound() *outbound.Policy {
	p := &outbound.Policy{Allow: c.AllowOutbound}
	for _, to := range c.Routes {
		if u, err := url.Parse(to); err == nil {
			p.Exempt = append(p.Exempt, u.Scheme+"://"+u.Host)
		}
	}
	return p
}

// operatorClient POSTs to the operator's own URLs (-deliver, -notify, the
// other instances): bounded like RMP traffic (timeouts, idle pool, no
// redirects), and with concurrency for every shard's delivery workers;
// https:// under the -peer-ca/-peer-cert configuration (nil: Go's).
func operatorClient(timeout time.Duration, tc *tls.Config) *http.Client {
	return outbound.NewClient(outbound.Config{Timeout: timeout, MaxPerDestination: 64, TLS: tc})
}

// engineConfig turns the flags into the Engine's configuration.
func engineConfig(c *Config, instance string) rmp.Config {
	dialect := faults.Extended
	if c.StrictFaults {
		dialect = faults.Strict11
	}
	backoff := receiver.Backoff{
		Initial: c.RetryInterval,
		Factor:  max(1, int(math.Round(c.RetryBackoff))),
		Max:     c.RetryMaxInterval,
	}
	rc := receiver.DefaultConfig()
	rc.Dialect = dialect
	rc.AckOnDelivery = c.AckOnDelivery
	rc.BindGroupsToPeer = c.BindsGroupsToPeer()
	rc.MaxGroups = c.MaxOpenGroups
	rc.MaxGroupsPerPeer = min(c.MaxOpenGroupsPerPeer, c.MaxOpenGroups)
	rc.MaxLifetime = c.MaxLifetime
	rc.MaxHeldPerGroup = c.MaxHeldPerGroup
	rc.MaxHeldBytesPerGroup = clampInt(c.MaxHeldBytesPerGroup)
	rc.MaxHeldTotal = c.MaxHeldTotal
	rc.MaxDeliveryRun = c.DeliveryRun
	rc.MaxHeldBytesTotal = clampInt(c.MaxHeldBytesTotal)
	rc.DeliveryRetry = backoff
	rc.CallbackRetry = backoff
	h := fnv.New64a()
	h.Write([]byte(instance))
	lim := sender.DefaultLimits()
	lim.MaxPending = c.MaxPending
	lim.MaxPendingBytes = c.MaxPendingBytes
	// No per-destination flags: the totals are the only submit bounds, so a
	// -max-pending above the sender's per-destination default still holds.
	lim.MaxPendingPerDest = c.MaxPending
	lim.MaxPendingBytesPerDest = c.MaxPendingBytes
	lim.MaxPendingPerGroup = c.MaxPendingPerGroup
	window := c.Window
	if window == 0 {
		window = -1 // no bound (a Node's zero is its default)
	}
	return rmp.Config{
		Receiver: rc,
		Sender: sender.Config{
			InstanceID: instance,
			Retry: sender.RetryPolicy{
				Interval:    c.RetryInterval,
				Backoff:     c.RetryBackoff,
				MaxInterval: c.RetryMaxInterval,
				Jitter:      c.RetryJitter,
				MaxRetries:  c.MaxRetries,
			},
			PollInterval:     c.PollInterval,
			PollIntervalMax:  c.PollIntervalMax,
			LateFaultMargin:  c.LateFaultMargin,
			NoLateFaultPolls: !c.LateFaultPolls,
			Destinations:     peerDestinations(c),
			JitterSeed:       h.Sum64(),
			DefaultLifetime:  c.DefaultExpiresIn,
			Window:           window,
			Limits:           lim,
		},
		Parse:   parseOptions(c),
		ReplyTo: c.PublicURL + "/rmp",
	}
}

// peerDestinations marks the -peer-ack-on-delivery destinations: an ack
// from there means delivered (D8), so no late-fault polls go there.
func peerDestinations(c *Config) map[string]sender.Destination {
	if len(c.PeerAckOnDelivery) == 0 {
		return nil
	}
	ds := make(map[string]sender.Destination, len(c.PeerAckOnDelivery))
	for _, u := range c.PeerAckOnDelivery {
		ds[u] = sender.Destination{AckOnDelivery: true} // default retry policy
	}
	return ds
}

func clampInt(v int64) int { return int(min(v, math.MaxInt32)) }

// parseOptions are the envelope limits of -max-body, -max-depth and
// -max-elements, for the nodes, for routing and for submitted bodies.
func parseOptions(c *Config) soap.ParseOptions {
	return soap.ParseOptions{MaxBytes: clampInt(c.MaxBody), MaxDepth: c.MaxDepth, MaxElements: c.MaxElements}
}

func (g *Gateway) parseOptions() soap.ParseOptions { return parseOptions(&g.cfg) }

// instanceID reads the data directory's instance id, creating it on first
// use: group ids embed it, so they stay unique across instances (R05).
func instanceID(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		id := strings.TrimSpace(string(b))
		if id == "" {
			return "", fmt.Errorf("%s is empty", path)
		}
		return id, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	var b [8]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	if err := os.WriteFile(path, []byte(id+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("writing instance id: %w", err)
	}
	return id, nil
}

// Handler returns the gateway's HTTP API: every route, the admin ones
// guarded by the -admin-token-file token.
func (g *Gateway) Handler() http.Handler { return g.handler }

// PublicHandler returns what the main listener serves: with -admin-listen
// only /rmp, /soap/* and /healthz, else Handler.
func (g *Gateway) PublicHandler() http.Handler {
	if g.publicHandler != nil {
		return g.publicHandler
	}
	return g.handler
}

// AdminHandler returns the -admin-listen listener's routes (/v1/*,
// /metrics, /healthz); nil without -admin-listen.
func (g *Gateway) AdminHandler() http.Handler {
	return g.adminHandler
}

// Reload re-reads the admin token, the outbound client certificate and
// the -peer-allow list (SIGHUP); on an error the old ones stay in force.
func (g *Gateway) Reload() error {
	var errs []error
	if g.token != nil {
		errs = append(errs, g.token.reload())
	}
	if g.peerTLS.cert != nil {
		errs = append(errs, g.peerTLS.cert.reload())
	}
	errs = append(errs, g.auth.reload())
	if g.peerAllow != nil {
		errs = append(errs, g.peerAllow.reload())
	}
	return errors.Join(errs...)
}

// Node returns the node of -store pebble; nil with -store etcd (Shards).
func (g *Gateway) Node() *rmp.Node {
	if s, ok := g.place.(*singleNode); ok {
		return s.node
	}
	return nil
}

// Now returns the gateway clock's current time.
func (g *Gateway) Now() time.Time { return g.clk.Now().UTC() }

// Close stops the nodes (committing what they took), revokes the etcd
// lease (the shards are free at once) and closes the stores and the
// outcome records.
func (g *Gateway) Close(ctx context.Context) error {
	return errors.Join(g.place.close(ctx), g.closeFiles())
}

// closeFiles closes the outcome records and the idempotency keys.
func (g *Gateway) closeFiles() error {
	g.stopStats()
	return errors.Join(g.records.close(), g.idem.close())
}

// Lost reports, once, that the instance lost its etcd lease or a shard
// claim and must stop (ErrLost); it never fires with -store pebble.
func (g *Gateway) Lost() <-chan error {
	return g.place.lostc()
}

// Kill simulates a crash for tests: the store (the etcd connection) is
// closed under the running nodes, which stop at their next commit; nothing
// is shut down in order and no etcd claim is released.
func (g *Gateway) Kill() {
	g.place.kill()
	g.closeFiles()
}
