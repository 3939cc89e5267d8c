package gateway

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShardOf: a deployment's own sending group ids name their shard;
// other ids hash, stably (pinned values), into range.
func TestShardOf(t *testing.T) {
	require.Equal(t, 5, ShardOf("mid:17."+shardInstance("c0ffee", 5)+"@wsrkit", "c0ffee", 16))
	require.Equal(t, "c0ffee.s5", shardInstance("c0ffee", 5))
	// Another deployment's, a shard out of range, a non-canonical number:
	// hashed like any foreign id.
	for _, gid := range []string{"mid:17.other.s5@wsrkit", "mid:17.c0ffee.s16@wsrkit", "mid:17.c0ffee.s05@wsrkit", "urn:uuid:1", ""} {
		require.Equal(t, hashShard(gid, 16), ShardOf(gid, "c0ffee", 16), gid)
	}
	// Pinned: a change here moves every deployed group to another shard.
	require.Equal(t, []int{hashShard("urn:uuid:1", 16), hashShard("http://example.com/g", 16)}, []int{8, 2})
	require.Equal(t, 11, keyShard("orders", 16))
	seen := map[int]int{}
	for i := range 1600 {
		s := ShardOf(fmt.Sprintf("urn:g:%d", i), "c0ffee", 16)
		require.True(t, s >= 0 && s < 16)
		seen[s]++
	}
	for s := range 16 {
		require.InDelta(t, 100, seen[s], 40, "shard %d", s)
	}
}

// TestBalanceConverges runs the balance rule for instances joining,
// leaving and dying (their claims vanish with the lease) until nothing
// changes: every shard is held by exactly one instance, counts within one.
func TestBalanceConverges(t *testing.T) {
	for _, tc := range []struct {
		shards int
		steps  [][]string // live members after each change
	}{
		{16, [][]string{{"a"}, {"a", "b"}, {"a", "b", "c"}, {"a", "c"}, {"a", "b", "c"}}},
		{15, [][]string{{"a", "b", "c"}, {"b", "c"}, {"c"}, {"a", "b", "c", "d"}}},
		{2, [][]string{{"a", "b", "c"}, {"a"}}},
		{1, [][]string{{"a", "b"}, {"b"}}},
	} {
		holders := make([]string, tc.shards)
		for _, live := range tc.steps {
			alive := map[string]bool{}
			for _, m := range live {
				alive[m] = true
			}
			for i, h := range holders { // a dead instance's lease ends
				if !alive[h] {
					holders[i] = ""
				}
			}
			for round := 0; ; round++ {
				require.Less(t, round, 50, "no convergence for %v: %v", live, holders)
				changed := false
				for _, self := range live {
					var mine []int
					for i, h := range holders {
						if h == self {
							mine = append(mine, i)
						}
					}
					claim, release := balance(self, live, holders, mine)
					for _, i := range release {
						require.Equal(t, self, holders[i])
						holders[i] = ""
						changed = true
					}
					for _, i := range claim {
						require.Equal(t, "", holders[i], "claims only free shards")
						holders[i] = self
						changed = true
					}
				}
				if !changed {
					break
				}
			}
			counts := map[string]int{}
			for _, h := range holders {
				require.NotEqual(t, "", h, "every shard held: %v", holders)
				counts[h]++
			}
			lo, hi := tc.shards, 0
			for _, m := range live {
				lo, hi = min(lo, counts[m]), max(hi, counts[m])
			}
			require.LessOrEqual(t, hi-lo, 1, "counts %v for %v", counts, live)
		}
	}
}
