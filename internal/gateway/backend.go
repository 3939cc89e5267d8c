package gateway

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/etcdstore"
	"github.com/wsrkit/wsrkit/store/pebblestore"
)

// Store backends of -store.
const (
	StorePebble = "pebble" // embedded pebble under -data (one instance)
	StoreEtcd   = "etcd"   // shared etcd cluster, groups spread over shards
)

// ErrLost is wrapped by the error a Gateway reports on Lost when it lost
// its etcd lease or a shard claim (lease expired or revoked, or a fenced
// commit refused): another instance may own its shards now, so this one
// must stop.
var ErrLost = errors.New("gateway: etcd ownership lost")

// openPebble opens the -store pebble store under -data; tune, when set,
// adjusts its options (Options.Pebble).
func openPebble(cfg *Config, tune func(*pebblestore.Options)) (store.Store, error) {
	o := pebblestore.Options{Dir: filepath.Join(cfg.DataDir, storeDir)}
	if tune != nil {
		tune(&o)
	}
	return pebblestore.Open(o)
}

// fencedStore is a shard node's view of its fenced etcd store. Its Close
// leaves the shard's store open (a shard released and claimed again reuses
// it; the cluster closes it last), and a commit refused by the fence
// reports the loss.
type fencedStore struct {
	store.Store
	lost func(error)
}

// Apply applies batch; ErrFenced means another node may hold the shard now.
func (s *fencedStore) Apply(batch []group.Mutation) error {
	err := s.Store.Apply(batch)
	if errors.Is(err, etcdstore.ErrFenced) {
		s.lost(fmt.Errorf("%w: %v", ErrLost, err))
	}
	return err
}

// Close is a no-op: the cluster closes the shard stores after the lease.
func (s *fencedStore) Close() error { return nil }

// defaultLeaseTTL is the default -lease-ttl: the others take over a dead
// instance's shards within about this long.
const defaultLeaseTTL = 10 * time.Second
