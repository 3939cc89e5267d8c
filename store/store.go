package store

import (
	"errors"
	"iter"
	"math"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// Store keeps an RMP's group state across restarts. Implementations are safe
// for concurrent use. Values passed in and handed out are copied: a caller
// may reuse or modify its slices.
type Store interface {
	// Apply applies every mutation of batch atomically (whole or not at all)
	// and durably (synced) before it returns. Concurrent calls share syncs
	// (group commit). A batch with an invalid mutation fails whole with an
	// error wrapping ErrInvalid. An empty batch is a no-op.
	Apply(batch []group.Mutation) error
	// Get returns the value stored under k; ok is false when there is none.
	Get(k group.Key) (value []byte, ok bool, err error)
	// Scan yields the records under p in key order. An error is yielded
	// once, with a zero Record, and ends the sequence.
	Scan(p Prefix) iter.Seq2[Record, error]
	// Generations yields, in key order, the group generations of role that
	// have a KindMeta record.
	Generations(role group.Role) iter.Seq2[group.ID, error]
	// DueBefore yields the deadlines with At <= upTo in (At, Role, GroupID,
	// Generation) order, reading only those index entries.
	DueBefore(upTo time.Time) iter.Seq2[Deadline, error]
	// NextDeadline returns the earliest deadline; ok is false when none is set.
	NextDeadline() (at time.Time, ok bool, err error)
	// Close releases the store. It waits for calls in progress; a loop over
	// an iterator of this store must not call Close. Every later call returns
	// ErrClosed.
	Close() error
}

// MaxInstant is the latest instant a deadline may hold: DueBefore
// (MaxInstant()) yields every deadline.
func MaxInstant() time.Time { return maxInstant }

var (
	minInstant = time.Unix(0, math.MinInt64).UTC()
	maxInstant = time.Unix(0, math.MaxInt64).UTC()
)

// Record is one stored record.
type Record struct {
	Key   group.Key
	Value []byte
}

// Deadline is one deadline-index entry: generation ID of Role is due at At
// (UTC, nanosecond precision).
type Deadline struct {
	At   time.Time
	Role group.Role
	ID   group.ID
}

var (
	// ErrClosed is returned by every call on a closed store.
	ErrClosed = errors.New("store: closed")
	// ErrInvalid is wrapped by the error for a batch or key the store
	// refuses (zero role or kind, unknown op, a limit exceeded, an instant
	// out of range); nothing of the batch is applied.
	ErrInvalid = errors.New("store: invalid")
	// ErrFailed is wrapped by the error of every call after a fatal storage
	// error: the store can no longer promise durability and must be
	// reopened.
	ErrFailed = errors.New("store: failed; reopen required")
	// ErrCorrupt is wrapped by the error for a stored key or value that does
	// not decode.
	ErrCorrupt = errors.New("store: corrupt")
)
