// Package etcdstore is the store.Store shared by several gateways, on an etcd
// cluster: one etcd transaction per Apply (raft-replicated and fsynced on a
// quorum before it returns, D8), the key layout of package store under a
// namespace Prefix, and ownership claims (Owner, Claim) whose fenced
// stores refuse a stale owner's writes. It is the only wsrkit package that
// imports go.etcd.io.
//
// # Limits of one transaction
//
// etcd refuses a transaction with more than --max-txn-ops operations
// (default 128) or a request above --max-request-bytes (default 1.5 MiB).
// A batch is never split (that would break its atomicity): Apply refuses a
// batch over Options.MaxTxnOps or Options.MaxRequestBytes, before sending
// it, with an error wrapping store.ErrInvalid that names the limit. Set
// both options to the cluster's flags when the cluster is started with
// larger ones.
//
// # Uncertain outcomes
//
// A transaction that fails after it was sent (timeout, lost leader, lost
// connection) may or may not have committed. The store contract promises
// that an Apply error means nothing was applied, so such an error stops the
// store: it wraps store.ErrFailed, every later call returns it, and the
// caller rebuilds its state from a reopened store, which reads what etcd
// holds. Refusals etcd makes before proposing (too many ops, too large,
// duplicate keys, no space) are definite and leave the store usable.
package etcdstore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/internal/callgate"
	"github.com/wsrkit/wsrkit/store/internal/kvplan"
)

// Defaults of Options.
const (
	// DefaultMaxTxnOps is etcd's default --max-txn-ops.
	DefaultMaxTxnOps = 128
	// DefaultMaxRequestBytes is etcd's default --max-request-bytes.
	DefaultMaxRequestBytes = 3 << 19 // 1.5 MiB
	// DefaultPageSize is the number of keys one ranged Get returns.
	DefaultPageSize = 512
	// DefaultRequestTimeout bounds one etcd request.
	DefaultRequestTimeout = 10 * time.Second
	// DefaultDialTimeout bounds connecting to Endpoints.
	DefaultDialTimeout = 5 * time.Second
)

// Options configure Open.
type Options struct {
	// Client is the etcd client to use; Close leaves it open. When nil,
	// Open dials Endpoints and Close closes that client.
	Client *clientv3.Client
	// Endpoints are the cluster's client URLs (host:port), used when Client
	// is nil.
	Endpoints []string
	// DialTimeout bounds dialing Endpoints (default 5s).
	DialTimeout time.Duration
	// TLS, when set, is the TLS configuration of the connections to
	// Endpoints (trust for the members' certificates, a client
	// certificate); nil connects over plain TCP.
	TLS *tls.Config
	// Username and Password authenticate to a cluster with auth enabled
	// (used when Client is nil); the password never appears in an error.
	Username, Password string
	// Prefix is the namespace of this store's keys in etcd: every key is
	// Prefix followed by the key of package store. Gateways sharing group
	// state use the same Prefix.
	Prefix string
	// Limits bound batches and keys; zero fields take their defaults.
	Limits store.Limits
	// MaxTxnOps bounds the etcd operations of one Apply (default 128, etcd's
	// --max-txn-ops default); it must not exceed the cluster's flag.
	MaxTxnOps int
	// MaxRequestBytes bounds the estimated size of one Apply's request
	// (default 1.5 MiB, etcd's --max-request-bytes default); it must not
	// exceed the cluster's flag.
	MaxRequestBytes int
	// PageSize is the number of keys one ranged Get of Scan, Generations
	// or DueBefore returns (default 512).
	PageSize int
	// RequestTimeout bounds one etcd request (default 10s).
	RequestTimeout time.Duration
}

// Store is a store.Store on etcd, safe for concurrent use.
type Store struct {
	client    *clientv3.Client
	ownClient bool // Close closes client
	kv        clientv3.KV
	prefix    string
	lim       store.Limits
	maxOps    int
	maxBytes  int
	page      int
	timeout   time.Duration
	// locks serialise this process's batches that read and replace the same
	// generation's deadline; transactions also compare the entries they
	// read, so writers elsewhere cannot interleave either.
	locks *kvplan.KeyLocks
	// fence, when set, is compared in every Apply's transaction (Fenced).
	fence *fence
	// shared is the state of the store and every fenced view of it.
	shared *shared
}

// shared is the lifecycle of a store and its fenced views.
type shared struct {
	failed atomic.Pointer[error]
	// gate admits calls and iterations until Close, which waits for them.
	gate callgate.Gate
}

var _ store.Store = (*Store)(nil)

// Open opens the store on opts.Client or on a client dialled to
// opts.Endpoints. It does not contact the cluster.
func Open(opts Options) (*Store, error) {
	c, own := opts.Client, false
	if c == nil {
		if len(opts.Endpoints) == 0 {
			return nil, errors.New("etcdstore: open: neither Client nor Endpoints given")
		}
		var err error
		c, err = clientv3.New(clientv3.Config{
			Endpoints:   opts.Endpoints,
			DialTimeout: orDefault(opts.DialTimeout, DefaultDialTimeout),
			TLS:         opts.TLS,
			Username:    opts.Username,
			Password:    opts.Password,
		})
		if err != nil {
			return nil, fmt.Errorf("etcdstore: open %v: %w", opts.Endpoints, err)
		}
		own = true
	}
	s := &Store{
		client:    c,
		ownClient: own,
		kv:        namespace.NewKV(c.KV, opts.Prefix),
		prefix:    opts.Prefix,
		lim:       opts.Limits,
		maxOps:    orDefault(opts.MaxTxnOps, DefaultMaxTxnOps),
		maxBytes:  orDefault(opts.MaxRequestBytes, DefaultMaxRequestBytes),
		page:      orDefault(opts.PageSize, DefaultPageSize),
		timeout:   orDefault(opts.RequestTimeout, DefaultRequestTimeout),
		locks:     &kvplan.KeyLocks{},
		shared:    &shared{},
	}
	return s, nil
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Client returns the etcd client the store uses.
func (s *Store) Client() *clientv3.Client { return s.client }

// Prefix returns the store's namespace.
func (s *Store) Prefix() string { return s.prefix }

// enter admits a call unless the store is closed or failed.
func (s *Store) enter() error {
	var failed error
	if p := s.shared.failed.Load(); p != nil {
		failed = *p
	}
	return s.shared.gate.Enter(failed)
}

func (s *Store) exit() { s.shared.gate.Exit() }

// fail records err, wrapped in store.ErrFailed, as the store's fatal error
// unless one is recorded, and returns the recorded one.
func (s *Store) fail(err error) error {
	e := fmt.Errorf("%w: etcd outcome unknown: %w", store.ErrFailed, err)
	s.shared.failed.CompareAndSwap(nil, &e)
	return *s.shared.failed.Load()
}

func (s *Store) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.timeout)
}

// Get implements store.Store.
func (s *Store) Get(k group.Key) ([]byte, bool, error) {
	if err := s.lim.CheckKey(k); err != nil {
		return nil, false, err
	}
	if err := s.enter(); err != nil {
		return nil, false, err
	}
	defer s.exit()
	ctx, cancel := s.ctx()
	defer cancel()
	resp, err := s.kv.Get(ctx, string(kvplan.EncodeKey(k)))
	if err != nil {
		return nil, false, fmt.Errorf("etcdstore: get: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return nil, false, nil
	}
	// The value was decoded into a fresh slice: the caller may keep it.
	return resp.Kvs[0].Value, true, nil
}

// Limits returns the limits Apply enforces (store.LimitsOf).
func (s *Store) Limits() store.Limits { return s.lim }

// Close implements store.Store. It waits for calls and iterations in
// progress; an iteration sees the store closing at its next step and ends
// with store.ErrClosed. It closes the client when Open dialled it. Closing
// a store closes its fenced views too.
func (s *Store) Close() error {
	if !s.shared.gate.Close() {
		return store.ErrClosed
	}
	s.shared.gate.Wait()
	if s.ownClient {
		if err := s.client.Close(); err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("etcdstore: close client: %w", err)
		}
	}
	return nil
}
