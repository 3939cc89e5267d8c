package receiver

import (
	"cmp"
	"github.com/wsrkit/wsrkit/rmp/group"
	"slices"
	"strings"

	"github.com/wsrkit/wsrkit/faults"
)

// replyItem is one status to report: a singleton (sequence false) or the
// numbers from..to of a group, with a fault code or 0 for an ack.
type replyItem struct {
	groupID  string
	sequence bool
	from, to uint64
	code     faults.Code
}

// replyBuilder collects items and builds a normalized Reply: entries sorted
// by group id (singletons first), ranges sorted, overlaps resolved in favour
// of faults, adjacent ranges with the same label merged (R69, R71).
type replyBuilder struct {
	items  []replyItem
	ranges []group.ReplyRange
	spans  []span
}

// span locates one SequenceReplies' ranges while building.
type span struct{ entry, start int }

func (b *replyBuilder) reset()   { b.items = b.items[:0] }
func (b *replyBuilder) len() int { return len(b.items) }

func (b *replyBuilder) add(it replyItem) { b.items = append(b.items, it) }

func cmpItem(x, y replyItem) int {
	if c := strings.Compare(x.groupID, y.groupID); c != 0 {
		return c
	}
	if x.sequence != y.sequence {
		if !x.sequence {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(x.from, y.from); c != 0 {
		return c
	}
	// Faults before acks, so an overlapping ack is trimmed, not the fault.
	return cmp.Compare(faultRank(y.code), faultRank(x.code))
}

func faultRank(c faults.Code) int {
	if c != 0 {
		return 1
	}
	return 0
}

// build appends the entries to dst, codes mapped through dialect (D6). The
// ranges of all entries share one backing array owned by b.
func (b *replyBuilder) build(dst []group.Reply, dialect faults.Dialect) []group.Reply {
	slices.SortFunc(b.items, cmpItem)
	b.ranges = b.ranges[:0]
	spans := b.spans[:0]
	for i := 0; i < len(b.items); {
		it := b.items[i]
		j := i
		if !it.sequence {
			// One NonSequenceReply per singleton; a fault wins over an ack.
			code := it.code
			for j < len(b.items) && b.items[j].groupID == it.groupID && !b.items[j].sequence {
				if code == 0 {
					code = b.items[j].code
				}
				j++
			}
			dst = append(dst, group.Reply{GroupID: it.groupID, Fault: dialect.Wire(code)})
			i = j
			continue
		}
		start := len(b.ranges)
		for j < len(b.items) && b.items[j].groupID == it.groupID && b.items[j].sequence {
			x := b.items[j]
			j++
			code := dialect.Wire(x.code)
			if k := len(b.ranges); k > start {
				last := &b.ranges[k-1]
				if x.to <= last.To {
					continue // covered by an earlier range
				}
				if x.from <= last.To {
					x.from = last.To + 1
				}
				if last.To+1 == x.from && last.Fault == code {
					last.To = x.to
					continue
				}
			}
			b.ranges = append(b.ranges, group.ReplyRange{From: x.from, To: x.to, Fault: code})
		}
		spans = append(spans, span{entry: len(dst), start: start})
		dst = append(dst, group.Reply{GroupID: it.groupID, Sequenced: true})
		i = j
	}
	// Slice ranges only now: b.ranges may have moved while growing.
	for k, s := range spans {
		end := len(b.ranges)
		if k+1 < len(spans) {
			end = spans[k+1].start
		}
		dst[s.entry].Ranges = b.ranges[s.start:end:end]
	}
	b.spans = spans
	return dst
}

// buildFresh builds into newly allocated memory (poll answers, callbacks).
func (b *replyBuilder) buildFresh(dialect faults.Dialect) Reply {
	entries := b.build(nil, dialect)
	ranges := slices.Clone(b.ranges)
	off := 0
	for i := range entries {
		if entries[i].Sequenced {
			n := len(entries[i].Ranges)
			entries[i].Ranges = ranges[off : off+n : off+n]
			off += n
		}
	}
	return Reply{Entries: entries}
}
