package sender

import "time"

// timer is a message's, group's or destination's place in the timer heap;
// the heap entry holds the instant and the owner, so an idle group's timer
// is four bytes (memory per idle open group, BENCHMARKS.md).
type timer struct {
	// pos is the position in the heap plus one; 0 when not scheduled.
	pos int32
}

func (t *timer) scheduled() bool { return t.pos > 0 }

// tmOf returns the timer of o, a *message, *groupState or *destState.
func tmOf(o any) *timer {
	switch o := o.(type) {
	case *message:
		return &o.tm
	case *groupState:
		return &o.tm
	default:
		return &o.(*destState).tm
	}
}

// lessOwner orders the owners of timers of the same instant: messages,
// then destinations (polls), then groups — a message's expiry is handled
// before its group's t1 (R16 puts it no later) and polls go out after
// resends — and within a kind by group id, number or destination. With the
// instant it is a total order, so Tick's processing order never depends on
// insertion order.
func lessOwner(inst string, a, b any) bool {
	switch a := a.(type) {
	case *message:
		b, ok := b.(*message)
		if !ok {
			return true
		}
		if c := compareIDs(inst, a.g, b.g); c != 0 {
			return c < 0
		}
		return a.number < b.number
	case *groupState:
		b, ok := b.(*groupState)
		return ok && compareIDs(inst, a, b) < 0
	default:
		switch b := b.(type) {
		case *message:
			return false
		case *groupState:
			return true
		default:
			return a.(*destState).name < b.(*destState).name
		}
	}
}

// timerHeap is an indexed binary min-heap: Tick costs O(due · log n), never
// O(pending), and a timer can be moved or removed in O(log n). Entries keep
// their instant inline so that sifting compares without chasing pointers.
type timerHeap struct {
	items []heapEntry // tmOf(items[i].o).pos == i+1; heap-ordered by less
	// inst is the instance id, for the order of group ids (ids.go).
	inst string
}

type heapEntry struct {
	at time.Time
	o  any
}

func (h *timerHeap) less(i, j int) bool {
	a, b := &h.items[i], &h.items[j]
	if c := a.at.Compare(b.at); c != 0 {
		return c < 0
	}
	return lessOwner(h.inst, a.o, b.o)
}

// peek returns the earliest timer's instant and owner.
func (h *timerHeap) peek() (time.Time, any, bool) {
	if len(h.items) == 0 {
		return time.Time{}, nil, false
	}
	return h.items[0].at, h.items[0].o, true
}

// at returns the instant t is scheduled at; t must be scheduled.
func (h *timerHeap) at(t *timer) time.Time { return h.items[t.pos-1].at }

// set schedules o's timer t at at, or moves it there.
func (h *timerHeap) set(t *timer, o any, at time.Time) {
	if t.scheduled() {
		i := int(t.pos - 1)
		h.items[i].at = at
		if !h.up(i) {
			h.down(i)
		}
		return
	}
	t.pos = int32(len(h.items)) + 1
	h.items = append(h.items, heapEntry{at: at, o: o})
	h.up(int(t.pos - 1))
}

// remove unschedules t; a no-op when it is not scheduled.
func (h *timerHeap) remove(t *timer) {
	if !t.scheduled() {
		return
	}
	i, last := int(t.pos-1), len(h.items)-1
	if i != last {
		h.swap(i, last)
	}
	h.items[last] = heapEntry{}
	h.items = h.items[:last]
	t.pos = 0
	if i != last {
		if !h.up(i) {
			h.down(i)
		}
	}
}

func (h *timerHeap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	tmOf(h.items[i].o).pos = int32(i) + 1
	tmOf(h.items[j].o).pos = int32(j) + 1
}

func (h *timerHeap) up(i int) bool {
	moved := false
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.swap(i, p)
		i = p
		moved = true
	}
	return moved
}

func (h *timerHeap) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h.swap(i, m)
		i = m
	}
}
