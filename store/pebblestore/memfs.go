package pebblestore

import (
	"math/rand/v2"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// MemFS is an in-memory, crashable filesystem for a Store, for tests,
// simulations and conformance runs that must not touch the disk nor import
// pebble themselves.
type MemFS struct {
	fs *vfs.MemFS
}

// NewMemFS returns an empty crashable in-memory filesystem.
func NewMemFS() *MemFS { return &MemFS{fs: vfs.NewCrashableMem()} }

// Open opens (creating when missing) a Store in dir on m.
func (m *MemFS) Open(dir string, opts Options) (*Store, error) {
	opts.Dir = dir
	opts.FS = m.fs
	return Open(opts)
}

// CrashClone returns the filesystem as a crash at this instant could leave
// it: everything synced, and of what was not synced, each block with
// probability unsyncedPercent/100 (chosen by seed). The Store open on m is
// unaffected; open the clone to recover as after a crash.
func (m *MemFS) CrashClone(unsyncedPercent int, seed uint64) *MemFS {
	cfg := vfs.CrashCloneCfg{UnsyncedDataPercent: unsyncedPercent}
	if unsyncedPercent > 0 {
		cfg.RNG = rand.New(rand.NewPCG(seed, seed^0x5bd1e995))
	}
	return &MemFS{fs: m.fs.CrashClone(cfg)}
}
