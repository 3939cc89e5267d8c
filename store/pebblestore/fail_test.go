package pebblestore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
)

// countingLogger counts the error lines a store writes.
type countingLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *countingLogger) Infof(string, ...any) {}
func (l *countingLogger) Errorf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *countingLogger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

func putBatch(i int, value []byte) []group.Mutation {
	k := group.Key{Role: group.RoleReceiver, GroupID: fmt.Sprintf("urn:g:%06d", i), Generation: 1, Kind: group.KindMeta}
	return []group.Mutation{{Op: group.OpPut, Key: k, Value: value}}
}

// applyWithin runs Apply and fails the test when it does not return
// within limit (a generous bound: the point is that it returns at all).
func applyWithin(t *testing.T, s *Store, batch []group.Mutation, limit time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.Apply(batch) }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("Apply still blocked after %s", limit)
		return nil
	}
}

// testFullDisk fills the disk under a store as inject says, and checks that
// the store fails fast and stays failed, that it logs and retries at a
// bounded pace, that Close returns, and that a reopen once space is back
// holds every batch Apply acknowledged.
func testFullDisk(t *testing.T, inject func(op errorfs.Op) bool, value []byte) {
	dir := t.TempDir() + "/db"
	var full sync.Mutex
	on := false
	fs := errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		full.Lock()
		defer full.Unlock()
		if on && inject(op) {
			return &pathError{op: "write", path: op.Path, err: syscall.ENOSPC}
		}
		return nil
	}))
	log := &countingLogger{}
	s, err := Open(Options{Dir: dir, FS: fs, Logger: log, MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	acked := 0
	for ; acked < 10; acked++ {
		if err := s.Apply(putBatch(acked, value)); err != nil {
			t.Fatal(err)
		}
	}
	full.Lock()
	on = true
	full.Unlock()
	var failure error
	for i := acked; i < acked+200 && failure == nil; i++ {
		if err := applyWithin(t, s, putBatch(i, value), 10*time.Second); err != nil {
			failure = err
			break
		}
		acked = i + 1
	}
	if failure == nil {
		t.Fatal("no error while the disk is full")
	}
	if !errors.Is(failure, syscall.ENOSPC) && !errors.Is(failure, store.ErrFailed) {
		t.Fatalf("failure %v: neither ENOSPC nor a store failure", failure)
	}
	// From now on every call fails at once; pebble's retries are paced.
	time.Sleep(time.Second)
	if err := applyWithin(t, s, putBatch(9999, value), time.Second); !errors.Is(err, store.ErrFailed) {
		t.Fatalf("after the failure: %v, want store.ErrFailed", err)
	}
	before, lines := s.fatal.get(), log.count()
	time.Sleep(2 * time.Second)
	if n := log.count() - lines; n > 2 {
		t.Fatalf("%d error lines in 2 s of a full disk (rate-limited: %q)", n, log.lines[len(log.lines)-1])
	}
	if before == nil {
		t.Fatal("the store is not marked failed")
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if !errors.Is(err, store.ErrFailed) {
			t.Fatalf("Close: %v, want the failure", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close blocked")
	}
	// Space is back: a reopen holds every acknowledged batch.
	full.Lock()
	on = false
	full.Unlock()
	r, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer r.Close()
	for i := range acked {
		if _, ok, err := r.Get(putBatch(i, nil)[0].Key); err != nil || !ok {
			t.Fatalf("acknowledged batch %d lost after the disk filled: %v", i, err)
		}
	}
	if err := r.ProbeSpace(); err != nil {
		t.Fatalf("probe with space: %v", err)
	}
}

func TestFullDiskFailsFastIncompressible(t *testing.T) {
	// #18 item 8: incompressible payloads fill the WAL, whose next file
	// cannot get its blocks, and no sstable can be written.
	testFullDisk(t, fullDiskRefuses, incompressible(64<<10))
}

func TestFullDiskFailsFastWhenOnlyFlushesFail(t *testing.T) {
	// #18 item 8, compressible payloads: the WAL still takes writes, but
	// no memtable can be flushed to an sstable, so commits stall once the
	// memtables are full; the store fails instead of stalling, and pebble
	// stops spinning on its flush retries.
	testFullDisk(t, func(op errorfs.Op) bool {
		return strings.HasSuffix(op.Path, ".sst") && fullDiskRefuses(op)
	}, []byte(strings.Repeat("y", 64<<10)))
}

func incompressible(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func TestProbeSpaceFailsOnAFullDisk(t *testing.T) {
	var d FullDisk
	opts := d.Wrap(Options{Dir: t.TempDir() + "/db"})
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d.Fill()
	if err := s.ProbeSpace(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("probe on a full disk: %v", err)
	}
	if d.Refused() == 0 {
		t.Fatal("no write refused")
	}
	d.Free()
	if err := s.ProbeSpace(); err != nil {
		t.Fatalf("probe once space is back: %v", err)
	}
}

func TestRealTmpfsFullDisk(t *testing.T) {
	// #18 item 8 on a real filesystem: a 20 MiB tmpfs filled by
	// incompressible batches. Mounting needs root.
	if os.Geteuid() != 0 {
		t.Skip("pebblestore: the tmpfs full-disk test mounts a 20 MiB tmpfs and needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("pebblestore: cannot mount a tmpfs here (%v: %s)", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() }) //nolint:errcheck
	// Ballast, deleted later to give space back.
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, incompressible(6<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	log := &countingLogger{}
	dir := filepath.Join(mnt, "db")
	s, err := Open(Options{Dir: dir, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	acked := 0
	var failure error
	for ; acked < 1000; acked++ {
		if failure = applyWithin(t, s, putBatch(acked, incompressible(64<<10)), 10*time.Second); failure != nil {
			break
		}
	}
	if !errors.Is(failure, store.ErrFailed) {
		t.Fatalf("after %d batches on a full tmpfs: %v, want a store failure", acked, failure)
	}
	lines := log.count()
	time.Sleep(2 * time.Second)
	if err := applyWithin(t, s, putBatch(9999, []byte("x")), time.Second); !errors.Is(err, store.ErrFailed) {
		t.Fatalf("after the failure: %v", err)
	}
	if n := log.count() - lines; n > 2 {
		t.Fatalf("%d error lines in 2 s of a full disk", n)
	}
	if err := s.ProbeSpace(); err == nil {
		t.Fatal("the probe passes on a full disk")
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close blocked")
	}
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	// Space comes back as an operator gives it: the ballast alone is not
	// always enough, since reopening replays the WAL and may flush it to an
	// sstable beside it (up to the 14 MiB acknowledged) before the probe.
	if out, err := exec.Command("mount", "-o", "remount,size=64m", mnt).CombinedOutput(); err != nil {
		t.Fatalf("growing the tmpfs: %v: %s", err, bytes.TrimSpace(out))
	}
	r, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatalf("reopen with space: %v", err)
	}
	defer r.Close()
	if err := r.ProbeSpace(); err != nil {
		t.Fatalf("probe with space: %v", err)
	}
	for i := range acked {
		if _, ok, err := r.Get(putBatch(i, nil)[0].Key); err != nil || !ok {
			t.Fatalf("acknowledged batch %d lost: %v", i, err)
		}
	}
	t.Logf("%d batches acknowledged before the tmpfs was full", acked)
}
