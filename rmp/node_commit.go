package rmp

import (
	"fmt"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// maxJobsPerCommit bounds the loop batches one store commit carries.
const maxJobsPerCommit = 64

// commitLoop commits the loop's jobs and releases their effects in order,
// each only once its batch is durable (D8): every job waiting goes into one
// synced store batch. Jobs that nothing waits for (lazy) are held until a
// job that something waits for comes, or LazyCommitDelay passes, or the
// loop ends, so that they share its sync.
func (n *Node) commitLoop() {
	defer close(n.commitDone)
	var jobs []commitJob
	var persist []group.Mutation
	lazy := n.lazyTimer
	defer lazy.Stop()
	holding := false // lazy timer running for the held jobs
	for {
		if len(jobs) == 0 {
			job, ok := <-n.commits
			if !ok {
				return
			}
			jobs = append(jobs, job)
		}
		jobs = n.moreJobs(jobs)
		closed := false
		if len(jobs) < maxJobsPerCommit && n.cfg.LazyCommitDelay > 0 && allLazy(jobs) {
			if !holding {
				lazy.Reset(n.cfg.LazyCommitDelay)
				holding = true
			}
			select {
			case j, ok := <-n.commits:
				if ok {
					jobs = append(jobs, j)
					continue // look again: it may need a sync now
				}
				closed = true
			case <-lazy.C:
			}
		}
		if holding {
			lazy.Stop()
			holding = false
		}
		if !closed && n.cfg.CommitDelay > 0 && len(jobs) < maxJobsPerCommit &&
			n.busy.Load() >= int64(n.cfg.CommitSiblings) && !allLazy(jobs) {
			jobs, closed = n.gatherJobs(jobs)
		}
		for start := 0; start < len(jobs); {
			var end int
			end, persist = n.commitRun(jobs, start, persist[:0])
			err := n.cfg.Store.Apply(persist)
			clear(persist) // keeps no payload alive until the next commit
			if err != nil {
				n.fail(fmt.Errorf("rmp: store commit failed, node stopped: %w", err), jobs[start:])
				for range n.commits {
					// Drain: nothing more is committed or released.
				}
				return
			}
			n.committed.Add(1)
			n.releaseJobs(jobs[start:end])
			start = end
		}
		jobs = jobs[:0]
		if closed {
			return
		}
	}
}

// allLazy reports whether nothing waits for jobs: no answer, send,
// delivery or outcome in their Readies and no caller waiting for a reply.
func allLazy(jobs []commitJob) bool {
	for i := range jobs {
		rd := &jobs[i].rd
		if len(rd.Answers)+len(rd.Sends)+len(rd.Deliver)+len(rd.Notify) > 0 {
			return false
		}
		for _, in := range jobs[i].batch {
			if in.reply != nil {
				return false
			}
		}
	}
	return true
}

// gatherJobs appends the jobs that come within CommitDelay, up to
// maxJobsPerCommit; closed reports that the loop ended meanwhile. On this
// machine class a synced commit costs an fsync and two goroutine hand-offs
// (pebble's WAL syncer and back) whatever it carries, and under load the
// hand-offs wait for a CPU; measured at 64 groups, one message in flight
// each: +18-36% messages per second and -10-20% CPU per message
// (BENCHMARKS.md).
func (n *Node) gatherJobs(jobs []commitJob) (_ []commitJob, closed bool) {
	t := n.delayTimer
	t.Reset(n.cfg.CommitDelay)
	defer t.Stop()
	for len(jobs) < maxJobsPerCommit {
		select {
		case j, ok := <-n.commits:
			if !ok {
				return jobs, true
			}
			jobs = append(jobs, j)
		case <-t.C:
			return jobs, false
		}
	}
	return jobs, false
}

// moreJobs appends the jobs already queued, up to maxJobsPerCommit.
func (n *Node) moreJobs(jobs []commitJob) []commitJob {
	for len(jobs) < maxJobsPerCommit {
		select {
		case j, ok := <-n.commits:
			if !ok {
				return jobs
			}
			jobs = append(jobs, j)
		default:
			return jobs
		}
	}
	return jobs
}

// releaseJobs hands out the effects of committed jobs and answers their
// inputs, in order.
func (n *Node) releaseJobs(jobs []commitJob) {
	for i := range jobs {
		n.release(&jobs[i].rd)
		for k, in := range jobs[i].batch {
			if in.reply != nil {
				in.reply <- jobs[i].results[k]
			}
		}
		// Nothing of the Ready is kept past release (values were copied
		// out), so the engine may reuse its slices.
		select {
		case n.spares <- jobs[i].rd:
		default:
		}
		jobs[i] = commitJob{}
	}
}
