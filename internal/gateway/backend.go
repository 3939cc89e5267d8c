package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/etcdstore"
	"github.com/wsrkit/wsrkit/store/pebblestore"
)

// Store backends of -store.
const (
	StorePebble = "pebble" // embedded pebble under -data (one instance)
	StoreEtcd   = "etcd"   // shared etcd cluster, one fenced active instance
)

// ClaimName is the etcd ownership claim an active gateway holds: one name
// for the whole gateway, so one instance is active at a time and the others
// wait in Acquire as hot standbys.
const ClaimName = "gateway"

// ErrLost is wrapped by the error a Gateway reports on Lost when it lost
// its etcd claim (lease expired or revoked, or a fenced commit refused):
// another instance may own the state now, so this one must stop.
var ErrLost = errors.New("gateway: etcd ownership lost")

// backend is the store the node runs on, with the hooks the gateway needs
// around it.
type backend struct {
	// store is handed to the node, which closes it on Close.
	store store.Store
	// closeAll runs after the node closed store: it releases what the
	// node's Close left open (the etcd lease and client).
	closeAll func() error
	// kill closes everything at once, as a crash would (tests).
	kill func()
	// lost receives one error when the instance must stop; nil channel
	// (never ready) for pebble.
	lost <-chan error
}

// openBackend opens the -store backend. With etcd it waits (within ctx) to
// hold ClaimName, logging once that it stands by when another node has it.
func openBackend(ctx context.Context, cfg *Config, log *slog.Logger) (*backend, error) {
	switch cfg.Store {
	case StorePebble, "":
		s, err := pebblestore.Open(pebblestore.Options{Dir: filepath.Join(cfg.DataDir, storeDir)})
		if err != nil {
			return nil, err
		}
		return &backend{store: s, closeAll: func() error { return nil }, kill: func() { s.Close() }}, nil
	case StoreEtcd:
		return openEtcd(ctx, cfg, log)
	}
	return nil, fmt.Errorf("unknown -store %q", cfg.Store)
}

func openEtcd(ctx context.Context, cfg *Config, log *slog.Logger) (*backend, error) {
	base, err := etcdstore.Open(etcdstore.Options{
		Endpoints: cfg.EtcdEndpoints,
		// One bound for dialing and for each request.
		RequestTimeout: cfg.EtcdTimeout,
		Prefix:         cfg.EtcdPrefix,
		DialTimeout:    cfg.EtcdTimeout,
	})
	if err != nil {
		return nil, err
	}
	// A bounded read first: NewOwner's lease grant waits without a bound
	// when no endpoint answers, so wrong -etcd-endpoints would hang serve.
	if _, _, err := base.NextDeadline(); err != nil {
		base.Close()
		return nil, fmt.Errorf("etcd %s: %w", strings.Join(cfg.EtcdEndpoints, ","), err)
	}
	owner, err := etcdstore.NewOwner(base, cfg.NodeID, cfg.LeaseTTL)
	if err != nil {
		base.Close()
		return nil, err
	}
	fail := func(err error) (*backend, error) {
		owner.Close()
		base.Close()
		return nil, err
	}
	claim, err := owner.TryAcquire(ctx, ClaimName)
	if errors.Is(err, etcdstore.ErrOwned) {
		log.Info("standing by: another gateway is active", "node", cfg.NodeID, "holder", err.Error())
		claim, err = owner.Acquire(ctx, ClaimName)
	}
	if err != nil {
		return fail(fmt.Errorf("acquiring %q: %w", ClaimName, err))
	}
	log.Info("active: holding the etcd claim", "node", cfg.NodeID, "claim", ClaimName, "revision", claim.Revision)
	lost := make(chan error, 1)
	var once sync.Once
	report := func(err error) { once.Do(func() { lost <- err }) }
	stop := make(chan struct{})
	go func() {
		select {
		case <-owner.Done():
			report(fmt.Errorf("%w: lease of node %q ended", ErrLost, cfg.NodeID))
		case <-stop:
		}
	}()
	var closeOnce sync.Once
	closeAll := func() error {
		var err error
		closeOnce.Do(func() {
			close(stop)
			// Revoking the lease releases the claim at once, so a standby
			// takes over without waiting for the TTL.
			err = errors.Join(owner.Close(), base.Close())
		})
		return err
	}
	return &backend{
		store:    &fencedStore{Store: base.Fenced(claim), lost: report},
		closeAll: closeAll,
		kill:     func() { base.Close() },
		lost:     lost,
	}, nil
}

// fencedStore is the node's view of a fenced etcd store. Its Close leaves
// the shared connection open (the gateway revokes the lease first, then
// closes it), and a commit refused by the fence reports the loss.
type fencedStore struct {
	store.Store
	lost func(error)
}

// Apply applies batch; ErrFenced means another node may hold the claim now.
func (s *fencedStore) Apply(batch []group.Mutation) error {
	err := s.Store.Apply(batch)
	if errors.Is(err, etcdstore.ErrFenced) {
		s.lost(fmt.Errorf("%w: %v", ErrLost, err))
	}
	return err
}

// Close is a no-op: the backend's closeAll closes the store after the lease.
func (s *fencedStore) Close() error { return nil }

// defaultLeaseTTL is the default -lease-ttl: a standby takes over within
// about this long after the active instance dies.
const defaultLeaseTTL = 10 * time.Second
