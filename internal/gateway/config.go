package gateway

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wsrkit/wsrkit/rmp/outbound"
)

// Config is the gateway's configuration: one field per `wsrkit serve` flag.
// Zero values are not defaults; use DefaultConfig or RegisterFlags.
type Config struct {
	Listen    string // address to listen on
	DataDir   string // pebble store, instance id and outcome records
	PublicURL string // base URL put into ReplyTo/BareURI as <PublicURL>/rmp; "" = http://<listen>
	Deliver   string // URL deliveries are POSTed to; "" = the inbox
	Notify    string // URL outcomes are POSTed to; "" = none (outcomes only recorded)

	MaxBody  int64 // every request body, decoded; larger → 413
	MaxDepth int   // XML nesting of inbound envelopes
	// MaxElements bounds the elements (comments and CDATA sections
	// included) of one envelope or submitted body, counted while reading.
	MaxElements int
	// MaxInflightBytes bounds the request bodies being served at once
	// (/rmp and /v1/messages together); beyond it 503 with Retry-After.
	MaxInflightBytes int64

	// Receiving side limits, answered with MessageStoreOverflow (D15).
	MaxOpenGroups int
	// MaxOpenGroupsPerPeer bounds the receiving groups one peer (its
	// verified TLS identity, else its client IP address) opened.
	MaxOpenGroupsPerPeer int
	MaxHeldPerGroup      int
	MaxHeldBytesPerGroup int64
	MaxHeldTotal         int
	MaxHeldBytesTotal    int64
	// Submit-side bounds, answered with 503.
	MaxPending      int
	MaxPendingBytes int64
	// MaxRecords bounds the outcome records kept for GET /v1/messages/{id}
	// once the sending RMP has forgotten a message.
	MaxRecords int

	// D26 retry schedule; also the delivery, callback and notify back-off.
	RetryInterval    time.Duration
	RetryBackoff     float64
	RetryMaxInterval time.Duration
	RetryJitter      float64
	MaxRetries       int
	PollInterval     time.Duration
	// DefaultExpiresIn is the lifetime of a submission naming neither
	// expiresIn nor expiryTime.
	DefaultExpiresIn time.Duration
	// MaxLifetime bounds how far ahead an ExpiryTime or groupExpiryTime
	// may be, and groupMaxIdle, received (InvalidExpiryTime,
	// InvalidMessageParameters) and submitted (400).
	MaxLifetime time.Duration
	// MaxBatch bounds the messages of one batch submit ({"messages":
	// [...]}, #22).
	MaxBatch int

	AckOnDelivery bool // D8 option
	StrictFaults  bool // D6 strict 1.1 dialect

	// Late faults (D12, D13): acknowledged messages are polled until their
	// ExpiryTime plus LateFaultMargin, the interval doubling from
	// PollInterval up to PollIntervalMax while answers are clean; not at
	// all without LateFaultPolls, nor for destinations in PeerAckOnDelivery
	// (receivers that ack on delivery, D8).
	LateFaultPolls    bool
	LateFaultMargin   time.Duration
	PollIntervalMax   time.Duration
	PeerAckOnDelivery []string

	FakeClock      bool
	FakeClockStart time.Time // zero = the current real time

	// Store is the backend, StorePebble or StoreEtcd. With etcd the group
	// state lives in the cluster; -data keeps only the instance id and the
	// outcome records, which stay local to this instance.
	Store         string
	EtcdEndpoints []string      // cluster client addresses (host:port)
	EtcdPrefix    string        // key namespace shared by the gateways of one deployment
	EtcdTimeout   time.Duration // bounds dialing and each etcd request
	NodeID        string        // this instance's name in the etcd claim
	LeaseTTL      time.Duration // etcd lease: how long a dead instance's shards stay unserved
	// Shards is the number of shards groups are spread over (-store etcd):
	// the same on every instance of a deployment.
	Shards int
	// AdvertiseURL is this instance's own base URL, to which the others
	// forward requests for the shards it holds; "" = http://<bound address>.
	AdvertiseURL string
	// BalanceInterval is how often an instance reads the members and shard
	// holders, claims free shards and releases surplus ones.
	BalanceInterval time.Duration
	// ForwardTimeout bounds a request forwarded to the holder of a shard.
	ForwardTimeout time.Duration
	// TLS and authentication to etcd: EtcdCA (PEM) replaces the system
	// roots for the members' certificates, EtcdCert/EtcdKey is the client
	// certificate presented; either turns TLS on. EtcdUser authenticates
	// with the password in EtcdPasswordFile (never logged).
	EtcdCA, EtcdCert, EtcdKey  string
	EtcdUser, EtcdPasswordFile string
	// Authentication of forwarding between instances (-store etcd):
	// ClusterCA signs every instance's -tls-cert, which it presents as its
	// client certificate when forwarding (mutual TLS); ClusterSecretFile
	// holds the key of the HMAC signature of each forwarded request.
	// Without either, Validate keeps the instances on loopback.
	ClusterCA, ClusterSecretFile string

	// Inbound connection bounds (http.Server). WriteTimeout runs from the
	// end of the request header to the end of the response, so it covers
	// reading the body, making its effects durable and awaiting a business
	// response (R73): it must exceed ReadTimeout and the deliver timeout.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxConns          int   // concurrent inbound connections; more wait in the kernel's backlog
	MaxHeaderBytes    int64 // request line and headers
	// Routes are the transparent proxy routes, -route NAME=URL: POST
	// /soap/NAME sends a plain SOAP request reliably to the WS-R endpoint
	// URL and answers with the peer's business response.
	Routes map[string]string
	// RouteTimeout bounds how long a route's client waits for the ack.
	RouteTimeout time.Duration
	// DeliverConcurrency is how many deliveries are POSTed to -deliver at
	// once (one group's messages always one at a time, in order).
	DeliverConcurrency int
	// PeerConcurrency bounds the RMP exchanges (messages, polls,
	// callbacks) in flight to one destination host.
	PeerConcurrency int
	// MaxPendingPerGroup bounds one group's unacknowledged messages (503
	// beyond), so that failing them all at once fits one store batch.
	MaxPendingPerGroup int
	// Window bounds one sending group's unacknowledged messages on the
	// wire at once (sender.Config.Window); the rest are stored and sent
	// as acks come. 0: no bound.
	Window int
	// DeliveryRun is how many deliverable messages of one ordered group
	// are handed to the -deliver service or -route target one after
	// another before their hand-offs are recorded in one commit
	// (receiver.Config.MaxDeliveryRun). A crash before that commit hands
	// the run out again (R92), so a service that does not deduplicate by
	// the group and number headers sees up to this many repeats; 1 (the
	// default) records each hand-off before the next, as before #22.
	DeliveryRun int
	// AwaitHeldResponse bounds how long the answer to a request-response
	// message that arrived out of order waits for its delivery, so that its
	// business response rides on it (R73); 0 (the default) answers with the
	// ack at once.
	AwaitHeldResponse time.Duration

	// TLS on the listener (README "Deploying on a network"): PEM files,
	// re-read on SIGHUP and when they change. TLSClientAuth is none,
	// request or require ("" = require with TLSClientCA, else none); the
	// verified client identity is the peer identity (peer.Peer).
	TLSCert, TLSKey string
	TLSClientCA     string
	TLSClientAuth   string
	// Outbound TLS for every client: PeerCA replaces the system roots,
	// PeerCert/PeerKey is the client certificate presented.
	PeerCA, PeerCert, PeerKey string
	// AdminListen, when set, serves /v1/*, /metrics and /healthz on their
	// own listener; the main one keeps /rmp, /soap/* and /healthz.
	AdminListen string
	// AdminTokenFile holds the bearer token every admin request needs;
	// MetricsPublic exempts /metrics. Without a token the admin API must
	// be on loopback only (Validate).
	AdminTokenFile string
	MetricsPublic  bool
	// Console serves the web console at /console/ beside the admin API,
	// under the same token (#21).
	Console bool
	// AllowOutbound lists the loopback and private ranges that ReplyTo
	// URLs and submitted destinations may name (outbound.Policy); the
	// operator's own -deliver and -notify URLs are not checked.
	AllowOutbound []netip.Prefix

	// Idempotency-Key on POST /v1/messages: how long a key answers its
	// first submission again, and how many keys are kept (oldest first
	// forgotten beyond it).
	IdempotencyWindow  time.Duration
	MaxIdempotencyKeys int
	// BindGroupsToPeer (-bind-groups-to-peer): a receiving group takes
	// messages and answers polls only for the identity that opened it, a
	// sending group takes RM-Replies only from its destination
	// (rmp's bind.go); nil = on exactly when client
	// certificates are required (and not with -store etcd, whose forwarded
	// requests carry no identity).
	BindGroupsToPeer *bool
	// PeerAllowFile (-peer-allow): the client-certificate identities that
	// may POST to /rmp, and the groupId prefixes each may use
	// (peerallow.go); re-read on SIGHUP. Needs client certificates.
	PeerAllowFile string
}

// BindsGroupsToPeer resolves -bind-groups-to-peer against its default.
func (c *Config) BindsGroupsToPeer() bool {
	if c.BindGroupsToPeer != nil {
		return *c.BindGroupsToPeer
	}
	return c.TLSCert != "" && clientAuthType(c) == tls.RequireAndVerifyClientCert && (c.Store != StoreEtcd || c.authenticatesForwards())
}

// authenticatesForwards reports whether instances prove themselves to each
// other when forwarding (-cluster-ca, -cluster-secret-file).
func (c *Config) authenticatesForwards() bool { return c.ClusterCA != "" || c.ClusterSecretFile != "" }

// optBool is a boolean flag whose absence leaves nil (its default derives
// from other flags).
type optBool struct{ p **bool }

func (o optBool) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return strconv.FormatBool(**o.p)
}

func (o optBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("invalid boolean %q", s)
	}
	*o.p = &v
	return nil
}

func (o optBool) IsBoolFlag() bool { return true }

// DefaultConfig returns the defaults of `wsrkit serve`.
func DefaultConfig() Config {
	return Config{
		Listen:               "127.0.0.1:8080",
		Console:              true,
		DataDir:              "./wsrkit-data",
		MaxBody:              4 << 20,
		MaxDepth:             64,
		MaxElements:          10000,
		MaxInflightBytes:     64 << 20,
		MaxOpenGroups:        100000,
		MaxOpenGroupsPerPeer: 10000,
		MaxHeldPerGroup:      1000,
		MaxHeldBytesPerGroup: 16 << 20,
		MaxHeldTotal:         100000,
		MaxHeldBytesTotal:    1 << 30,
		MaxPending:           100000,
		MaxPendingBytes:      1 << 30,
		MaxRecords:           100000,
		RetryInterval:        5 * time.Second,
		RetryBackoff:         2,
		RetryMaxInterval:     5 * time.Minute,
		RetryJitter:          0.1,
		MaxRetries:           10,
		PollInterval:         10 * time.Second,
		LateFaultPolls:       true,
		LateFaultMargin:      30 * time.Second,
		PollIntervalMax:      2 * time.Minute,
		DefaultExpiresIn:     time.Hour,
		MaxLifetime:          7 * 24 * time.Hour,
		MaxBatch:             1000,
		Store:                StorePebble,
		EtcdPrefix:           "/wsrkit/",
		EtcdTimeout:          10 * time.Second,
		NodeID:               defaultNodeID(),
		LeaseTTL:             defaultLeaseTTL,
		Shards:               16,
		BalanceInterval:      time.Second,
		ForwardTimeout:       30 * time.Second,
		ReadHeaderTimeout:    10 * time.Second,
		ReadTimeout:          time.Minute,
		WriteTimeout:         2 * time.Minute,
		IdleTimeout:          time.Minute,
		MaxConns:             1024,
		MaxHeaderBytes:       64 << 10,
		IdempotencyWindow:    24 * time.Hour,
		MaxIdempotencyKeys:   100000,
		RouteTimeout:         30 * time.Second,
		DeliverConcurrency:   32,
		PeerConcurrency:      64,
		MaxPendingPerGroup:   10000,
		Window:               64,
		DeliveryRun:          1,
	}
}

// defaultNodeID is the host name, or a generated id when it is unknown.
func defaultNodeID() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	var b [6]byte
	rand.Read(b[:])
	return "node-" + hex.EncodeToString(b[:])
}

// RegisterFlags defines one flag per field on fs, with c's values as
// defaults, writing into c when fs is parsed.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Listen, "listen", c.Listen, "address to listen on")
	fs.StringVar(&c.DataDir, "data", c.DataDir, "local data directory: the pebble store (with -store pebble), instance-id and outcome records")
	fs.StringVar(&c.PublicURL, "public-url", c.PublicURL, "base URL put into ReplyTo/BareURI as <public-url>/rmp (default http://<listen>)")
	fs.StringVar(&c.Deliver, "deliver", c.Deliver, "POST each delivered message to this URL (default: the inbox, GET /v1/inbox)")
	fs.StringVar(&c.Notify, "notify", c.Notify, "POST each outcome as JSON to this URL")
	fs.Var((*byteSize)(&c.MaxBody), "max-body", "largest request body, bytes with optional KiB/MiB/GiB suffix; larger → 413")
	fs.IntVar(&c.MaxDepth, "max-depth", c.MaxDepth, "deepest XML element nesting accepted")
	fs.IntVar(&c.MaxElements, "max-elements", c.MaxElements, "elements, comments and CDATA sections per envelope or submitted body, counted while reading (more → InvalidRequest, 400 for submit)")
	fs.Var((*byteSize)(&c.MaxInflightBytes), "max-inflight-bytes", "request bodies being read and served at once, decoded bytes (more → 503 with Retry-After)")
	fs.IntVar(&c.MaxOpenGroups, "max-open-groups", c.MaxOpenGroups, "receiving groups held in state (more → MessageStoreOverflow)")
	fs.IntVar(&c.MaxOpenGroupsPerPeer, "max-open-groups-per-peer", c.MaxOpenGroupsPerPeer, "receiving groups one peer (verified TLS client identity, else client IP address) has open (more → MessageStoreOverflow for that peer)")
	fs.IntVar(&c.MaxHeldPerGroup, "max-held-per-group", c.MaxHeldPerGroup, "out-of-order messages held per group")
	fs.Var((*byteSize)(&c.MaxHeldBytesPerGroup), "max-held-bytes-per-group", "bytes of held messages per group")
	fs.IntVar(&c.MaxHeldTotal, "max-held-total", c.MaxHeldTotal, "held messages in total")
	fs.Var((*byteSize)(&c.MaxHeldBytesTotal), "max-held-bytes-total", "bytes of held messages in total")
	fs.IntVar(&c.MaxPending, "max-pending", c.MaxPending, "unacknowledged submitted messages (more → 503)")
	fs.Var((*byteSize)(&c.MaxPendingBytes), "max-pending-bytes", "bytes of unacknowledged submitted messages (more → 503)")
	fs.IntVar(&c.MaxRecords, "max-records", c.MaxRecords, "outcome records kept for GET /v1/messages/{id}")
	fs.DurationVar(&c.RetryInterval, "retry-interval", c.RetryInterval, "first resend after the first transmission (D26)")
	fs.Float64Var(&c.RetryBackoff, "retry-backoff", c.RetryBackoff, "factor between resend intervals")
	fs.DurationVar(&c.RetryMaxInterval, "retry-max-interval", c.RetryMaxInterval, "cap of the resend interval")
	fs.Float64Var(&c.RetryJitter, "retry-jitter", c.RetryJitter, "± fraction applied to each interval (seeded)")
	fs.IntVar(&c.MaxRetries, "max-retries", c.MaxRetries, "resends after the first transmission")
	fs.DurationVar(&c.PollInterval, "poll-interval", c.PollInterval, "PollRequest interval for Poll-pattern messages; late-fault polls start at it and back off to -poll-interval-max")
	fs.BoolVar(&c.LateFaultPolls, "late-fault-polls", c.LateFaultPolls, "poll acknowledged messages of every reply pattern until they can no longer be discarded, so a late fault (D13) reaches the producer")
	fs.DurationVar(&c.LateFaultMargin, "late-fault-margin", c.LateFaultMargin, "clock skew allowed with receivers: acknowledged messages are polled until ExpiryTime plus this")
	fs.DurationVar(&c.PollIntervalMax, "poll-interval-max", c.PollIntervalMax, "cap of the late-fault poll interval, which doubles from -poll-interval while answers are clean")
	fs.Var((*urlList)(&c.PeerAckOnDelivery), "peer-ack-on-delivery", "destination URLs (as in \"to\", comma-separated, repeatable) whose receiver acks on delivery (D8): no late-fault polls there")
	fs.DurationVar(&c.DefaultExpiresIn, "default-expires-in", c.DefaultExpiresIn, "lifetime of a submission with neither expiresIn nor expiryTime")
	fs.IntVar(&c.MaxBatch, "max-batch", c.MaxBatch, "most messages one batch submit (POST /v1/messages with \"messages\") may carry; more is 400")
	fs.DurationVar(&c.MaxLifetime, "max-lifetime", c.MaxLifetime, "how far ahead an ExpiryTime or groupExpiryTime may be, and the longest groupMaxIdle, received (fault) or submitted (400)")
	fs.BoolVar(&c.AckOnDelivery, "ack-on-delivery", c.AckOnDelivery, "acknowledge once delivered instead of once stored (D8)")
	fs.BoolVar(&c.StrictFaults, "strict-faults", c.StrictFaults, "emit only WS-Reliability 1.1 schema fault codes (D6)")
	fs.BoolVar(&c.FakeClock, "fake-clock", c.FakeClock, "run on a fake clock moved by POST /v1/clock")
	fs.Var((*rfc3339)(&c.FakeClockStart), "fake-clock-start", "RFC 3339 start of the fake clock (default the current real time)")
	fs.StringVar(&c.Store, "store", c.Store, "group state backend: pebble (under -data) or etcd (shared; groups spread over the instances by -shards)")
	fs.Var((*endpoints)(&c.EtcdEndpoints), "etcd-endpoints", "etcd client addresses host:port,… (with -store etcd)")
	fs.StringVar(&c.EtcdPrefix, "etcd-prefix", c.EtcdPrefix, "etcd key namespace shared by the gateways of one deployment")
	fs.StringVar(&c.EtcdCA, "etcd-ca", c.EtcdCA, "PEM CA certificates trusted for the etcd members (TLS to etcd; default the system roots with -etcd-cert)")
	fs.StringVar(&c.EtcdCert, "etcd-cert", c.EtcdCert, "PEM client certificate presented to etcd (TLS to etcd)")
	fs.StringVar(&c.EtcdKey, "etcd-key", c.EtcdKey, "PEM private key of -etcd-cert")
	fs.StringVar(&c.EtcdUser, "etcd-user", c.EtcdUser, "etcd user name (etcd auth), with -etcd-password-file")
	fs.StringVar(&c.EtcdPasswordFile, "etcd-password-file", c.EtcdPasswordFile, "file holding the -etcd-user password (its first line; never logged)")
	fs.StringVar(&c.ClusterCA, "cluster-ca", c.ClusterCA, "PEM CA that signs every instance's -tls-cert (-store etcd): forwarding between instances is mutual TLS under it (a CA of the instances only)")
	fs.StringVar(&c.ClusterSecretFile, "cluster-secret-file", c.ClusterSecretFile, "file holding the key (16 bytes or more) of the HMAC-SHA256 signature of requests forwarded between instances (-store etcd); the same on every instance")
	fs.DurationVar(&c.EtcdTimeout, "etcd-timeout", c.EtcdTimeout, "bound on dialing -etcd-endpoints and on each etcd request (a commit past it stops the node)")
	fs.StringVar(&c.NodeID, "node-id", c.NodeID, "this instance's name in the etcd shard claims, unique per instance")
	fs.DurationVar(&c.LeaseTTL, "lease-ttl", c.LeaseTTL, "etcd lease: the others take over a dead instance's shards within about this long")
	fs.IntVar(&c.Shards, "shards", c.Shards, "shards the groups are spread over (-store etcd); the same on every instance")
	fs.StringVar(&c.AdvertiseURL, "advertise-url", c.AdvertiseURL, "this instance's own base URL, for requests the others forward to it (default http://<listen>)")
	fs.DurationVar(&c.BalanceInterval, "balance-interval", c.BalanceInterval, "how often an instance rebalances the shards over the live instances")
	fs.DurationVar(&c.ForwardTimeout, "forward-timeout", c.ForwardTimeout, "bound on a request forwarded to the instance holding its shard")
	fs.DurationVar(&c.ReadHeaderTimeout, "read-header-timeout", c.ReadHeaderTimeout, "bound on reading a request's header, also a new connection's first one")
	fs.DurationVar(&c.ReadTimeout, "read-timeout", c.ReadTimeout, "bound on reading a whole request, body included")
	fs.DurationVar(&c.WriteTimeout, "write-timeout", c.WriteTimeout, "bound from a request's header to the end of its response (body, durable commit and business response included)")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", c.IdleTimeout, "an idle keep-alive connection is closed after this long")
	fs.IntVar(&c.MaxConns, "max-conns", c.MaxConns, "concurrent inbound connections; more wait until one closes")
	fs.DurationVar(&c.IdempotencyWindow, "idempotency-window", c.IdempotencyWindow, "how long an Idempotency-Key on POST /v1/messages answers its first submission again")
	fs.IntVar(&c.MaxIdempotencyKeys, "max-idempotency-keys", c.MaxIdempotencyKeys, "Idempotency-Keys remembered; beyond it the oldest is forgotten before its window ends")
	fs.Var((*prefixes)(&c.AllowOutbound), "allow-outbound", "loopback or private CIDR ranges (comma-separated) that peers' ReplyTo and submitted destinations may name; link-local and metadata addresses are always refused")
	fs.Var((*byteSize)(&c.MaxHeaderBytes), "max-header-bytes", "largest request line and header, bytes with optional KiB/MiB suffix")
	fs.Var((*routes)(&c.Routes), "route", "NAME=URL (repeatable): POST /soap/NAME sends a plain SOAP request reliably to the WS-R endpoint URL and answers with its business response")
	fs.DurationVar(&c.AwaitHeldResponse, "await-held-response", c.AwaitHeldResponse, "how long the answer to a Response-pattern message held out of order waits for its delivery's business response (R73); 0 acknowledges at once (each parked answer holds a sender's connection)")
	fs.IntVar(&c.MaxPendingPerGroup, "max-pending-per-group", c.MaxPendingPerGroup, "unacknowledged messages of one sending group (more → 503); an abort fails them in one store batch, so at most 20000")
	fs.IntVar(&c.DeliveryRun, "delivery-run", c.DeliveryRun, "deliverable messages of one ordered group handed to the consumer one after another before their hand-offs are recorded in one commit; a crash before it hands them all out again (1: each recorded before the next)")
	fs.IntVar(&c.Window, "window", c.Window, "unacknowledged messages of one sending group on the wire at once; later ones are stored and sent as acks come, in order (0: no bound)")
	fs.IntVar(&c.PeerConcurrency, "peer-concurrency", c.PeerConcurrency, "RMP exchanges (messages, polls, callbacks) in flight to one destination host; each waits for its answer, a business response included")
	fs.IntVar(&c.DeliverConcurrency, "deliver-concurrency", c.DeliverConcurrency, "deliveries POSTed to -deliver at once; one group's messages always go one at a time, in order")
	fs.StringVar(&c.TLSCert, "tls-cert", c.TLSCert, "PEM certificate (chain) of the listener: serve HTTPS, TLS 1.2+; re-read on SIGHUP and when the file changes")
	fs.StringVar(&c.TLSKey, "tls-key", c.TLSKey, "PEM private key of -tls-cert")
	fs.StringVar(&c.TLSClientCA, "tls-client-ca", c.TLSClientCA, "PEM CA certificates that sign partners' client certificates (mutual TLS)")
	fs.StringVar(&c.TLSClientAuth, "tls-client-auth", c.TLSClientAuth, "client certificates: none, request (verified when presented) or require (default require with -tls-client-ca, else none)")
	fs.StringVar(&c.PeerCA, "peer-ca", c.PeerCA, "PEM CA certificates trusted for https:// peers, -deliver, -notify and -route URLs (default the system roots)")
	fs.StringVar(&c.PeerCert, "peer-cert", c.PeerCert, "PEM client certificate presented to https:// peers (mutual TLS)")
	fs.StringVar(&c.PeerKey, "peer-key", c.PeerKey, "PEM private key of -peer-cert")
	fs.StringVar(&c.AdminListen, "admin-listen", c.AdminListen, "serve /v1/*, /metrics and /healthz on this address instead; -listen then serves only /rmp, /soap/* and /healthz")
	fs.StringVar(&c.AdminTokenFile, "admin-token-file", c.AdminTokenFile, "file holding the token every admin request must send as Authorization: Bearer <token> (re-read on SIGHUP)")
	fs.BoolVar(&c.MetricsPublic, "metrics-public", c.MetricsPublic, "serve /metrics without the admin token")
	fs.BoolVar(&c.Console, "console", c.Console, "serve the web console at /console/ beside the admin API, under the same token")
	fs.Var(optBool{&c.BindGroupsToPeer}, "bind-groups-to-peer", "refuse messages (InvalidMessageId) and polls about a receiving group from another client-certificate identity than the one that opened it, and RM-Replies about a sending group from another identity than its https destination presented (default on when -tls-client-auth is require)")
	fs.StringVar(&c.PeerAllowFile, "peer-allow", c.PeerAllowFile, "file of the client-certificate identities that may POST to /rmp, one a line with its groupId prefixes: <identity> <prefix>[,<prefix>…] (* for any; # comments); others get 403, a groupId outside the prefixes InvalidMessageId (re-read on SIGHUP)")
	fs.DurationVar(&c.RouteTimeout, "route-timeout", c.RouteTimeout, "how long a -route client waits for the acknowledgement before a SOAP Fault (HTTP 504); the message is still resent")
}

// routes is a flag.Value of repeated NAME=URL pairs (-route).
type routes map[string]string

func (r *routes) String() string {
	if r == nil || *r == nil {
		return ""
	}
	names := make([]string, 0, len(*r))
	for n := range *r {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, n := range names {
		names[i] = n + "=" + (*r)[n]
	}
	return strings.Join(names, ",")
}

func (r *routes) Set(s string) error {
	name, target, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("invalid route %q: want NAME=URL", s)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("invalid route name %q: letters, digits, '-', '_' and '.' only", name)
		}
	}
	if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("invalid route %q: URL must be an absolute http or https URL", s)
	}
	if *r == nil {
		*r = map[string]string{}
	}
	if _, dup := (*r)[name]; dup {
		return fmt.Errorf("route %q given twice", name)
	}
	(*r)[name] = target
	return nil
}

// endpoints is a flag.Value of comma-separated host:port addresses.
type endpoints []string

func (e *endpoints) String() string { return strings.Join(*e, ",") }

func (e *endpoints) Set(s string) error {
	*e = nil
	return eachListed(s, func(a string) error {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("invalid endpoint %q: want host:port", a)
		}
		*e = append(*e, a)
		return nil
	})
}

// eachListed calls f with each non-empty, trimmed item of the
// comma-separated s, stopping at the first error.
func eachListed(s string, f func(string) error) error {
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			if err := f(a); err != nil {
				return err
			}
		}
	}
	return nil
}

// urlList is a flag.Value of absolute http(s) URLs, comma-separated; each
// use adds to the list.
type urlList []string

func (l *urlList) String() string { return strings.Join(*l, ",") }

func (l *urlList) Set(s string) error {
	return eachListed(s, func(a string) error {
		if u, err := url.Parse(a); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("invalid URL %q: want an absolute http or https URL", a)
		}
		*l = append(*l, a)
		return nil
	})
}

// prefixes is a flag.Value of comma-separated CIDR ranges or addresses.
type prefixes []netip.Prefix

func (p *prefixes) String() string {
	s := make([]string, len(*p))
	for i, x := range *p {
		s[i] = x.String()
	}
	return strings.Join(s, ",")
}

func (p *prefixes) Set(s string) error {
	v, err := outbound.ParseAllow(s)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Validate checks that every value is usable.
// maxDeliveryRun bounds -delivery-run: a run is one Ready's hand-offs,
// and all of it is handed out again after a crash.
const maxDeliveryRun = 1000

func (c *Config) Validate() error {
	var errs []error
	pos := func(name string, v int64) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("-%s must be positive, got %d", name, v))
		}
	}
	pos("max-body", c.MaxBody)
	pos("max-depth", int64(c.MaxDepth))
	pos("max-elements", int64(c.MaxElements))
	pos("max-inflight-bytes", c.MaxInflightBytes)
	pos("max-open-groups", int64(c.MaxOpenGroups))
	pos("max-open-groups-per-peer", int64(c.MaxOpenGroupsPerPeer))
	pos("max-lifetime", int64(c.MaxLifetime))
	pos("max-batch", int64(c.MaxBatch))
	if c.DefaultExpiresIn > c.MaxLifetime {
		errs = append(errs, fmt.Errorf("-default-expires-in (%s) must not exceed -max-lifetime (%s)", c.DefaultExpiresIn, c.MaxLifetime))
	}
	pos("max-held-per-group", int64(c.MaxHeldPerGroup))
	pos("max-held-bytes-per-group", c.MaxHeldBytesPerGroup)
	pos("max-held-total", int64(c.MaxHeldTotal))
	pos("max-held-bytes-total", c.MaxHeldBytesTotal)
	pos("max-pending", int64(c.MaxPending))
	pos("max-pending-bytes", c.MaxPendingBytes)
	pos("max-records", int64(c.MaxRecords))
	pos("retry-interval", int64(c.RetryInterval))
	pos("retry-max-interval", int64(c.RetryMaxInterval))
	pos("poll-interval", int64(c.PollInterval))
	pos("default-expires-in", int64(c.DefaultExpiresIn))
	pos("late-fault-margin", int64(c.LateFaultMargin))
	if c.PollIntervalMax < c.PollInterval {
		errs = append(errs, fmt.Errorf("-poll-interval-max (%s) must not be below -poll-interval (%s)", c.PollIntervalMax, c.PollInterval))
	}
	pos("read-header-timeout", int64(c.ReadHeaderTimeout))
	pos("read-timeout", int64(c.ReadTimeout))
	pos("write-timeout", int64(c.WriteTimeout))
	pos("idle-timeout", int64(c.IdleTimeout))
	pos("max-conns", int64(c.MaxConns))
	pos("max-header-bytes", c.MaxHeaderBytes)
	// The write deadline runs from the request's header: it must leave room
	// for reading the body and for a route's wait for its answer.
	if c.WriteTimeout <= c.ReadTimeout || c.WriteTimeout <= c.RouteTimeout {
		errs = append(errs, fmt.Errorf("-write-timeout (%s) must exceed -read-timeout (%s) and -route-timeout (%s)", c.WriteTimeout, c.ReadTimeout, c.RouteTimeout))
	}
	pos("idempotency-window", int64(c.IdempotencyWindow))
	pos("max-idempotency-keys", int64(c.MaxIdempotencyKeys))
	pos("route-timeout", int64(c.RouteTimeout))
	pos("deliver-concurrency", int64(c.DeliverConcurrency))
	pos("peer-concurrency", int64(c.PeerConcurrency))
	pos("max-pending-per-group", int64(c.MaxPendingPerGroup))
	if c.MaxPendingPerGroup > 20000 {
		errs = append(errs, fmt.Errorf("-max-pending-per-group must be at most 20000 (an abort fails them all in one store batch), got %d", c.MaxPendingPerGroup))
	}
	if c.Window < 0 {
		errs = append(errs, fmt.Errorf("-window must not be negative, got %d", c.Window))
	}
	if c.DeliveryRun < 1 || c.DeliveryRun > maxDeliveryRun {
		errs = append(errs, fmt.Errorf("-delivery-run must be from 1 to %d, got %d", maxDeliveryRun, c.DeliveryRun))
	}
	if c.AwaitHeldResponse < 0 {
		errs = append(errs, fmt.Errorf("-await-held-response must not be negative, got %s", c.AwaitHeldResponse))
	}
	if c.RetryMaxInterval < c.RetryInterval {
		errs = append(errs, fmt.Errorf("-retry-max-interval (%s) must not be below -retry-interval (%s)", c.RetryMaxInterval, c.RetryInterval))
	}
	if c.RetryBackoff < 1 {
		errs = append(errs, fmt.Errorf("-retry-backoff must be at least 1, got %g", c.RetryBackoff))
	}
	if c.RetryJitter < 0 || c.RetryJitter >= 1 {
		errs = append(errs, fmt.Errorf("-retry-jitter must be in [0, 1), got %g", c.RetryJitter))
	}
	if c.MaxRetries < 0 {
		errs = append(errs, fmt.Errorf("-max-retries must not be negative, got %d", c.MaxRetries))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("-data must not be empty"))
	}
	errs = append(errs, c.validateSecurity()...)
	switch c.Store {
	case StorePebble:
	case StoreEtcd:
		if len(c.EtcdEndpoints) == 0 {
			errs = append(errs, errors.New("-store etcd needs -etcd-endpoints"))
		}
		if c.NodeID == "" {
			errs = append(errs, errors.New("-node-id must not be empty"))
		}
		pos("lease-ttl", int64(c.LeaseTTL))
		pos("etcd-timeout", int64(c.EtcdTimeout))
		pos("balance-interval", int64(c.BalanceInterval))
		pos("forward-timeout", int64(c.ForwardTimeout))
		if c.Shards < 1 || c.Shards > MaxShards {
			errs = append(errs, fmt.Errorf("-shards must be in 1..%d, got %d", MaxShards, c.Shards))
		}
		if c.AdvertiseURL != "" {
			if u, err := url.Parse(c.AdvertiseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				errs = append(errs, fmt.Errorf("-advertise-url must be an absolute http or https URL, got %q", c.AdvertiseURL))
			}
		}
	default:
		errs = append(errs, fmt.Errorf("-store must be pebble or etcd, got %q", c.Store))
	}
	return errors.Join(errs...)
}

// validateSecurity checks the TLS and admin flags. Secure by default: an
// admin API reachable beyond loopback without a token refuses to start.
func (c *Config) validateSecurity() []error {
	var errs []error
	pair := func(a, b, an, bn string) {
		if (a == "") != (b == "") {
			errs = append(errs, fmt.Errorf("-%s and -%s go together", an, bn))
		}
	}
	pair(c.TLSCert, c.TLSKey, "tls-cert", "tls-key")
	pair(c.PeerCert, c.PeerKey, "peer-cert", "peer-key")
	pair(c.EtcdCert, c.EtcdKey, "etcd-cert", "etcd-key")
	pair(c.EtcdUser, c.EtcdPasswordFile, "etcd-user", "etcd-password-file")
	switch c.TLSClientAuth {
	case "", ClientAuthNone:
	case ClientAuthRequest, ClientAuthRequire:
		if c.TLSClientCA == "" {
			errs = append(errs, fmt.Errorf("-tls-client-auth %s needs -tls-client-ca", c.TLSClientAuth))
		}
	default:
		errs = append(errs, fmt.Errorf("-tls-client-auth must be none, request or require, got %q", c.TLSClientAuth))
	}
	if c.TLSClientCA != "" && c.TLSCert == "" {
		errs = append(errs, errors.New("-tls-client-ca needs -tls-cert and -tls-key"))
	}
	if c.BindGroupsToPeer != nil && *c.BindGroupsToPeer && c.Store == StoreEtcd && !c.authenticatesForwards() {
		errs = append(errs, errors.New("-bind-groups-to-peer with -store etcd needs -cluster-ca or -cluster-secret-file: a forwarded request carries its sender's identity only between authenticated instances"))
	}
	if c.PeerAllowFile != "" && c.TLSClientCA == "" {
		errs = append(errs, errors.New("-peer-allow needs client certificates: set -tls-client-ca (and -tls-client-auth require)"))
	}
	if c.PeerAllowFile != "" && c.Store == StoreEtcd && !c.authenticatesForwards() {
		errs = append(errs, errors.New("-peer-allow with -store etcd needs -cluster-ca or -cluster-secret-file: a forwarded request carries its sender's identity only between authenticated instances"))
	}
	errs = append(errs, c.validateCluster()...)
	if c.AdminTokenFile == "" {
		addr, name := c.Listen, "-listen"
		if c.AdminListen != "" {
			addr, name = c.AdminListen, "-admin-listen"
		}
		if !loopbackOnly(addr) {
			errs = append(errs, fmt.Errorf("the admin API (/v1/*, /metrics) would be reachable on %s (%s) without a token: set -admin-token-file FILE, or -admin-listen 127.0.0.1:PORT", addr, name))
		}
	}
	return errs
}

// validateCluster checks the forwarding flags of -store etcd. Secure by
// default: instances that would take forwarded requests from beyond
// loopback without authenticating them refuse to start.
func (c *Config) validateCluster() []error {
	var errs []error
	if c.ClusterCA != "" {
		if c.TLSCert == "" {
			errs = append(errs, errors.New("-cluster-ca needs -tls-cert and -tls-key: each instance presents its certificate, signed by -cluster-ca, when it forwards"))
		}
		if c.ClusterCA == c.TLSClientCA {
			errs = append(errs, errors.New("-cluster-ca must be a CA of the instances only, not -tls-client-ca: every partner could forward as an instance"))
		}
	}
	if c.Store != StoreEtcd {
		return errs
	}
	if c.TLSCert != "" && clientAuthType(c) == tls.RequireAndVerifyClientCert && c.ClusterCA == "" && c.PeerCert == "" {
		errs = append(errs, errors.New("-tls-client-auth require with -store etcd needs -cluster-ca (or -peer-cert by -tls-client-ca): the instances forwarding to each other must present a client certificate"))
	}
	if c.TLSCert != "" && strings.HasPrefix(c.AdvertiseURL, "http:") {
		errs = append(errs, errors.New("-advertise-url must be https:// with -tls-cert: the other instances forward to it"))
	}
	if c.authenticatesForwards() {
		return errs
	}
	addr, name := c.Listen, "-listen"
	if !loopbackOnly(addr) {
		errs = append(errs, fmt.Errorf("-store etcd instances would take forwarded requests on %s (%s) from anyone: set -cluster-secret-file FILE (the same on every instance), or -cluster-ca FILE with -tls-cert", addr, name))
	} else if u, err := url.Parse(c.AdvertiseURL); c.AdvertiseURL != "" && (err != nil || !loopbackHost(u.Hostname())) {
		errs = append(errs, fmt.Errorf("-store etcd instances would forward requests to %s (-advertise-url) without authentication: set -cluster-secret-file FILE (the same on every instance), or -cluster-ca FILE with -tls-cert", c.AdvertiseURL))
	}
	return errs
}

// loopbackOnly reports whether a listen address can be reached from this
// host only: localhost or a loopback IP. A wildcard (":8080", "0.0.0.0")
// or any other name counts as reachable from the network.
func loopbackOnly(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && loopbackHost(host)
}

// loopbackHost reports whether a host name or IP is this host's only:
// localhost or a loopback IP.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// byteSize is a flag.Value of bytes with an optional KiB/MiB/GiB suffix.
type byteSize int64

func (b *byteSize) String() string { return FormatBytes(int64(*b)) }

func (b *byteSize) Set(s string) error {
	v, err := ParseBytes(s)
	if err != nil {
		return err
	}
	*b = byteSize(v)
	return nil
}

// ParseBytes reads a byte count with an optional KiB, MiB or GiB suffix.
func ParseBytes(s string) (int64, error) {
	mult := int64(1)
	t := strings.TrimSpace(s)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("invalid size %q: want bytes with an optional KiB/MiB/GiB suffix", s)
	}
	return n * mult, nil
}

// FormatBytes writes n with the largest exact binary suffix.
func FormatBytes(n int64) string {
	switch {
	case n != 0 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "GiB"
	case n != 0 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	case n != 0 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KiB"
	}
	return strconv.FormatInt(n, 10)
}

// rfc3339 is a flag.Value of an RFC 3339 instant (fractions allowed).
type rfc3339 time.Time

func (t *rfc3339) String() string {
	if time.Time(*t).IsZero() {
		return ""
	}
	return time.Time(*t).Format(time.RFC3339Nano)
}

func (t *rfc3339) Set(s string) error {
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("invalid RFC 3339 time %q", s)
	}
	*t = rfc3339(v.UTC())
	return nil
}
