package admin

// Metrics are an engine's counters, exported by the gateway.
type Metrics struct {
	// Receiving side.
	Accepted   uint64 // reliable messages accepted (not refused, not duplicates)
	Delivered  uint64 // hand-offs taken by the consumer
	Duplicates uint64 // duplicates recognised (D18)
	Discarded  uint64 // accepted messages that will never be delivered (D12, D14)
	// Sending side.
	Submitted uint64
	Retries   uint64 // resends (D26)
	// FaultsSent counts fault indications and SOAP Faults emitted, by code;
	// FaultsReceived those read by the sending side.
	FaultsSent     [16]uint64
	FaultsReceived [16]uint64
	// ForeignPeer counts messages refused, and ForeignPeerPolls PollRequest
	// references ignored, because their group is bound to another peer
	// identity (receiver.Config.BindGroupsToPeer).
	ForeignPeer, ForeignPeerPolls uint64
	// ForeignPeerReplies counts RM-Reply entries about a sending group
	// dropped because another party than its destination sent them
	// (receiver.Config.BindGroupsToPeer).
	ForeignPeerReplies uint64
	// GroupNotAllowed counts messages refused, and GroupNotAllowedPolls
	// PollRequest references ignored, because their sender may not use the
	// groupId (receiver.Config.AllowGroup).
	GroupNotAllowed, GroupNotAllowedPolls uint64
	// Outcomes counts outcomes handed to the producer, by kind and reason.
	Outcomes map[OutcomeLabel]uint64
	// Gauges.
	SenderGroups int
	Pending      int
	// Commits counts the synced store batches a Node committed (each holds
	// the effects of one or more loop iterations): the Metrics of
	// rmp.Node.Admin have it, those of rmp.Engine.Admin 0.
	Commits uint64
}

// OutcomeLabel is an outcome's kind and reason, the labels of
// wsrkit_outcomes_total.
type OutcomeLabel struct {
	Outcome string // "acknowledged" | "failed"
	Reason  string // "" | "expired" | …
}
