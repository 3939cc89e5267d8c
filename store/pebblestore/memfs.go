package pebblestore

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// MemFS is an in-memory, crashable filesystem for a Store, for tests,
// simulations and conformance runs that must not touch the disk nor import
// pebble themselves.
type MemFS struct {
	fs  *vfs.MemFS
	wal *walFault
}

// NewMemFS returns an empty crashable in-memory filesystem.
func NewMemFS() *MemFS { return &MemFS{fs: vfs.NewCrashableMem(), wal: &walFault{}} }

// Open opens (creating when missing) a Store in dir on m.
func (m *MemFS) Open(dir string, opts Options) (*Store, error) {
	opts.Dir = dir
	opts.FS = errorfs.Wrap(m.fs, m.wal)
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
	return &MemFS{fs: m.fs.CrashClone(cfg), wal: &walFault{}}
}

// FailNextWALWrite makes the next write or sync of a write-ahead log file
// on m fail with err, as a failing disk would (errorfs); nil disarms it.
// The Apply waiting for that commit fails with store.ErrFailed and the
// store stops: recover from a CrashClone. It reports whether a fault was
// armed and not consumed before this call.
func (m *MemFS) FailNextWALWrite(err error) (pending bool) {
	var p *error
	if err != nil {
		p = &err
	}
	return m.wal.next.Swap(p) != nil
}

// walFault is the errorfs.Injector behind FailNextWALWrite.
type walFault struct{ next atomic.Pointer[error] }

func (w *walFault) MaybeError(op errorfs.Op) error {
	switch op.Kind {
	case errorfs.OpFileWrite, errorfs.OpFileSync, errorfs.OpFileSyncData:
	default:
		return nil
	}
	if !strings.HasSuffix(op.Path, ".log") || w.next.Load() == nil {
		return nil
	}
	if p := w.next.Swap(nil); p != nil {
		return fmt.Errorf("%w: %w", errorfs.ErrInjected, *p)
	}
	return nil
}

func (w *walFault) String() string { return "pebblestore.MemFS.FailNextWALWrite" }
