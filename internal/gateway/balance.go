package gateway

import "sort"

// balance decides one step of spreading shards over the live instances:
// which free shards self claims and which of its shards it releases, so
// that every shard ends up held by one instance and the counts differ by at
// most one. holders[i] is the node holding shard i ("" when free); mine
// are the shards self holds. Pure and deterministic.
//
// self claims free shards up to the ceiling ⌈S/L⌉; it releases down to the
// ceiling when above it, and one shard per step while it holds more than
// ⌊S/L⌋ and another live instance holds fewer (it cannot claim any: none
// are free).
func balance(self string, members []string, holders []string, mine []int) (claim, release []int) {
	n := len(holders)
	live := map[string]bool{self: true}
	for _, m := range members {
		live[m] = true
	}
	floor := n / len(live)
	ceil := floor
	if n%len(live) != 0 {
		ceil++
	}
	counts := map[string]int{}
	var free []int
	for i, h := range holders {
		if h == "" {
			free = append(free, i)
			continue
		}
		counts[h]++
	}
	held := len(mine)
	if held < ceil && len(free) > 0 {
		// Start at a point of self's own, so that instances starting
		// together mostly try different shards.
		start := hashShard(self, n)
		sort.Slice(free, func(a, b int) bool {
			return (free[a]-start+n)%n < (free[b]-start+n)%n
		})
		claim = free[:min(len(free), ceil-held)]
		return claim, nil
	}
	starving := false
	for m := range live {
		if m != self && counts[m] < floor {
			starving = true
		}
	}
	drop := 0
	switch {
	case held > ceil:
		drop = held - ceil
	case held > floor && starving && len(free) == 0:
		drop = 1
	}
	if drop == 0 {
		return nil, nil
	}
	sorted := append([]int(nil), mine...)
	sort.Sort(sort.Reverse(sort.IntSlice(sorted)))
	return nil, sorted[:drop]
}
