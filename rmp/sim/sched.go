package sim

import (
	"container/heap"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/outbound"
)

// evKind says what an event does when it fires.
type evKind uint8

const (
	evSubmit evKind = iota + 1 // the producer submits plan message
	evArrive                   // a POST reaches node
	evAnswer                   // an HTTP response (or its failure) reaches node
	evTick                     // node's timer fires
	evCrash                    // node crashes and recovers
	evJump                     // the clock jumps forward by jump
	evHeal                     // the chaos phase ends: no more faults
	evAbort                    // an operator aborts a group (abort.go)
)

// event is one scheduled happening. Fields beyond at/seq/kind/node are used
// by the kinds that need them.
type event struct {
	at   time.Time
	seq  uint64 // insertion order: ties on at fire first-in first-out
	kind evKind
	node int

	plan int // evSubmit: index into the workload's messages

	// evArrive: the POST, who sent it and in which epoch; orphan copies
	// (network duplicates) have no requester waiting.
	from      int
	fromEpoch uint64
	out       rmp.Outbound
	orphan    bool

	// evAnswer: the response for ref in epoch, or err.
	epoch uint64
	ref   rmp.OutboundRef
	res   outbound.PostResult
	err   error

	jump  time.Duration // evJump
	abort abortPlan     // evAbort
}

// queue is a min-heap of events on (at, seq).
type queue []*event

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *queue) Pop() any {
	old := *q
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	*q = old[:n-1]
	return e
}

// scheduler is the seeded event queue.
type scheduler struct {
	q   queue
	seq uint64
}

func (s *scheduler) push(e *event) {
	s.seq++
	e.seq = s.seq
	heap.Push(&s.q, e)
}

func (s *scheduler) pop() *event {
	if len(s.q) == 0 {
		return nil
	}
	return heap.Pop(&s.q).(*event)
}
