package pebblestore_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store/internal/kvplan"
	"github.com/wsrkit/wsrkit/store/pebblestore"
)

// The benchmarks of this file measure the store against its ceiling, raw
// pebble, in one run (go test -bench . -benchmem ./store/pebblestore/), on a
// real directory (b.TempDir()). "Accept one message" is the batch a receiver
// commits for a new in-order message: KindMeta (100 B), a KindReceived run
// (16 B), KindDelivery with a 1.5 KB payload, and the generation's deadline.

const (
	payloadBytes = 1536
	metaBytes    = 100
	runBytes     = 16
)

var committerCounts = []int{1, 8, 64}

func acceptBatch(gid string, n uint64, payload []byte) []group.Mutation {
	k := func(kind group.Kind, num uint64) group.Key {
		return group.Key{Role: group.RoleReceiver, GroupID: gid, Generation: 1, Kind: kind, Number: num}
	}
	return []group.Mutation{
		{Op: group.OpPut, Key: k(group.KindMeta, 0), Value: payload[:metaBytes]},
		{Op: group.OpPut, Key: k(group.KindReceived, 0), Value: payload[:runBytes]},
		{Op: group.OpPut, Key: k(group.KindDelivery, n), Value: payload},
		{Op: group.OpSetDeadline, Key: k(0, 0), At: time.Unix(1_800_000_000, int64(n)).UTC()},
	}
}

// runCommitters runs b.N commits spread over c goroutines, goroutine g
// calling commit(g, i) for its i-th commit, and reports messages per second.
func runCommitters(b *testing.B, c int, commit func(g int, i uint64) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, c)
	b.ResetTimer()
	start := time.Now()
	for g := range c {
		wg.Go(func() {
			for i := uint64(0); next.Add(1) <= int64(b.N); i++ {
				if err := commit(g, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msg/s")
}

func reportWAL(b *testing.B, db *pebble.DB, before uint64) {
	b.ReportMetric(float64(db.Metrics().WAL.BytesWritten-before)/float64(b.N), "WAL-B/msg")
}

func openRaw(b *testing.B) *pebble.DB {
	db, err := pebble.Open(b.TempDir(), &pebble.Options{FormatMajorVersion: pebble.FormatNewest, Logger: quiet{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

type quiet struct{}

func (quiet) Infof(string, ...any)  {}
func (quiet) Errorf(string, ...any) {}
func (quiet) Fatalf(f string, a ...any) {
	panic(fmt.Sprintf(f, a...))
}

// BenchmarkRawSet is the plain ceiling: one pebble Set of the delivery key
// and payload, committed with Sync, per message.
func BenchmarkRawSet(b *testing.B) {
	payload := make([]byte, payloadBytes)
	for _, c := range committerCounts {
		b.Run(fmt.Sprintf("committers=%d", c), func(b *testing.B) {
			db := openRaw(b)
			before := db.Metrics().WAL.BytesWritten
			runCommitters(b, c, func(g int, i uint64) error {
				k := kvplan.EncodeKey(group.Key{Role: group.RoleReceiver, GroupID: fmt.Sprintf("group-%03d", g), Generation: 1, Kind: group.KindDelivery, Number: i})
				return db.Set(k, payload, pebble.Sync)
			})
			reportWAL(b, db, before)
		})
	}
}

// BenchmarkRawBatch is the exact ceiling: one synced pebble batch with the
// same keys and values the store writes for an accept (three record sets,
// the deadline's old index key deleted, new index and reverse keys set),
// without the store's work (checks, deadline read, generation lock).
func BenchmarkRawBatch(b *testing.B) {
	payload := make([]byte, payloadBytes)
	for _, c := range committerCounts {
		b.Run(fmt.Sprintf("committers=%d", c), func(b *testing.B) {
			db := openRaw(b)
			before := db.Metrics().WAL.BytesWritten
			runCommitters(b, c, func(g int, i uint64) error {
				gid := fmt.Sprintf("group-%03d", g)
				id := group.ID{GroupID: gid, Generation: 1}
				k := func(kind group.Kind, n uint64) []byte {
					return kvplan.EncodeKey(group.Key{Role: group.RoleReceiver, GroupID: gid, Generation: 1, Kind: kind, Number: n})
				}
				bt := db.NewBatch()
				defer bt.Close()
				bt.Set(k(group.KindMeta, 0), payload[:metaBytes], nil)
				bt.Set(k(group.KindReceived, 0), payload[:runBytes], nil)
				bt.Set(k(group.KindDelivery, i), payload, nil)
				bt.Delete(kvplan.DeadlineKey(i-1, group.RoleReceiver, id), nil)
				bt.Set(kvplan.DeadlineKey(i, group.RoleReceiver, id), nil, nil)
				bt.Set(kvplan.DeadlineRevKey(group.RoleReceiver, id), payload[:8], nil)
				return bt.Commit(pebble.Sync)
			})
			reportWAL(b, db, before)
		})
	}
}

// BenchmarkAccept is the store's own commit of "accept one message", with
// one group per committer.
func BenchmarkAccept(b *testing.B) {
	payload := make([]byte, payloadBytes)
	for _, c := range committerCounts {
		b.Run(fmt.Sprintf("groups=%d", c), func(b *testing.B) {
			s, err := pebblestore.Open(pebblestore.Options{Dir: b.TempDir(), Logger: quiet{}})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			before := s.DB().Metrics().WAL.BytesWritten
			runCommitters(b, c, func(g int, i uint64) error {
				return s.Apply(acceptBatch(fmt.Sprintf("group-%03d", g), i, payload))
			})
			reportWAL(b, s.DB(), before)
			b.ReportMetric(float64(payloadBytes), "payload-B")
		})
	}
}

// BenchmarkLoad100kGroups measures a restart: open a store holding 100,000
// receiver groups (meta, a received run and a deadline each), list them with
// Generations and Get each group's meta record.
func BenchmarkLoad100kGroups(b *testing.B) {
	const groups = 100_000
	dir := b.TempDir()
	s, err := pebblestore.Open(pebblestore.Options{Dir: dir, Logger: quiet{}})
	if err != nil {
		b.Fatal(err)
	}
	meta := make([]byte, metaBytes)
	for start := 0; start < groups; start += 1000 {
		var batch []group.Mutation
		for g := start; g < start+1000; g++ {
			gid := fmt.Sprintf("urn:uuid:%08d", g)
			k := group.Key{Role: group.RoleReceiver, GroupID: gid, Generation: 1, Kind: group.KindMeta}
			batch = append(batch, group.Mutation{Op: group.OpPut, Key: k, Value: meta})
			k.Kind = group.KindReceived
			batch = append(batch, group.Mutation{Op: group.OpPut, Key: k, Value: meta[:runBytes]})
			batch = append(batch, group.Mutation{Op: group.OpSetDeadline, Key: k, At: time.Unix(1_800_000_000+int64(g), 0)})
		}
		if err := s.Apply(batch); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		s, err := pebblestore.Open(pebblestore.Options{Dir: dir, Logger: quiet{}})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for id, err := range s.Generations(group.RoleReceiver) {
			if err != nil {
				b.Fatal(err)
			}
			v, ok, err := s.Get(group.Key{Role: group.RoleReceiver, GroupID: id.GroupID, Generation: id.Generation, Kind: group.KindMeta})
			if err != nil || !ok || len(v) != metaBytes {
				b.Fatalf("meta of %v: %d bytes, %v, %v", id, len(v), ok, err)
			}
			n++
		}
		if n != groups {
			b.Fatalf("loaded %d groups; want %d", n, groups)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/groups*1000, "ns/group")
}
