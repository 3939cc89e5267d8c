package sender

import (
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// groupState is one sending group (a singleton is a group of one, R06).
// Sender group ids are never reused (R05), so the generation is always 1.
// Its size is a goal (memory per idle open group, BENCHMARKS.md): fields
// few groups set live in x (extra.go); keep this order, which leaves no
// padding.
type groupState struct {
	// seq numbers the group; its id is mid:<seq>.<instance>@wsrkit, made
	// on demand (ids.go).
	seq uint64
	// key is the producer's group key ("" for a singleton).
	key string
	to  string
	// life holds timing, LastActivity (last send, retries included, R35),
	// MaxExpiry, Last and termination (D20–D23).
	life group.Lifecycle
	// next is the next number to assign (D2); meaningless once closed.
	next uint64
	// pending holds the unacknowledged AckRequested messages by number;
	// nil when there are none (extra.go).
	pending map[uint64]*message
	// acked holds the acknowledged numbers not failed since (D12, D13).
	acked runSet
	// ackedMaxExpiry is the largest ExpiryTime among acked messages.
	ackedMaxExpiry time.Time
	// x holds what few groups need; nil until one of its fields is set.
	x *gextra
	// indexedNs is the instant last indexed with OpSetDeadline, as Unix
	// nanoseconds (indexed instants fit, batch.go); valid when indexed.
	indexedNs int64
	tm        timer
	// snap numbers this input's snapshot of acked (batch.ackedBefore);
	// 0 when acked did not change.
	snap    int32
	flags   group.Flags
	pattern group.ReplyPattern
	// singleton: a group of one message (R06).
	singleton bool
	// bigPending: pending held more than 8 entries since it was made, so
	// it is not reused once empty (group.MapPool).
	bigPending bool
	// bits holds the group's other yes/no state, one bit each (gClosed…),
	// which keeps groupState in the 320-byte size class (TestGroupStateSize).
	bits gbits
	// dirty (per-input bookkeeping): the group's meta record is written.
	dirty bool
}

// gbits are groupState's one-bit fields.
type gbits = group.Bits

const (
	// gClosed: last="true" was submitted (R12, R34); no new message.
	gClosed gbits = 1 << iota
	// gAborted: stopped by D16, a GroupAborted fault (R28) or an operator.
	gAborted
	// gIndexed: an OpSetDeadline with a non-zero instant is in effect.
	gIndexed
	// gLateChecked: a poll sent at or after the late-fault window's end
	// was answered; acked numbers need no more asking (poll.go, stored).
	gLateChecked
	// gCBSuspect: a Callback-pattern message had to be resent, so the
	// callback channel lost or delayed an answer; its acked numbers are
	// polled for late faults (poll.go, stored).
	gCBSuspect
	// Per-input bookkeeping: gTouched, the group is in the batch's
	// touched list; gRemoved, its state goes with this input.
	gTouched
	gRemoved
)

// has reports whether every bit of b is set.
func (g *groupState) has(b gbits) bool { return g.bits.Has(b) }

// set sets the bits of b when on and clears them otherwise.
func (g *groupState) set(b gbits, on bool) { g.bits.Set(b, on) }

func (s *Sender) ref(g *groupState, n uint64) MessageRef {
	return MessageRef{GroupID: s.idOf(g), Number: n, Singleton: g.singleton}
}

// message is one unacknowledged message with AckRequested (R21, R89).
type message struct {
	g      *groupState
	number uint64
	last   bool
	// expiry is the ExpiryTime, UTC; never changes (D9, R10).
	expiry  time.Time
	action  string
	payload []byte
	// attempts counts transmissions made (1 after the first).
	attempts int
	// nextAt is the next resend, or after the last one the instant at which
	// the message fails with RetriesExhausted (D26).
	nextAt time.Time
	// untilExpiry: a retryable fault came back; resend until ExpiryTime
	// whatever MaxRetries says (D15, R26).
	untilExpiry bool
	// finalPoll: Poll pattern, retries exhausted; the next poll that does
	// not acknowledge it fails it (D16 "with Poll, after a failed poll").
	finalPoll  bool
	lastResult TransportResult
	tm         timer
	dirty      bool
	done       bool
	// stored: the full outbound record (payload, header, retry state) is
	// in the store under number; later changes go to the small retry-state
	// record under retryKeyBit|number (retryStored once written).
	stored, retryStored bool
}

// destState counts one destination's pending messages (Limits) and drives
// its polls (R32).
type destState struct {
	name    string
	pending int
	bytes   int64
	// pollGroups are this destination's Poll-pattern AckRequested groups
	// with pending or acknowledged numbers (D13, see poll.go); the poll
	// timer tm is scheduled exactly when it is non-empty. A set of the
	// groups themselves, not of their ids: an id string per polled group
	// cost an idle group 59 B (BENCHMARKS.md); firePoll sorts by id.
	pollGroups map[*groupState]struct{}
	tm         timer
	// pollKey numbers d's poll record (pollrec.go); 0 when none is stored.
	// pollStored is the instant that record holds; pollDirty marks d for
	// finish to write or delete it.
	pollKey     uint64
	pollStored  time.Time
	everyStored time.Duration
	pollDirty   bool
	// inflight holds the refs of the polls of the last firing, by id;
	// firedAt is when it fired.
	inflight map[PollID][]group.PollRef
	firedAt  time.Time
	// every is the current late-fault poll interval (0: PollInterval); it
	// doubles up to PollIntervalMax after each clean answer and is reset by
	// a fault or a failed poll. faultSeen: a fault about one of d's groups
	// arrived since the last firing.
	every     time.Duration
	faultSeen bool
}

// outboxEntry is an outcome not yet handled by the producer (D27).
type outboxEntry struct {
	o Outcome
	// blocksKey: the outcome belongs to an abort that blocks o.GroupKey
	// until every such outcome is handled.
	blocksKey bool
}
