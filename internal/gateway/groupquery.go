package gateway

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wsrkit/wsrkit/rmp/admin"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// Paging of GET /v1/groups (#21): a console lists 100,000 groups a page at
// a time. Without limit, after, state, gap, q and sort the answer is the
// whole list, as before.
const (
	defaultGroupPage = 100
	maxGroupPage     = 1000
)

// groupQuery is GET /v1/groups's query.
type groupQuery struct {
	roles admin.Roles
	state string // "", "open", "terminated"
	gap   bool   // only groups whose ranges miss a number (a gap)
	q     string // a substring of the group id
	sort  string // "groupId" (default), "held", "lastActivity", "nextDeadline"
	limit int    // 0: all
	after *groupCursor
}

// groupCursor is the position of the last group of a page: its sort key,
// then the group id, role and generation, which make every row unique.
type groupCursor struct {
	key  int64
	id   string
	role string
	gen  uint64
}

func (c groupCursor) String() string {
	s := strconv.FormatInt(c.key, 10) + " " + c.role + " " + strconv.FormatUint(c.gen, 10) + " " + c.id
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

func parseCursor(s string) (*groupCursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("after: not a cursor of this API (the next of a previous page)")
	}
	parts := strings.SplitN(string(b), " ", 4)
	if len(parts) != 4 {
		return nil, fmt.Errorf("after: not a cursor of this API (the next of a previous page)")
	}
	key, err1 := strconv.ParseInt(parts[0], 10, 64)
	gen, err2 := strconv.ParseUint(parts[2], 10, 64)
	if err1 != nil || err2 != nil || (parts[1] != "sender" && parts[1] != "receiver") {
		return nil, fmt.Errorf("after: not a cursor of this API (the next of a previous page)")
	}
	return &groupCursor{key: key, role: parts[1], gen: gen, id: parts[3]}, nil
}

// parseGroupQuery reads the query; the error names the parameter.
func parseGroupQuery(v url.Values) (groupQuery, error) {
	var q groupQuery
	var ok bool
	if q.roles, ok = parseRoles(v.Get("role")); !ok {
		return q, fmt.Errorf("role must be sender or receiver")
	}
	switch q.state = v.Get("state"); q.state {
	case "", "open", "terminated":
	default:
		return q, fmt.Errorf("state must be open or terminated")
	}
	switch v.Get("gap") {
	case "", "false", "0":
	case "true", "1":
		q.gap = true
	default:
		return q, fmt.Errorf("gap must be true or false")
	}
	q.q = v.Get("q")
	switch q.sort = v.Get("sort"); q.sort {
	case "":
		q.sort = "groupId"
	case "groupId", "held", "lastActivity", "nextDeadline":
	default:
		return q, fmt.Errorf("sort must be groupId, held, lastActivity or nextDeadline")
	}
	paged := v.Has("limit") || v.Has("after")
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxGroupPage {
			return q, fmt.Errorf("limit must be 1 to %d", maxGroupPage)
		}
		q.limit = n
	} else if paged {
		q.limit = defaultGroupPage
	}
	if s := v.Get("after"); s != "" {
		c, err := parseCursor(s)
		if err != nil {
			return q, err
		}
		q.after = c
	}
	return q, nil
}

// groupRow is one listed group with its position in the order.
type groupRow struct {
	cur groupCursor
	v   admin.GroupView // Ranges owned
}

// summaryKey is a group's primary key under q.sort (ascending): the most
// held first, the latest activity first, the nearest deadline first (none
// last); 0 under groupId.
func summaryKey[T listed](q *groupQuery, ref T, s *group.Summary) int64 {
	switch q.sort {
	case "held":
		return -int64(s.Held)
	case "lastActivity":
		at := ref.LastActivity() // read from the group (group.Summary)
		if at.IsZero() {
			return 0
		}
		return -at.UnixNano()
	case "nextDeadline": // read from the group (group.Summary)
		at, ok := ref.NextDeadline()
		if !ok {
			return 1<<63 - 1
		}
		return at.UnixNano()
	}
	return 0
}

func compareCursors(a, b *groupCursor) int {
	return cmp.Or(cmp.Compare(a.key, b.key), strings.Compare(a.id, b.id),
		strings.Compare(a.role, b.role), cmp.Compare(a.gen, b.gen))
}

// filtered reports whether a filter other than role applies.
func (q *groupQuery) filtered() bool { return q.state != "" || q.gap || q.q != "" }

// listed is a group of a receiver or sender Listing.
type listed interface {
	GroupID() string
	Generation() uint64
	AppendGroupID(b []byte) []byte
	Compare(groupID string, generation uint64) int
	NextDeadline() (time.Time, bool)
	LastActivity() time.Time
}

// selection gathers a page from the Listings of every side (and shard):
// of each, the first limit+1 matching rows after the cursor in the page's
// order, which page merges; it counts every match. Only the rows it keeps
// are read in full: an id-ordered page without filters costs O(log n +
// limit), one with filters or another order one pass over the summaries.
type selection struct {
	q     *groupQuery
	total int
	rows  []groupRow
	// idBuf and qBytes spare q= an allocation per group.
	idBuf, qBytes []byte
}

// candidate is a matching row of one Listing: its key and its position
// there, which orders rows of equal key (the Listing is in id order).
type candidate[T listed] struct {
	key int64
	pos int
	ref T
}

// collect adds the rows of one side's Listing.
func collect[E any, T listed](s *selection, l *group.Listing[E, T], role group.Role, view func(T) admin.GroupView) {
	q := s.q
	if l == nil || l.Len() == 0 {
		return
	}
	name := roleName(role)
	// A row of the cursor's key follows the cursor when at or past from.
	from, key := 0, int64(-1<<63)
	if c := q.after; c != nil {
		gen := c.gen
		switch {
		case name > c.role: // every row of the cursor's id follows it
			gen = 0
		case name < c.role: // none does
			gen = 1<<64 - 1
		}
		from = l.Rank(func(e T) int { return e.Compare(c.id, gen) })
		key = c.key
	}
	keep := q.limit + 1
	if q.limit == 0 {
		keep = l.Len()
	}
	var kept []candidate[T]
	if q.sort == "groupId" { // every key is 0: the Listing's order is the page's
		start := from
		switch {
		case key < 0:
			start = 0
		case key > 0:
			start = l.Len()
		}
		if !q.filtered() {
			s.total += l.Len()
			for pos, e := range l.All(start) {
				if len(kept) == keep {
					break
				}
				kept = append(kept, candidate[T]{pos: pos, ref: e.Ref})
			}
		} else {
			for pos, e := range l.All(0) {
				if !s.matches(e.Ref, e.Sum) {
					continue
				}
				s.total++
				if pos >= start && len(kept) < keep {
					kept = append(kept, candidate[T]{pos: pos, ref: e.Ref})
				}
			}
		}
	} else {
		h := boundedHeap[T]{max: keep}
		for pos, e := range l.All(0) {
			if !s.matches(e.Ref, e.Sum) {
				continue
			}
			s.total++
			if k := summaryKey(q, e.Ref, e.Sum); k > key || (k == key && pos >= from) {
				h.offer(candidate[T]{key: k, pos: pos, ref: e.Ref})
			}
		}
		kept = h.sorted()
	}
	for _, c := range kept {
		s.rows = append(s.rows, groupRow{
			cur: groupCursor{key: c.key, id: c.ref.GroupID(), role: name, gen: c.ref.Generation()},
			v:   view(c.ref),
		})
	}
}

// matches applies the filters to a row of a Listing.
func (s *selection) matches(ref listed, sum *group.Summary) bool {
	q := s.q
	switch {
	case q.state == "open" && sum.Terminated, q.state == "terminated" && !sum.Terminated:
		return false
	case q.gap && !sum.Gap:
		return false
	case q.q != "":
		if s.qBytes == nil {
			s.qBytes = []byte(q.q)
		}
		s.idBuf = ref.AppendGroupID(s.idBuf[:0])
		return bytes.Contains(s.idBuf, s.qBytes)
	}
	return true
}

// selectGroups adds the rows of one engine's sides that q asks for.
func (s *selection) selectGroups(a admin.Engine) {
	if s.q.roles&admin.Receiving != 0 {
		collect(s, a.ReceivingListing(), group.RoleReceiver, admin.ReceivingListedView)
	}
	if s.q.roles&admin.Sending != 0 {
		collect(s, a.SendingListing(), group.RoleSender, admin.SendingListedView)
	}
}

// page sorts the kept rows; next is the cursor of the page's last row
// when more follow.
func (s *selection) page() (page []groupRow, next string) {
	rows := s.rows
	slices.SortFunc(rows, func(a, b groupRow) int { return compareCursors(&a.cur, &b.cur) })
	if s.q.limit == 0 || len(rows) <= s.q.limit {
		return rows, ""
	}
	return rows[:s.q.limit], rows[s.q.limit-1].cur.String()
}

// boundedHeap keeps the max smallest candidates offered, by key then
// position: a max-heap with the greatest kept on top.
type boundedHeap[T listed] struct {
	max int
	c   []candidate[T]
}

func (h *boundedHeap[T]) less(i, j int) bool {
	a, b := &h.c[i], &h.c[j]
	return a.key > b.key || (a.key == b.key && a.pos > b.pos)
}

func (h *boundedHeap[T]) offer(c candidate[T]) {
	if len(h.c) < h.max {
		h.c = append(h.c, c)
		for i := len(h.c) - 1; i > 0; { // sift up
			p := (i - 1) / 2
			if !h.less(i, p) {
				break
			}
			h.c[i], h.c[p] = h.c[p], h.c[i]
			i = p
		}
		return
	}
	if top := &h.c[0]; c.key > top.key || (c.key == top.key && c.pos > top.pos) {
		return
	}
	h.c[0] = c
	for i := 0; ; { // sift down
		l, m := 2*i+1, i
		if l < len(h.c) && h.less(l, m) {
			m = l
		}
		if r := l + 1; r < len(h.c) && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h.c[i], h.c[m] = h.c[m], h.c[i]
		i = m
	}
}

// sorted returns the kept candidates in ascending order.
func (h *boundedHeap[T]) sorted() []candidate[T] {
	slices.SortFunc(h.c, func(a, b candidate[T]) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	return h.c
}
