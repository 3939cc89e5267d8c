package sender

import "time"

// timerKind orders timers that fall due at the same instant: a message's
// expiry is handled before its group's t1 (R16 puts it no later), and polls
// go out after resends.
type timerKind uint8

const (
	timerMessage timerKind = iota
	timerPoll
	timerGroup
)

// timer is an entry of the timer heap, embedded in the message, group or
// destination it belongs to.
type timer struct {
	at time.Time
	// idx is the position in the heap; -1 when not scheduled.
	idx  int32
	kind timerKind
	m    *message
	g    *groupState
	d    *destState
}

func (t *timer) scheduled() bool { return t.idx >= 0 }

// less orders timers of the same instant by kind, group id, number or
// destination: with the instant, a total order, so Tick's processing order
// never depends on insertion order.
func (t *timer) less(o *timer) bool {
	if t.kind != o.kind {
		return t.kind < o.kind
	}
	switch t.kind {
	case timerMessage:
		if t.m.g.id != o.m.g.id {
			return t.m.g.id < o.m.g.id
		}
		return t.m.number < o.m.number
	case timerGroup:
		return t.g.id < o.g.id
	default:
		return t.d.name < o.d.name
	}
}

// timerHeap is an indexed binary min-heap: Tick costs O(due · log n), never
// O(pending), and a timer can be moved or removed in O(log n). Entries keep
// their instant inline so that sifting compares without chasing pointers.
type timerHeap struct {
	items []heapEntry // items[i].t.idx == i; heap-ordered by less
}

type heapEntry struct {
	at time.Time
	t  *timer
}

func (h *timerHeap) less(i, j int) bool {
	a, b := &h.items[i], &h.items[j]
	if c := a.at.Compare(b.at); c != 0 {
		return c < 0
	}
	return a.t.less(b.t)
}

func (h *timerHeap) peek() (*timer, bool) {
	if len(h.items) == 0 {
		return nil, false
	}
	return h.items[0].t, true
}

// set schedules t at at, or moves it there.
func (h *timerHeap) set(t *timer, at time.Time) {
	t.at = at
	if t.scheduled() {
		h.items[t.idx].at = at
		if !h.up(int(t.idx)) {
			h.down(int(t.idx))
		}
		return
	}
	t.idx = int32(len(h.items))
	h.items = append(h.items, heapEntry{at: at, t: t})
	h.up(int(t.idx))
}

// remove unschedules t; a no-op when it is not scheduled.
func (h *timerHeap) remove(t *timer) {
	if !t.scheduled() {
		return
	}
	i, last := int(t.idx), len(h.items)-1
	if i != last {
		h.swap(i, last)
	}
	h.items[last] = heapEntry{}
	h.items = h.items[:last]
	t.idx = -1
	if i != last {
		if !h.up(i) {
			h.down(i)
		}
	}
}

func (h *timerHeap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].t.idx = int32(i)
	h.items[j].t.idx = int32(j)
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
