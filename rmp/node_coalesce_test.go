package rmp

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/memstore"
	"github.com/wsrkit/wsrkit/store/pebblestore"
)

func TestCoalesceDropsOnlyWhatALaterMutationOverwrites(t *testing.T) {
	k := func(id string, kind group.Kind, n uint64) group.Key {
		return group.Key{Role: group.RoleSender, GroupID: id, Generation: 1, Kind: kind, Number: n}
	}
	at := time.Unix(100, 0).UTC()
	batch := []group.Mutation{
		{Op: group.OpPut, Key: k("a", group.KindMeta, 0), Value: []byte("a1")},           // 0: put again at 6
		{Op: group.OpPut, Key: k("a", group.KindOutbound, 1), Value: []byte("m1")},       // 1: deleted at 7
		{Op: group.OpSetDeadline, Key: k("a", group.KindMeta, 0), At: at},                // 2: set again at 8
		{Op: group.OpPut, Key: k("b", group.KindMeta, 0), Value: []byte("b1")},           // 3: kept
		{Op: group.OpDelete, Key: k("c", group.KindOutbound, 2)},                         // 4: put at 10
		{Op: group.OpPut, Key: k("a", group.KindOutbound, 2), Value: []byte("m2")},       // 5: kept
		{Op: group.OpPut, Key: k("a", group.KindMeta, 0), Value: []byte("a2")},           // 6: kept
		{Op: group.OpDelete, Key: k("a", group.KindOutbound, 1)},                         // 7: kept
		{Op: group.OpSetDeadline, Key: k("a", group.KindMeta, 0), At: at.Add(time.Hour)}, // 8: kept
		{Op: group.OpDeleteGeneration, Key: k("c", group.KindMeta, 0)},                   // 9: never dropped
		{Op: group.OpPut, Key: k("c", group.KindOutbound, 2), Value: []byte("c2")},       // 10: kept
		{Op: group.OpDeleteGeneration, Key: k("c", group.KindMeta, 0)},                   // 11: never dropped
	}
	want := []group.Mutation{batch[3], batch[5], batch[6], batch[7], batch[8], batch[9], batch[10], batch[11]}
	var c coalescer
	got := c.coalesce(batch)
	require.Equal(t, want, got)
	require.Empty(t, c.seen, "the index is emptied for the next commit")
	// The tail is cleared: no payload stays reachable from the array.
	for _, m := range batch[len(got):] {
		require.Zero(t, m)
	}
	// Nothing to drop: the batch comes back as it was.
	one := []group.Mutation{{Op: group.OpPut, Key: k("a", group.KindMeta, 0), Value: []byte("x")}, {Op: group.OpPut, Key: k("b", group.KindMeta, 0), Value: []byte("y")}}
	require.Equal(t, 2, len(c.coalesce(one)))
}

// The store ends in the same state after the coalesced batch as after the
// whole one, for random batches of every op over few keys (so that keys
// repeat), on both stores that order keys themselves.
func TestCoalesceKeepsTheStoreState(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 1))
	roles := []group.Role{group.RoleSender, group.RoleReceiver}
	randomKey := func() group.Key {
		return group.Key{
			Role:       roles[rng.IntN(len(roles))],
			GroupID:    fmt.Sprintf("g%d", rng.IntN(3)),
			Generation: uint64(1 + rng.IntN(2)),
			Kind:       []group.Kind{group.KindMeta, group.KindOutbound, group.KindReceived}[rng.IntN(3)],
			Number:     uint64(rng.IntN(3)),
		}
	}
	base := time.Unix(1_000_000, 0).UTC()
	randomBatch := func(n int) []group.Mutation {
		b := make([]group.Mutation, n)
		for i := range b {
			k := randomKey()
			switch r := rng.IntN(10); {
			case r < 5:
				b[i] = group.Mutation{Op: group.OpPut, Key: k, Value: fmt.Appendf(nil, "v%d", rng.IntN(1000))}
			case r < 7:
				b[i] = group.Mutation{Op: group.OpDelete, Key: k}
			case r < 9:
				k.Kind, k.Number = group.KindMeta, 0
				at := base.Add(time.Duration(rng.IntN(5)) * time.Second)
				if rng.IntN(4) == 0 {
					at = time.Time{} // clears it
				}
				b[i] = group.Mutation{Op: group.OpSetDeadline, Key: k, At: at}
			default:
				k.Kind, k.Number = group.KindMeta, 0
				b[i] = group.Mutation{Op: group.OpDeleteGeneration, Key: k}
			}
		}
		return b
	}
	stores := map[string]func(t *testing.T) store.Store{
		"memstore": func(*testing.T) store.Store { return memstore.New(memstore.Options{}) },
		"pebble": func(t *testing.T) store.Store {
			st, err := pebblestore.Open(pebblestore.Options{Dir: t.TempDir()})
			require.NoError(t, err)
			return st
		},
	}
	for _, name := range []string{"memstore", "pebble"} {
		t.Run(name, func(t *testing.T) {
			whole, coalesced := stores[name](t), stores[name](t)
			defer whole.Close()
			defer coalesced.Close()
			var c coalescer
			dropped := 0
			for range 200 {
				b := randomBatch(1 + rng.IntN(24))
				require.NoError(t, whole.Apply(b))
				cb := c.coalesce(append([]group.Mutation(nil), b...))
				dropped += len(b) - len(cb)
				require.NoError(t, coalesced.Apply(cb))
				require.Equal(t, dump(t, whole, roles), dump(t, coalesced, roles))
			}
			require.Greater(t, dropped, 50, "the batches repeat keys: something was dropped")
		})
	}
}

// dump is every record and deadline of st, as text.
func dump(t *testing.T, st store.Store, roles []group.Role) string {
	var sb strings.Builder
	for _, role := range roles {
		for r, err := range st.Scan(store.RolePrefix(role)) {
			require.NoError(t, err)
			fmt.Fprintf(&sb, "%v %q\n", r.Key, r.Value)
		}
	}
	for d, err := range st.DueBefore(store.MaxInstant()) {
		require.NoError(t, err)
		fmt.Fprintf(&sb, "deadline %v %v %v\n", d.At, d.Role, d.ID)
	}
	return sb.String()
}

// capture is an applier keeping each batch's values.
type capture struct{ batches [][]string }

func (c *capture) Apply(batch []group.Mutation) error {
	var vs []string
	for _, m := range batch {
		vs = append(vs, m.Key.GroupID+"="+string(m.Value))
	}
	c.batches = append(c.batches, vs)
	return nil
}

// A record two loop batches of one commit both write is written once, with
// the later value, and each loop batch's effects are still released.
func TestCommitterWritesARecordOncePerCommit(t *testing.T) {
	log := &committerLog{}
	c := testCommitter(log, new(atomic.Int64))
	st := &capture{}
	c.st = st
	meta := group.Key{Role: group.RoleSender, GroupID: "g", Generation: 1, Kind: group.KindMeta}
	put := func(k group.Key, v string) commitJob {
		var j commitJob
		j.rd.Persist = []group.Mutation{{Op: group.OpPut, Key: k, Value: []byte(v)}}
		j.bytes = len(v)
		j.rd.Answers = []Answer{{Token: 1}}
		return j
	}
	other := meta
	other.GroupID = "h"
	c.jobs <- put(meta, "1")
	c.jobs <- put(other, "1")
	c.jobs <- put(meta, "2")
	close(c.jobs)
	c.run()
	require.Equal(t, [][]string{{"h=1", "g=2"}}, st.batches)
	require.Equal(t, []string{"release g", "release h", "release g"}, log.snapshot())
	require.Len(t, c.spares, 3)
}
