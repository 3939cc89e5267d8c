package sender

import (
	"sort"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// runSet is a set of numbers as ranges, for a group's acknowledged numbers.
// Unlike group.SeqSet it can take a whole stored run at once (Recover).
type runSet struct {
	// rs is sorted by From; disjoint and non-adjacent.
	rs []group.Range
}

// search returns the index of the first range with To >= n.
func (s *runSet) search(n uint64) int {
	return sort.Search(len(s.rs), func(i int) bool { return s.rs[i].To >= n })
}

func (s *runSet) contains(n uint64) bool {
	i := s.search(n)
	return i < len(s.rs) && s.rs[i].From <= n
}

// add inserts n; appending to the last range is O(1).
func (s *runSet) add(n uint64) { s.addRange(group.Range{From: n, To: n}) }

// addRange inserts r (From <= To), merging what it overlaps or touches.
func (s *runSet) addRange(r group.Range) {
	k := len(s.rs)
	if k > 0 && s.rs[k-1].To < r.From {
		if s.rs[k-1].To+1 == r.From {
			s.rs[k-1].To = r.To
		} else {
			s.rs = append(s.rs, r)
		}
		return
	}
	lo := r.From
	if lo > 0 {
		lo--
	}
	i := s.search(lo) // first range that may touch r
	j := i
	for j < len(s.rs) && (r.To == ^uint64(0) || s.rs[j].From <= r.To+1) {
		r.From = min(r.From, s.rs[j].From)
		r.To = max(r.To, s.rs[j].To)
		j++
	}
	if i == j {
		s.rs = append(s.rs, group.Range{})
		copy(s.rs[i+1:], s.rs[i:])
		s.rs[i] = r
		return
	}
	s.rs[i] = r
	s.rs = append(s.rs[:i+1], s.rs[j:]...)
}

func (s *runSet) empty() bool { return len(s.rs) == 0 }

func (s *runSet) clone() *runSet { return &runSet{rs: append([]group.Range(nil), s.rs...)} }
