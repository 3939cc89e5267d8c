package sender

import (
	"cmp"
	"strconv"
	"strings"
)

// A group's id is mid:<seq>.<instance>@wsrkit (R04, R05, A15). Memory per
// idle open group is a goal (BENCHMARKS.md): a group stores only seq, its
// id string is made on demand and cached; s.groups is keyed by seq. A
// group recovered under another instance id keeps its stored id in x.id
// and is found through s.foreign.

// idCacheSize is the number of id strings a Sender keeps, slot seq % size:
// the groups of one input, however many, rarely share a slot.
const idCacheSize = 64

type idCache [idCacheSize]struct {
	g  *groupState
	id string
}

const (
	idPrefix = "mid:"
	idSuffix = "@wsrkit"
)

// groupID returns the id of group seq of instance inst.
func groupID(inst string, seq uint64) string {
	var buf [64]byte // one allocation, the string, for an instance id up to 32 bytes
	return string(appendGroupID(buf[:0], inst, seq))
}

// appendGroupID appends groupID(inst, seq) to b.
func appendGroupID(b []byte, inst string, seq uint64) []byte {
	b = strconv.AppendUint(append(b, idPrefix...), seq, 10)
	return append(append(append(b, '.'), inst...), idSuffix...)
}

// foreignID is g's stored id when it is not groupID(instance, seq).
func (g *groupState) foreignID() string { return g.extra().id }

// idOf returns g's id.
func (s *Sender) idOf(g *groupState) string {
	if id := g.foreignID(); id != "" {
		return id
	}
	e := &s.ids[g.seq%idCacheSize]
	if e.g != g {
		e.g, e.id = g, groupID(s.cfg.InstanceID, g.seq)
	}
	return e.id
}

// group returns the group in state whose id is id, or nil.
func (s *Sender) group(id string) *groupState {
	if len(s.foreign) > 0 {
		if g := s.foreign[id]; g != nil {
			return g
		}
	}
	seq, ok := parseID(id, s.cfg.InstanceID)
	if !ok {
		return nil
	}
	if g := s.groups[seq]; g != nil && g.foreignID() == "" {
		return g
	}
	return nil
}

// parseID returns the seq of id when id is groupID(inst, seq).
func parseID(id, inst string) (uint64, bool) {
	rest, ok := strings.CutPrefix(id, idPrefix)
	if !ok {
		return 0, false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	digits, tail := rest[:i], rest[i:]
	if i == 0 || (i > 1 && digits[0] == '0') || len(tail) != 1+len(inst)+len(idSuffix) ||
		tail[0] != '.' || tail[1:1+len(inst)] != inst || tail[1+len(inst):] != idSuffix {
		return 0, false
	}
	seq, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	return seq, true
}

// compareIDs orders groups as their id strings, without making them: ids
// of one instance differ first in "<seq>.", and '.' sorts before every
// digit (compareSeqText).
func compareIDs(inst string, a, b *groupState) int {
	if a == b {
		return 0
	}
	if a.foreignID() == "" && b.foreignID() == "" {
		return compareSeqText(a.seq, b.seq)
	}
	return strings.Compare(idString(inst, a), idString(inst, b))
}

// pow10[n] is 10^n.
var pow10 = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// decimalLen is the number of decimal digits of x.
func decimalLen(x uint64) int {
	n := 1
	for n < len(pow10) && x >= pow10[n] {
		n++
	}
	return n
}

// compareSeqText compares the decimal texts of a and b followed by '.':
// a shorter text that is a prefix of the longer sorts first.
func compareSeqText(a, b uint64) int {
	la, lb := decimalLen(a), decimalLen(b)
	switch {
	case la == lb:
		return cmp.Compare(a, b)
	case la < lb:
		if c := cmp.Compare(a, b/pow10[lb-la]); c != 0 {
			return c
		}
		return -1
	default:
		if c := cmp.Compare(a/pow10[la-lb], b); c != 0 {
			return c
		}
		return 1
	}
}

func idString(inst string, g *groupState) string {
	if id := g.foreignID(); id != "" {
		return id
	}
	return groupID(inst, g.seq)
}
