package rmp

import (
	"fmt"
	"iter"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
)

// Config configures an Engine.
type Config struct {
	// Receiver and Sender configure the two RMPs. Receiver.Dialect is the
	// fault dialect the engine emits (D6), in RM-Replies and SOAP Faults.
	Receiver receiver.Config
	Sender   sender.Config
	// Parse bounds inbound envelopes (size, depth, counts).
	Parse soap.ParseOptions
	// ReplyTo is the address put into ReplyTo of Callback-pattern
	// submissions that name none: this RMP's endpoint.
	ReplyTo string
	// ReplyVersion is the SOAP version of callbacks (RM-Replies POSTed to a
	// ReplyTo) and PollRequests. Default SOAP 1.1.
	ReplyVersion soap.Version
}

// Engine joins a receiving and a sending RMP, the SOAP wire layer, and the
// persistence vocabulary behind one effects-out interface. It is pure: no
// goroutines, no clock, no I/O; every input carries now. It is not safe for
// concurrent use: the Node serialises calls.
//
// Inputs accumulate effects; Ready hands them over and Advance confirms
// that the driver took them. See the package doc for the order in which
// the driver applies them.
type Engine struct {
	cfg  Config
	recv *receiver.Receiver
	send *sender.Sender

	rd      Ready // accumulated, not yet handed over
	spare   Ready // emptied slices handed back by Recycle, for the next rd
	metrics counters

	// Renderings that failed, reported back as failed exchanges by the
	// next input (flushFailures).
	undeliverable   []sender.MessageRef
	failedPolls     []sender.PollID
	failedCallbacks []receiver.CallbackRef

	// destPeers is the identity each https destination presented, by
	// origin (bind.go).
	destPeers map[string]string
}

// newEngine builds an Engine from the records a store holds: those of
// RoleReceiver for the receiving RMP, and those of RoleSender and RoleOutbox
// for the sending RMP, each in key order. Nil sequences start empty.
func newEngine(cfg Config, recvRecords, sendRecords iter.Seq2[group.Key, []byte]) (*Engine, error) {
	if cfg.ReplyVersion == 0 {
		cfg.ReplyVersion = soap.SOAP11
	}
	if !cfg.ReplyVersion.Valid() {
		return nil, fmt.Errorf("rmp: invalid ReplyVersion %d", cfg.ReplyVersion)
	}
	e := &Engine{cfg: cfg}
	var err error
	if e.recv, err = start(cfg.Receiver, recvRecords, receiver.New, receiver.Recover); err != nil {
		return nil, fmt.Errorf("rmp: receiving RMP: %w", err)
	}
	if e.send, err = start(cfg.Sender, sendRecords, sender.New, sender.Recover); err != nil {
		return nil, fmt.Errorf("rmp: sending RMP: %w", err)
	}
	return e, nil
}

// start makes one side's state machine: fresh, or recovered from records.
func start[C, M any](cfg C, records iter.Seq2[group.Key, []byte],
	fresh func(C) (M, error), recovered func(C, iter.Seq2[group.Key, []byte]) (M, error)) (M, error) {
	if records == nil {
		return fresh(cfg)
	}
	return recovered(cfg, records)
}

// Tick applies the passing of time up to now on both sides: resends,
// expiries, polls, callback and hand-off retries, termination and removal.
func (e *Engine) Tick(now time.Time) {
	e.addReceiver(e.recv.Tick(now))
	e.addSender(e.send.Tick(now))
	e.flushFailures(now)
}

// NextDeadline returns when Tick must next be called; false when no timer
// is needed. A deadline at or before now means at once.
func (e *Engine) NextDeadline() (time.Time, bool) {
	r, rok := e.recv.NextDeadline()
	s, sok := e.send.NextDeadline()
	switch {
	case rok && sok:
		if s.Before(r) {
			return s, true
		}
		return r, true
	case rok:
		return r, true
	case sok:
		return s, true
	}
	return time.Time{}, false
}

// HasReady reports whether effects wait to be handed over.
func (e *Engine) HasReady() bool { return !e.rd.empty() }

// Ready returns the effects accumulated since the last Advance. Calling it
// again before Advance returns the same effects plus any added since.
func (e *Engine) Ready() Ready {
	return e.rd
}

// Advance confirms that the driver took over the Ready last returned; the
// Engine drops its effects and never needs them back (the driver may still
// be applying them, package doc). Effects added after that Ready call are
// dropped too, so callers take Ready and Advance with no input in between.
func (e *Engine) Advance() {
	e.rd, e.spare = e.spare, Ready{}
}

// Recycle hands back a Ready, taken earlier and since applied in full, of
// which the caller keeps nothing (values copied out are fine): later
// Readies reuse its slices instead of growing new ones. Optional; a Ready
// must be recycled at most once.
func (e *Engine) Recycle(rd Ready) {
	into := &e.spare
	if e.rd.empty() {
		into = &e.rd // nothing accumulated yet: use it at once
	}
	if cap(rd.Persist)+cap(rd.Sends) <= cap(into.Persist)+cap(into.Sends) {
		return
	}
	// Emptied, so that recycled slices keep nothing alive.
	clear(rd.Persist)
	clear(rd.Answers)
	clear(rd.Sends)
	clear(rd.Deliver)
	clear(rd.Notify)
	clear(rd.Events)
	*into = Ready{
		Persist: rd.Persist[:0], Answers: rd.Answers[:0], Sends: rd.Sends[:0],
		Deliver: rd.Deliver[:0], Notify: rd.Notify[:0], Events: rd.Events[:0],
	}
}
