package pebblestore

import (
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// probeBytes is what ProbeSpace writes: room for a memtable's worth of
// WAL, so that a reopened store can take writes.
const probeBytes = 4 << 20

// ProbeSpace reports whether the store's filesystem takes writes again:
// it writes and syncs probeBytes into a file beside the database
// directory, then removes it. A gateway whose store failed (a full disk)
// probes until space is back, then exits for a supervisor to restart it.
func (s *Store) ProbeSpace() error {
	name := s.fs.PathJoin(s.fs.PathDir(s.dir), "space-probe")
	f, err := s.fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("pebblestore: space probe: %w", err)
	}
	buf := make([]byte, 64<<10)
	for i := range buf {
		buf[i] = byte(i*7 + i>>8) // not all zero: no sparse or compressed shortcut
	}
	for written := 0; written < probeBytes && err == nil; written += len(buf) {
		_, err = f.Write(buf)
	}
	if err == nil {
		err = f.Sync()
	}
	err = firstErr(err, f.Close())
	err = firstErr(err, s.fs.Remove(name))
	if err != nil {
		s.fs.Remove(name) //nolint:errcheck // best effort: the probe is garbage
		return fmt.Errorf("pebblestore: space probe: %w", err)
	}
	return nil
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// FullDisk simulates a full disk under a store for tests of other
// packages, which do not import pebble: while Fill is in effect every
// write to the filesystem fails with ENOSPC, as on a full disk; Free
// gives the space back.
type FullDisk struct {
	full  atomic.Bool
	count atomic.Int64
}

// Fill makes writes fail with ENOSPC.
func (d *FullDisk) Fill() { d.full.Store(true) }

// Free lets writes succeed again.
func (d *FullDisk) Free() { d.full.Store(false) }

// Refused counts the writes refused so far.
func (d *FullDisk) Refused() int64 { return d.count.Load() }

// Wrap returns opts with its filesystem (the operating system's when nil)
// behind d.
func (d *FullDisk) Wrap(opts Options) Options {
	fs := opts.FS
	if fs == nil {
		fs = vfs.Default
	}
	opts.FS = errorfs.Wrap(fs, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if !d.full.Load() || !fullDiskRefuses(op) {
			return nil
		}
		d.count.Add(1)
		return &pathError{op: "write", path: op.Path, err: syscall.ENOSPC}
	}))
	return opts
}

// fullDiskRefuses reports whether a full disk refuses op: a request for
// new blocks (a preallocation, a write to a file that was not
// preallocated). Pebble preallocates its WAL files on an operating-system
// filesystem, so writes into them succeed until a new WAL file needs its
// blocks; creating, renaming, removing and syncing need none.
func fullDiskRefuses(op errorfs.Op) bool {
	switch op.Kind {
	case errorfs.OpFilePreallocate:
		return true
	case errorfs.OpFileWrite, errorfs.OpFileWriteAt:
		return !strings.HasSuffix(op.Path, ".log")
	}
	return false
}

// pathError is an *os.PathError-like error wrapping ENOSPC.
type pathError struct {
	op, path string
	err      error
}

func (e *pathError) Error() string { return e.op + " " + e.path + ": " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }
