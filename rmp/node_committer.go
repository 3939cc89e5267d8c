package rmp

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
)

// committer is the second stage of the Node's pipeline (package doc, "How
// the Node applies a Ready"): the loop takes each Ready, calls Advance and
// queues the Ready as a job; the committer makes the jobs durable and only
// then releases their effects and answers their callers (D8, R21, D27).
//
// Jobs are committed and released in the order they were queued. Every job
// waiting when a commit starts goes into that one synced store batch while
// their Persists fit the store's limits together (commitRun), so that one
// fsync carries the work of many loop batches; a record several of them
// write is written once, with its last value (coalescer). Two waits trade
// a little latency for fewer fsyncs, both wall time (they pace the disk,
// not the protocol):
//   - lazy jobs, which nothing waits for (allLazy), are held until a job
//     that something waits for comes, lazyDelay passes, or the loop ends;
//   - while the node is busy (busy ≥ siblings), a commit waits up to
//     commitDelay for more jobs (PostgreSQL's commit_delay).
//
// After a failed commit nothing more is committed or released: the
// committer stops the node (stop) and answers every caller still waiting
// with the error.
type committer struct {
	st          applier
	limits      store.Limits  // every store batch fits them (jobs.go)
	lazyDelay   time.Duration // NodeConfig.LazyCommitDelay; ≤ 0 holds nothing
	commitDelay time.Duration // NodeConfig.CommitDelay; ≤ 0 never waits
	siblings    int64         // NodeConfig.CommitSiblings
	busy        *atomic.Int64 // the Node's exchanges in progress
	release     func(*Ready)  // hands out a committed Ready's effects, in order
	stop        func(error)   // stops the node after a failed commit

	jobs      chan commitJob // loop → committer; the loop closes it when it ends
	spares    chan Ready     // committer → loop: released Readies to recycle
	failed    chan struct{}  // closed after a failed commit, once stop returned
	done      chan struct{}  // closed when the committer ends
	committed atomic.Uint64  // store batches committed

	lazyTimer, delayTimer *time.Timer      // stopped while not waiting
	persist               []group.Mutation // the batch being committed; emptied after
	coalescer             coalescer        // drops what a later loop batch of the same commit overwrites
}

// applier is what the committer needs of a store.Store.
type applier interface {
	Apply(batch []group.Mutation) error
}

// commitJob is the effects of one loop batch and the callers waiting for
// them to be durable.
type commitJob struct {
	rd      Ready
	bytes   int     // store.MutationBytes of rd.Persist
	replies []reply // answered once rd is committed and released
}

// reply tells a caller that the batch holding its input was committed
// (nil) or not (the error); buffered, sent once.
type reply chan error

// maxJobsPerCommit bounds the loop batches one store commit carries.
const maxJobsPerCommit = 64

// init makes c's channels and timers; the other fields are set by its
// owner.
func (c *committer) init() *committer {
	// Room for a full commit's worth of jobs: a loop that blocked here
	// while the store syncs would stall every answer and hand-off behind
	// the fsync (measured: 12-15% fewer messages per second at 64 groups).
	c.jobs = make(chan commitJob, maxJobsPerCommit)
	// A spare for every Ready that can be out at once: a commit's worth
	// being committed and a commit's worth queued behind it. The loop makes
	// a Ready per batch, and one dropped here is one the engine grows again
	// from nothing (with room for one commit only, 8 % of hand-offs found
	// no spare at 64 groups x 16 in flight and grew 1.2 KB per message).
	c.spares = make(chan Ready, 2*maxJobsPerCommit)
	c.failed = make(chan struct{})
	c.done = make(chan struct{})
	c.lazyTimer = time.NewTimer(time.Hour)
	c.lazyTimer.Stop()
	c.delayTimer = time.NewTimer(time.Hour)
	c.delayTimer.Stop()
	return c
}

// run commits and releases jobs until the loop closes c.jobs or a commit
// fails.
func (c *committer) run() {
	defer close(c.done)
	defer c.lazyTimer.Stop()
	var jobs []commitJob
	for {
		var more bool
		jobs, more = c.next(jobs[:0])
		if len(jobs) > 0 && !c.commit(jobs) {
			return
		}
		if !more {
			return
		}
	}
}

// next waits for the jobs of the next commit: the first to come, those
// queued behind it, those that come while lazy jobs are held, and those
// that come within commitDelay while the node is busy. more is false once
// the loop ended; the jobs returned then are the last.
func (c *committer) next(jobs []commitJob) (_ []commitJob, more bool) {
	job, ok := <-c.jobs
	if !ok {
		return jobs, false
	}
	jobs = c.queued(append(jobs, job))
	held := false // the lazy timer runs
hold:
	for len(jobs) < maxJobsPerCommit && c.lazyDelay > 0 && allLazy(jobs) {
		if !held {
			c.lazyTimer.Reset(c.lazyDelay)
			held = true
		}
		select {
		case j, ok := <-c.jobs:
			if !ok {
				c.lazyTimer.Stop()
				return jobs, false
			}
			jobs = c.queued(append(jobs, j)) // it may need a sync now
		case <-c.lazyTimer.C:
			held = false
			break hold
		}
	}
	if held {
		c.lazyTimer.Stop()
	}
	if len(jobs) < maxJobsPerCommit && c.commitDelay > 0 && c.busy.Load() >= c.siblings && !allLazy(jobs) {
		return c.delayed(jobs)
	}
	return jobs, true
}

// queued appends the jobs already queued, up to maxJobsPerCommit.
func (c *committer) queued(jobs []commitJob) []commitJob {
	for len(jobs) < maxJobsPerCommit {
		select {
		case j, ok := <-c.jobs:
			if !ok {
				return jobs // the next receive reports the end
			}
			jobs = append(jobs, j)
		default:
			return jobs
		}
	}
	return jobs
}

// delayed appends the jobs that come within commitDelay, up to
// maxJobsPerCommit. On this machine class a synced commit costs an fsync
// and two goroutine hand-offs (pebble's WAL syncer and back) whatever it
// carries, and under load the hand-offs wait for a CPU; measured at 64
// groups, one message in flight each: +18-36% messages per second and
// -10-20% CPU per message (BENCHMARKS.md).
func (c *committer) delayed(jobs []commitJob) (_ []commitJob, more bool) {
	t := c.delayTimer
	t.Reset(c.commitDelay)
	defer t.Stop()
	for len(jobs) < maxJobsPerCommit {
		select {
		case j, ok := <-c.jobs:
			if !ok {
				return jobs, false
			}
			jobs = append(jobs, j)
		case <-t.C:
			return jobs, true
		}
	}
	return jobs, true
}

// allLazy reports whether nothing waits for jobs: no answer, send,
// delivery or outcome in their Readies and no caller waiting for a reply.
func allLazy(jobs []commitJob) bool {
	for i := range jobs {
		rd := &jobs[i].rd
		if len(rd.Answers)+len(rd.Sends)+len(rd.Deliver)+len(rd.Notify)+len(jobs[i].replies) > 0 {
			return false
		}
	}
	return true
}

// commit applies jobs in store batches that fit the store's limits, each
// released once it is durable; false after a failed commit.
func (c *committer) commit(jobs []commitJob) bool {
	for start := 0; start < len(jobs); {
		end := c.commitRun(jobs, start)
		if end-start > 1 {
			c.persist = c.coalescer.coalesce(c.persist)
		}
		err := c.st.Apply(c.persist)
		clear(c.persist) // keeps no payload alive until the next commit
		if err != nil {
			c.fail(fmt.Errorf("rmp: store commit failed, node stopped: %w", err), jobs[start:])
			return false
		}
		c.committed.Add(1)
		c.releaseJobs(jobs[start:end])
		start = end
	}
	return true
}

// commitRun gathers into c.persist the longest run of jobs from start
// whose Persists fit one store batch together (at least one job), and
// returns the run's end.
func (c *committer) commitRun(jobs []commitJob, start int) int {
	maxM, maxB := c.limits.BatchMutations(), c.limits.BatchBytes()
	c.persist = c.persist[:0]
	count, bytes := 0, 0
	end := start
	for ; end < len(jobs); end++ {
		j := &jobs[end]
		if end > start && (count+len(j.rd.Persist) > maxM || bytes+j.bytes > maxB) {
			break
		}
		count += len(j.rd.Persist)
		bytes += j.bytes
		c.persist = append(c.persist, j.rd.Persist...)
	}
	return end
}

// releaseJobs hands out the effects of committed jobs and answers their
// callers, in order.
func (c *committer) releaseJobs(jobs []commitJob) {
	for i := range jobs {
		c.release(&jobs[i].rd)
		answer(jobs[i].replies, nil)
		// Nothing of the Ready is kept past release (values were copied
		// out), so the engine may reuse its slices.
		select {
		case c.spares <- jobs[i].rd:
		default:
		}
		jobs[i] = commitJob{}
	}
}

// fail stops the node after a failed commit and answers every caller
// still waiting, also those of jobs queued until the loop ends: nothing
// more is committed or released.
func (c *committer) fail(err error, jobs []commitJob) {
	c.stop(err)
	close(c.failed)
	for i := range jobs {
		answer(jobs[i].replies, err)
	}
	for j := range c.jobs {
		answer(j.replies, err)
	}
}

// answer sends err to each caller of replies.
func answer(replies []reply, err error) {
	for _, r := range replies {
		r <- err
	}
}
