// Package etcdtest starts a real embedded etcd cluster on loopback ports for
// tests (go.etcd.io/etcd/server/v3/embed): no mocks, no fixed ports, bounded
// waits, and a clean shutdown.
package etcdtest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
)

// Options configure Start.
type Options struct {
	// Members is the cluster size (default 3).
	Members int
	// MaxTxnOps is every member's --max-txn-ops (default etcd's, 128).
	MaxTxnOps uint
	// MaxRequestBytes is every member's --max-request-bytes (default
	// etcd's, 1.5 MiB).
	MaxRequestBytes uint
	// ReadyTimeout bounds the wait for the cluster to elect a leader and
	// serve (default 60s).
	ReadyTimeout time.Duration
	// TLS, when set, serves the client URLs over TLS (the peer URLs stay
	// plain: they are the members' own loopback traffic).
	TLS *TLS
}

// TLS is how the members serve their clients over TLS, and how the
// cluster's own clients (Client, History, EnableAuth) connect.
type TLS struct {
	// CertFile and KeyFile are the members' PEM server certificate and key.
	CertFile, KeyFile string
	// ClientCAFile, when set, makes the members require a client
	// certificate signed by this PEM CA.
	ClientCAFile string
	// Client is the configuration of the cluster's own clients.
	Client *tls.Config
}

// Cluster is a running embedded cluster.
type Cluster struct {
	// Endpoints are the members' client addresses (host:port), in member
	// order.
	Endpoints []string
	// Members are the running servers; a stopped one is nil.
	Members []*embed.Etcd
	tls     *tls.Config // the cluster's own clients (Options.TLS)
	// user and password are the cluster's own clients' credentials once
	// EnableAuth turned auth on.
	user, password string
}

// startAttempts bounds the restarts after a chosen port was taken by
// another process between choosing and binding it.
const startAttempts = 5

// Start starts a cluster with data directories under dir and waits until
// every member is ready. The caller must Close it.
func Start(dir string, opts Options) (*Cluster, error) {
	if opts.Members <= 0 {
		opts.Members = 3
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = time.Minute
	}
	var err error
	for attempt := range startAttempts {
		var c *Cluster
		c, err = start(filepath.Join(dir, fmt.Sprintf("try%d", attempt)), opts)
		if err == nil {
			return c, nil
		}
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	return nil, err
}

// StartTB starts a cluster for one test (or benchmark), closed at its end.
func StartTB(tb testing.TB, opts Options) *Cluster {
	tb.Helper()
	c, err := Start(tb.TempDir(), opts)
	if err != nil {
		tb.Fatalf("etcdtest: %v", err)
	}
	tb.Cleanup(c.Close)
	return c
}

func start(dir string, opts Options) (*Cluster, error) {
	n := opts.Members
	ports, err := freePorts(2 * n)
	if err != nil {
		return nil, err
	}
	clientScheme := "http"
	if opts.TLS != nil {
		clientScheme = "https"
	}
	peer := func(i int) url.URL { return url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[2*i])} }
	client := func(i int) url.URL {
		return url.URL{Scheme: clientScheme, Host: fmt.Sprintf("127.0.0.1:%d", ports[2*i+1])}
	}
	var initial []string
	for i := range n {
		p := peer(i)
		initial = append(initial, fmt.Sprintf("m%d=%s", i, p.String()))
	}
	c := &Cluster{}
	if opts.TLS != nil {
		c.tls = opts.TLS.Client
	}
	for i := range n {
		cfg := embed.NewConfig()
		cfg.Name = fmt.Sprintf("m%d", i)
		cfg.Dir = filepath.Join(dir, cfg.Name)
		cfg.ListenPeerUrls = []url.URL{peer(i)}
		cfg.AdvertisePeerUrls = []url.URL{peer(i)}
		cfg.ListenClientUrls = []url.URL{client(i)}
		cfg.AdvertiseClientUrls = []url.URL{client(i)}
		cfg.InitialCluster = strings.Join(initial, ",")
		cfg.InitialClusterToken = "etcdtest-" + filepath.Base(dir)
		cfg.Logger = "zap"
		cfg.LogLevel = "error"
		if t := opts.TLS; t != nil {
			cfg.ClientTLSInfo = transport.TLSInfo{CertFile: t.CertFile, KeyFile: t.KeyFile,
				TrustedCAFile: t.ClientCAFile, ClientCertAuth: t.ClientCAFile != ""}
		}
		if opts.MaxTxnOps > 0 {
			cfg.MaxTxnOps = opts.MaxTxnOps
		}
		if opts.MaxRequestBytes > 0 {
			cfg.MaxRequestBytes = opts.MaxRequestBytes
		}
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("start member %d: %w", i, err)
		}
		c.Members = append(c.Members, e)
		c.Endpoints = append(c.Endpoints, client(i).Host)
	}
	deadline := time.After(opts.ReadyTimeout)
	for i, e := range c.Members {
		select {
		case <-e.Server.ReadyNotify():
		case err := <-e.Err():
			c.Close()
			return nil, fmt.Errorf("member %d: %w", i, err)
		case <-deadline:
			c.Close()
			return nil, fmt.Errorf("cluster not ready within %v", opts.ReadyTimeout)
		}
	}
	return c, nil
}

// freePorts returns n distinct loopback ports free at the time of the call.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("choose a port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Client returns a new client to every member (over TLS and as root when
// the cluster has them); the caller closes it.
func (c *Cluster) Client() (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: c.Endpoints, DialTimeout: 5 * time.Second, TLS: c.tls,
		Username: c.user, Password: c.password})
}

// User is an etcd user EnableAuth creates, with read and write access to
// the keys under Prefix only.
type User struct {
	Name, Password, Prefix string
}

// EnableAuth turns etcd authentication on: a root user with the password
// rootPassword (which the cluster's own clients use from then on) and each
// of users, with a role of its own on its prefix. Within 10 s.
func (c *Cluster) EnableAuth(rootPassword string, users ...User) error {
	cl, ctx, done, err := c.session()
	if err != nil {
		return err
	}
	defer done()
	steps := []func() error{
		func() error { _, err := cl.UserAdd(ctx, "root", rootPassword); return err },
		func() error { _, err := cl.UserGrantRole(ctx, "root", "root"); return err },
	}
	for _, u := range users {
		role := "role-" + u.Name
		steps = append(steps,
			func() error { _, err := cl.RoleAdd(ctx, role); return err },
			func() error {
				_, err := cl.RoleGrantPermission(ctx, role, u.Prefix, clientv3.GetPrefixRangeEnd(u.Prefix), clientv3.PermissionType(clientv3.PermReadWrite))
				return err
			},
			func() error { _, err := cl.UserAdd(ctx, u.Name, u.Password); return err },
			func() error { _, err := cl.UserGrantRole(ctx, u.Name, role); return err },
		)
	}
	steps = append(steps, func() error { _, err := cl.AuthEnable(ctx); return err })
	for _, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("etcdtest: enable auth: %w", err)
		}
	}
	c.user, c.password = "root", rootPassword
	return nil
}

// session returns a new client and a context that ends within 10 s; done
// releases both.
func (c *Cluster) session() (cl *clientv3.Client, ctx context.Context, done func(), err error) {
	if cl, err = c.Client(); err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	return cl, ctx, func() { cancel(); cl.Close() }, nil
}

// ClientTB returns a new client closed at the end of tb.
func (c *Cluster) ClientTB(tb testing.TB) *clientv3.Client {
	tb.Helper()
	cl, err := c.Client()
	if err != nil {
		tb.Fatalf("etcdtest: client: %v", err)
	}
	tb.Cleanup(func() { cl.Close() })
	return cl
}

// Stop stops member i (a crash as far as the others can tell; its data
// stays on disk).
func (c *Cluster) Stop(i int) error {
	if i < 0 || i >= len(c.Members) || c.Members[i] == nil {
		return errors.New("etcdtest: no such running member")
	}
	c.Members[i].Close()
	c.Members[i] = nil
	return nil
}

// Close stops every running member.
func (c *Cluster) Close() {
	for i := range c.Members {
		if c.Members[i] != nil {
			c.Members[i].Close()
			c.Members[i] = nil
		}
	}
}

// Event is one change of a key in the cluster's revision history.
type Event struct {
	Key    string
	Value  string
	Delete bool // a deletion (or a lease expiry); else a put
	// Revision is the change's revision; CreateRevision the key's (0 for a
	// deletion).
	Revision, CreateRevision int64
}

// History returns every change of the keys under prefix since revision 1,
// in revision order (the embedded cluster does not compact). It reads
// through a watch on a new client, within 10 s.
func (c *Cluster) History(prefix string) ([]Event, error) {
	cl, ctx, done, err := c.session()
	if err != nil {
		return nil, err
	}
	defer done()
	now, err := cl.Get(ctx, "\x00")
	if err != nil {
		return nil, err
	}
	head := now.Header.Revision
	var out []Event
	wctx := clientv3.WithRequireLeader(ctx)
	wch := cl.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(1))
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case wr, ok := <-wch:
			if !ok {
				return nil, fmt.Errorf("etcdtest: history of %q: watch ended: %w", prefix, ctx.Err())
			}
			if err := wr.Err(); err != nil {
				return nil, err
			}
			for _, ev := range wr.Events {
				out = append(out, Event{Key: string(ev.Kv.Key), Value: string(ev.Kv.Value), Delete: ev.Type == clientv3.EventTypeDelete,
					Revision: ev.Kv.ModRevision, CreateRevision: ev.Kv.CreateRevision})
			}
			// A progress notification comes only once the watch has
			// caught up: every change up to its revision was delivered.
			if wr.IsProgressNotify() && wr.Header.Revision >= head {
				return out, nil
			}
		case <-tick.C:
			cl.RequestProgress(wctx)
		case <-ctx.Done():
			return nil, fmt.Errorf("etcdtest: history of %q: %w", prefix, ctx.Err())
		}
	}
}

// ExpireLease ends the lease that key is bound to at once, as its expiry
// would (every key bound to it is deleted); for a node that is paused
// longer than its TTL.
func (c *Cluster) ExpireLease(key string) error {
	cl, ctx, done, err := c.session()
	if err != nil {
		return err
	}
	defer done()
	resp, err := cl.Get(ctx, key)
	if err != nil {
		return err
	}
	if len(resp.Kvs) == 0 || resp.Kvs[0].Lease == 0 {
		return fmt.Errorf("etcdtest: %q is not bound to a lease", key)
	}
	_, err = cl.Revoke(ctx, clientv3.LeaseID(resp.Kvs[0].Lease))
	return err
}
