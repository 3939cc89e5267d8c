package group

import "time"

// Role says which side of an RMP a stored record belongs to.
type Role uint8

const (
	RoleReceiver Role = iota + 1
	RoleSender
	// RoleOutbox holds the sending side's outcome records (D27), kept apart
	// from groups so that removing a group never loses an outcome not yet
	// handed to the producer.
	RoleOutbox
)

func (r Role) String() string {
	switch r {
	case RoleReceiver:
		return "receiver"
	case RoleSender:
		return "sender"
	case RoleOutbox:
		return "outbox"
	}
	return "Role(?)"
}

// Kind says what a stored record of a group holds. Keys of one group
// generation sort by kind, then number.
type Kind uint8

const (
	// KindMeta: the group's metadata and lifecycle (Number 0).
	KindMeta Kind = iota + 1
	// KindReceived: a run of received (receiver) or acknowledged (sender)
	// numbers, keyed by the run's first number; written as deltas and
	// compacted, never the whole set per message.
	KindReceived
	// KindHeld: an out-of-order message held in the ordering buffer, keyed
	// by its number, payload included (D14, R48).
	KindHeld
	// KindDelivery: a message handed, or to be handed, to the consumer.
	KindDelivery
	// KindReply: a pending RM-Reply entry (callback ack or fault, D13).
	KindReply
	// KindResponse: a cached business response (D18, R45).
	KindResponse
	// KindOutbound: a sender's unacknowledged message, byte-exact, with its
	// retry state (R21, R89).
	KindOutbound
	// KindOutcome: an outcome not yet handed to the producer (D27).
	KindOutcome
)

// Key addresses one stored record: (Role, GroupID, Generation, Kind,
// Number). Stores order keys by these fields in this order, so a group
// generation's records are contiguous.
type Key struct {
	Role       Role
	GroupID    string
	Generation uint64
	Kind       Kind
	Number     uint64
}

// Op is what a Mutation does.
type Op uint8

const (
	// OpPut sets Key to Value.
	OpPut Op = iota + 1
	// OpDelete removes Key.
	OpDelete
	// OpDeleteGeneration removes every record of (Key.Role, Key.GroupID,
	// Key.Generation), its deadline included; Kind and Number are ignored.
	OpDeleteGeneration
	// OpSetDeadline indexes the group generation of Key under instant At,
	// replacing its previous deadline; the zero At clears it. The state
	// machines index an instant no later than the generation's next
	// deadline (IndexedDeadline).
	OpSetDeadline
)

// Mutation is one change a state machine asks the store to make. The
// mutations of one input form a batch that is applied whole or not at all
// and is durable before any effect that depends on it is released.
type Mutation struct {
	Op    Op
	Key   Key
	Value []byte
	At    time.Time
}
