package gateway

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Groups are spread over a fixed number of shards (-shards); a shard is
// the unit of etcd ownership, and each held shard runs its own rmp.Node.

// MaxShards bounds -shards.
const MaxShards = 1024

// ShardOf returns the shard of a group id among n shards: the shard a
// sending group of this deployment (cluster id) names in its id, else a
// stable hash (FNV-1a) of the id. Every instance computes the same answer.
func ShardOf(groupID, cluster string, n int) int {
	if s, ok := ownShard(groupID, cluster, n); ok {
		return s
	}
	return hashShard(groupID, n)
}

// ownShard reads the shard out of a group id made by shardInstance's
// sender: mid:<counter>.<cluster>.s<shard>@wsrkit (R05).
func ownShard(groupID, cluster string, n int) (int, bool) {
	rest, ok := strings.CutPrefix(groupID, "mid:")
	if !ok || cluster == "" {
		return 0, false
	}
	_, rest, ok = strings.Cut(rest, ".")
	if !ok {
		return 0, false
	}
	rest, ok = strings.CutSuffix(rest, "@wsrkit")
	if !ok {
		return 0, false
	}
	num, ok := strings.CutPrefix(rest, cluster+".s")
	if !ok {
		return 0, false
	}
	s, err := strconv.Atoi(num)
	if err != nil || s < 0 || s >= n || strconv.Itoa(s) != num {
		return 0, false
	}
	return s, true
}

func hashShard(s string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(s))
	return int(h.Sum32() % uint32(n))
}

// keyShard is the shard whose sending RMP serves a submit's group key: one
// per key, so every message of the key's group goes through one sender.
func keyShard(key string, n int) int { return hashShard("key:"+key, n) }

// shardInstance is the sending RMP's InstanceID of a shard: its group ids
// name the shard (ownShard), and they stay unique across shards and, with
// the counter kept in the shard's store, across takeovers (R05).
func shardInstance(cluster string, shard int) string {
	return cluster + ".s" + strconv.Itoa(shard)
}

// shardPrefix is the etcd namespace of a shard's group state.
func shardPrefix(prefix string, shard int) string {
	return fmt.Sprintf("%sshard/%d/", prefix, shard)
}
