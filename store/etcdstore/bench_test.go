package etcdstore_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/etcdstore"
	"github.com/wsrkit/wsrkit/store/pebblestore"
)

// BenchmarkApply measures one receiver-like batch (meta, received and
// delivery records, a deadline) per Apply on the 3-member embedded cluster,
// against pebblestore on disk in the same run as the single-node baseline.
func BenchmarkApply(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"etcd3", func(b *testing.B) store.Store { return open(b, etcdstore.Options{Prefix: newPrefix(b)}) }},
		{"pebble", func(b *testing.B) store.Store {
			s, err := pebblestore.Open(pebblestore.Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	}
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	batch := func(g int, i int) []group.Mutation {
		gid := fmt.Sprintf("g%04d", g)
		k := func(kind group.Kind, n uint64) group.Key {
			return group.Key{Role: group.RoleReceiver, GroupID: gid, Generation: 1, Kind: kind, Number: n}
		}
		v := make([]byte, 256)
		return []group.Mutation{
			{Op: group.OpPut, Key: k(group.KindMeta, 0), Value: v[:64]},
			{Op: group.OpPut, Key: k(group.KindReceived, uint64(i)), Value: v[:16]},
			{Op: group.OpPut, Key: k(group.KindDelivery, uint64(i)), Value: v},
			{Op: group.OpSetDeadline, Key: k(0, 0), At: base.Add(time.Duration(i) * time.Second)},
		}
	}
	for _, st := range stores {
		b.Run(st.name+"/serial", func(b *testing.B) {
			s := st.open(b)
			defer s.Close()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := s.Apply(batch(0, i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(st.name+"/parallel", func(b *testing.B) {
			s := st.open(b)
			defer s.Close()
			b.ReportAllocs()
			b.SetParallelism(8)
			var groups atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				g, i := int(groups.Add(1)), 0
				for pb.Next() {
					if err := s.Apply(batch(g, i)); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
		})
	}
}
