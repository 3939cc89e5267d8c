package gateway

import (
	"cmp"
	"container/heap"
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

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

// sortKey is the row's primary key under q.sort (ascending): the most held
// first, the latest activity first, the nearest deadline first (none
// last); 0 under groupId.
func (q *groupQuery) sortKey(v *admin.GroupView) int64 {
	switch q.sort {
	case "held":
		return -int64(v.Held)
	case "lastActivity":
		if v.LastActivity.IsZero() {
			return 0
		}
		return -v.LastActivity.UnixNano()
	case "nextDeadline":
		if v.NextDeadline.IsZero() {
			return 1<<63 - 1
		}
		return v.NextDeadline.UnixNano()
	}
	return 0
}

func compareCursors(a, b *groupCursor) int {
	if c := cmp.Compare(a.key, b.key); c != 0 {
		return c
	}
	if c := strings.Compare(a.id, b.id); c != 0 {
		return c
	}
	if c := strings.Compare(a.role, b.role); c != 0 {
		return c
	}
	return cmp.Compare(a.gen, b.gen)
}

// matches applies the filters.
func (q *groupQuery) matches(v *admin.GroupView) bool {
	switch {
	case q.state == "open" && v.Terminated, q.state == "terminated" && !v.Terminated:
		return false
	case q.gap && !hasGap(v):
		return false
	case q.q != "" && !strings.Contains(v.GroupID, q.q):
		return false
	}
	return true
}

// hasGap reports whether a number below the highest received (sender:
// acknowledged) one is missing: what an ordered group waits for (R48).
func hasGap(v *admin.GroupView) bool {
	return len(v.Ranges) > 1 || (len(v.Ranges) == 1 && v.Ranges[0].From > 0)
}

// selection keeps, of the groups offered in any order, the first
// limit+1 that match and follow the cursor (a max-heap on the cursor:
// the last kept row on top), and counts every match. A page over 100,000
// groups so costs one pass and no copy of a group it does not keep.
type selection struct {
	q     *groupQuery
	total int
	rows  []groupRow // a max-heap by cur while limit > 0
}

func (s *selection) Len() int           { return len(s.rows) }
func (s *selection) Less(i, j int) bool { return compareCursors(&s.rows[i].cur, &s.rows[j].cur) > 0 }
func (s *selection) Swap(i, j int)      { s.rows[i], s.rows[j] = s.rows[j], s.rows[i] }
func (s *selection) Push(x any)         { s.rows = append(s.rows, x.(groupRow)) }
func (s *selection) Pop() any {
	r := s.rows[len(s.rows)-1]
	s.rows = s.rows[:len(s.rows)-1]
	return r
}

// idOnly reports whether the id alone decides a group's fate: no filter
// but q, sorted by id.
func (q *groupQuery) idOnly() bool { return q.state == "" && !q.gap && q.sort == "groupId" }

// keep decides by a group's id what the id can decide, so that a page of
// the default listing reads only the groups it may show: false rules the
// group out, true hands it to offer. Under idOnly it counts the match.
func (s *selection) keep(id string, role group.Role, gen uint64) bool {
	q := s.q
	if q.q != "" && !strings.Contains(id, q.q) {
		return false
	}
	if !q.idOnly() {
		return true
	}
	s.total++
	cur := groupCursor{id: id, role: roleName(role), gen: gen}
	return s.follows(&cur)
}

// follows reports whether a row at cur comes after the cursor and before
// the last row kept when the heap is full.
func (s *selection) follows(cur *groupCursor) bool {
	q := s.q
	if q.after != nil && compareCursors(cur, q.after) <= 0 {
		return false
	}
	return q.limit == 0 || len(s.rows) < q.limit+1 || compareCursors(cur, &s.rows[0].cur) < 0
}

// offer considers one group that keep let through; v is valid only during
// the call.
func (s *selection) offer(v *admin.GroupView) {
	q := s.q
	cur := groupCursor{key: q.sortKey(v), id: v.GroupID, role: roleName(v.Role), gen: v.Generation}
	if !q.idOnly() {
		if !q.matches(v) {
			return
		}
		s.total++
		if !s.follows(&cur) {
			return
		}
	}
	row := groupRow{cur: cur, v: *v}
	row.v.Ranges = slices.Clone(v.Ranges)
	if q.limit == 0 {
		s.rows = append(s.rows, row)
		return
	}
	heap.Push(s, row)
	if len(s.rows) > q.limit+1 { // one more tells whether a next page exists
		heap.Pop(s)
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
