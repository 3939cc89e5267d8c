package rmp

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
)

// committerLog is a committer's store and release, recording in one
// sequence what happened: "apply a,b" for a store batch holding the
// mutations of jobs a and b, "release a" for a job's effects handed out.
type committerLog struct {
	mu      sync.Mutex
	events  []string
	fail    error // Apply fails with it, once set
	stopped error
	changed chan struct{} // signalled on every event
}

func (l *committerLog) Apply(batch []group.Mutation) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return l.fail
	}
	ev := "apply "
	for i, m := range batch {
		if i > 0 {
			ev += ","
		}
		ev += m.Key.GroupID
	}
	l.add(ev)
	return nil
}

func (l *committerLog) release(rd *Ready) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.add("release " + rd.Persist[0].Key.GroupID)
}

func (l *committerLog) stop(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = err
	l.add("stop")
}

func (l *committerLog) add(ev string) {
	l.events = append(l.events, ev)
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

func (l *committerLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

// waitEvents waits until the log holds n events.
func (l *committerLog) waitEvents(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		if evs := l.snapshot(); len(evs) >= n {
			return evs
		}
		select {
		case <-l.changed:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatalf("waited for %d events, have %v", n, l.snapshot())
		}
	}
}

var recordSeq atomic.Uint64

// testCommitter returns a committer over log, not yet running.
func testCommitter(log *committerLog, busy *atomic.Int64) *committer {
	log.changed = make(chan struct{}, 1)
	return (&committer{st: log, release: log.release, stop: log.stop, busy: busy, siblings: 4}).init()
}

// job is a commit job whose Readies persist one record per key (each a
// record of its own, numbered by recordSeq, so that the committer drops
// none of them as overwritten), with an Answer when eager (something waits
// for it) and a reply when r is set.
func job(eager bool, r reply, keys ...string) commitJob {
	var j commitJob
	for _, k := range keys {
		j.rd.Persist = append(j.rd.Persist, group.Mutation{Op: group.OpPut,
			Key: group.Key{Role: group.RoleReceiver, GroupID: k, Kind: group.KindMeta, Number: recordSeq.Add(1)}, Value: []byte("v")})
		j.bytes += len(k) + 1
	}
	if eager {
		j.rd.Answers = []Answer{{Token: 1}}
	}
	if r != nil {
		j.replies = []reply{r}
	}
	return j
}

// The jobs queued when a commit starts share one store batch; each job's
// effects are released only after that batch is applied, in order, and its
// caller is answered after its effects.
func TestCommitterReleasesInOrderAfterTheCommit(t *testing.T) {
	log := &committerLog{}
	c := testCommitter(log, new(atomic.Int64))
	r1, r2 := make(reply, 1), make(reply, 1)
	c.jobs <- job(true, r1, "a")
	c.jobs <- job(true, nil, "b", "b")
	c.jobs <- job(false, r2, "c")
	close(c.jobs)
	c.run()
	require.Equal(t, []string{"apply a,b,b,c", "release a", "release b", "release c"}, log.snapshot())
	require.NoError(t, <-r1)
	require.NoError(t, <-r2)
	require.Equal(t, uint64(1), c.committed.Load())
	require.Len(t, c.spares, 3, "released Readies go back to the loop for reuse")
	require.Nil(t, c.persist[0].Value, "the committed batch keeps no value alive")
}

// A caller's reply comes after its job's effects were released: an answer
// to Submit is never ahead of the transmission it stored.
func TestCommitterAnswersCallersAfterRelease(t *testing.T) {
	log := &committerLog{}
	c := testCommitter(log, new(atomic.Int64))
	r := make(reply, 1)
	c.release = func(rd *Ready) {
		require.Empty(t, r, "answered before its effects were released")
		log.release(rd)
	}
	c.jobs <- job(true, r, "a")
	close(c.jobs)
	c.run()
	require.NoError(t, <-r)
}

// Jobs share a store batch only while their Persists fit the store's
// limits together; a job is committed even when alone it fills a batch.
func TestCommitterSplitsBatchesAtTheStoreLimits(t *testing.T) {
	log := &committerLog{}
	c := testCommitter(log, new(atomic.Int64))
	c.limits = store.Limits{MaxBatchMutations: 3, MaxBatchBytes: 1 << 20}
	c.jobs <- job(true, nil, "a", "a")
	c.jobs <- job(true, nil, "b", "b")
	c.jobs <- job(true, nil, "c")
	c.jobs <- job(true, nil, "d", "d", "d")
	close(c.jobs)
	c.run()
	require.Equal(t, []string{
		"apply a,a", "release a",
		"apply b,b,c", "release b", "release c",
		"apply d,d,d", "release d",
	}, log.snapshot())

	log = &committerLog{}
	c = testCommitter(log, new(atomic.Int64))
	c.limits = store.Limits{MaxBatchBytes: 5}
	c.jobs <- job(true, nil, "aa") // 3 bytes
	c.jobs <- job(true, nil, "bb") // 3 more: over 5
	close(c.jobs)
	c.run()
	require.Equal(t, []string{"apply aa", "release aa", "apply bb", "release bb"}, log.snapshot())
}

// A job nothing waits for is held for the next job that something waits
// for, and both share its commit; at the end of the loop a held job is
// committed.
func TestCommitterHoldsLazyJobs(t *testing.T) {
	log := &committerLog{}
	c := testCommitter(log, new(atomic.Int64))
	c.lazyDelay = time.Hour
	go c.run()
	c.jobs <- job(false, nil, "lazy1")
	c.jobs <- job(false, nil, "lazy2")
	time.Sleep(50 * time.Millisecond)
	require.Empty(t, log.snapshot(), "lazy jobs alone are not committed")
	c.jobs <- job(true, nil, "eager")
	require.Equal(t, []string{"apply lazy1,lazy2,eager", "release lazy1", "release lazy2", "release eager"}, log.waitEvents(t, 4))

	c.jobs <- job(false, nil, "last")
	close(c.jobs)
	<-c.done
	require.Equal(t, []string{"apply last", "release last"}, log.snapshot()[4:], "the loop's end commits what is held")
}

// A lazy job is committed on its own once lazyDelay passed.
func TestCommitterCommitsALazyJobAfterItsDelay(t *testing.T) {
	log := &committerLog{}
	c := testCommitter(log, new(atomic.Int64))
	c.lazyDelay = 20 * time.Millisecond
	go c.run()
	defer func() { close(c.jobs); <-c.done }()
	c.jobs <- job(false, nil, "lazy")
	require.Equal(t, []string{"apply lazy", "release lazy"}, log.waitEvents(t, 2))
}

// A caller waiting makes a job eager even without effects (Sync).
func TestCommitterDoesNotHoldAJobACallerWaitsFor(t *testing.T) {
	log := &committerLog{}
	c := testCommitter(log, new(atomic.Int64))
	c.lazyDelay = time.Hour
	go c.run()
	defer func() { close(c.jobs); <-c.done }()
	r := make(reply, 1)
	c.jobs <- job(false, r, "sync")
	select {
	case err := <-r:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("a job a caller waits for was held")
	}
}

// While the node is busy a commit waits up to commitDelay for more jobs,
// up to maxJobsPerCommit; an idle node commits at once.
func TestCommitterWaitsForMoreWorkWhenBusy(t *testing.T) {
	busy := new(atomic.Int64)
	log := &committerLog{}
	c := testCommitter(log, busy)
	c.commitDelay = time.Hour
	go c.run()
	defer func() { close(c.jobs); <-c.done }()

	c.jobs <- job(true, nil, "idle")
	require.Equal(t, []string{"apply idle", "release idle"}, log.waitEvents(t, 2), "idle: at once")

	busy.Store(c.siblings)
	c.jobs <- job(true, nil, "j")
	time.Sleep(50 * time.Millisecond)
	require.Len(t, log.snapshot(), 2, "busy: the commit waits for more work")
	for range maxJobsPerCommit - 1 {
		c.jobs <- job(true, nil, "j")
	}
	evs := log.waitEvents(t, 3)
	want := "apply j"
	for range maxJobsPerCommit - 1 {
		want += ",j"
	}
	require.Equal(t, want, evs[2], "a full commit's worth ends the wait")
}

// A failed commit stops the node: nothing of it or after it is released,
// and every caller still waiting, also in jobs queued later, gets the
// error.
func TestCommitterStopsOnAFailedCommit(t *testing.T) {
	log := &committerLog{}
	c := testCommitter(log, new(atomic.Int64))
	disk := errors.New("disk full")
	go c.run()
	c.jobs <- job(true, nil, "ok")
	log.waitEvents(t, 2)
	log.mu.Lock()
	log.fail = disk
	log.mu.Unlock()
	r1, r2 := make(reply, 1), make(reply, 1)
	c.jobs <- job(true, r1, "lost")
	<-c.failed
	c.jobs <- job(true, r2, "later")
	close(c.jobs)
	<-c.done
	require.Equal(t, []string{"apply ok", "release ok", "stop"}, log.snapshot())
	require.ErrorIs(t, log.stopped, disk)
	require.ErrorIs(t, <-r1, disk)
	require.ErrorIs(t, <-r2, disk)
}

// Every Ready of two commits' worth of jobs comes back as a spare: with a
// commit being made and one queued behind it, that many are out at once,
// and one not kept is one the engine grows again from nothing.
func TestCommitterKeepsASpareForEveryReadyOut(t *testing.T) {
	log := &committerLog{}
	c := testCommitter(log, new(atomic.Int64))
	go c.run()
	for range 2 * maxJobsPerCommit {
		c.jobs <- job(true, nil, "a")
	}
	close(c.jobs)
	<-c.done
	require.Len(t, c.spares, 2*maxJobsPerCommit)
}
