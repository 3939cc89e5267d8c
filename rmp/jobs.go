package rmp

import "github.com/wsrkit/wsrkit/store"

// Every store batch the Node commits fits the store's limits (#18), for
// any state those limits let in, by construction:
//
//   - one engine step (an input, a result, one Tick) persists a bounded
//     number of mutations: the receiving and sending RMPs stop their timer
//     work at MaxStepMutations and leave the rest due at once; an input's
//     own records are bounded by MaxBody and the payload limit, which
//     fitEngine keeps inside the store's value limit;
//   - the loop closes a job (one Ready) once its Persist reaches a quarter
//     of the batch limits, and goes on with a new one, so a job is at most
//     a quarter plus one step;
//   - the committer puts jobs into one store batch only while their sum
//     fits (committer.commitRun).
//
// Nothing of a job is released before its batch is durable (D8, R21, D27):
// splitting work into jobs only moves where commits fall.

// fitEngine keeps each step's records inside lim: a step's timer budget
// at most an eighth of a batch, a payload or body at most one value.
func fitEngine(cfg *NodeConfig, lim store.Limits) {
	step := max(lim.BatchMutations()/8, 1)
	for _, v := range []*int{&cfg.Engine.Receiver.MaxStepMutations, &cfg.Engine.Sender.Limits.MaxStepMutations} {
		if *v <= 0 || *v > step {
			*v = min(step, 4096)
		}
	}
	// Header fields, expiry and retry state ride beside the bytes.
	const recordOverhead = 64 << 10
	value := lim.MaxValueBytes
	if value <= 0 {
		value = store.DefaultMaxValueBytes
	}
	room := max(value-recordOverhead, 1)
	if p := &cfg.Engine.Sender.Limits.MaxPayloadBytes; *p <= 0 || *p > room {
		*p = room
	}
	if cfg.MaxBody > int64(room) {
		cfg.MaxBody = int64(room)
	}
}

// jobBuilder is the loop's account of the job it is building: the
// engine's Ready up to the next handOff.
type jobBuilder struct {
	maxMutations, maxBytes int     // the job is closed once its Persist reaches either
	counted, bytes         int     // the Persist's mutations counted so far, and their bytes
	replies                []reply // the callers waiting for the job's commit
}

// newJobBuilder closes jobs at a quarter of lim's batch limits.
func newJobBuilder(lim store.Limits) jobBuilder {
	return jobBuilder{maxMutations: lim.BatchMutations() / 4, maxBytes: lim.BatchBytes() / 4}
}

// jobFull counts the Persist of the Ready being built and reports whether
// it reached the job limits.
func (n *Node) jobFull() bool {
	j := &n.job
	p := n.eng.Ready().Persist
	for ; j.counted < len(p); j.counted++ {
		j.bytes += store.MutationBytes(&p[j.counted])
	}
	return j.counted >= j.maxMutations || j.bytes >= j.maxBytes
}
