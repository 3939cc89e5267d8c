package receiver

import (
	"fmt"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// Stored schedules: a recovered Receiver retries refused hand-offs and
// failed callback POSTs at the instants the old one would have, not at once
// (R75, R92). Both are small records written when a retry is scheduled,
// never a payload:
//
//   - a refused hand-off: (attempts, retryAt) under its group generation,
//     kind kindHandoffRetry, its number; deleted with the delivery, and by
//     the generation's OpDeleteGeneration;
//   - a callback URL in back-off: (url, attempts, retryAt) beside the
//     callback entries (group id "", KindMeta, a number from the entry
//     counter); deleted when a POST to the URL succeeds or the URL has
//     nothing left.
//
// A hand-off in flight at a crash has no outcome to wait for: it is handed
// out again at once (R92), its attempt count kept.

// kindHandoffRetry is the kind of a refused hand-off's retry record. The
// receiver stores no outbound messages, so it borrows the sender's
// retry-state kind for its own retry state.
const kindHandoffRetry = group.KindOutbound

// putHandoffRetry stores the retry state of pending n of g.
func (r *Receiver) putHandoffRetry(g *gstate, n uint64, d *delivery) {
	e := newEnc(r.arena.Buf(32))
	e.Uvarint(uint64(d.attempts))
	e.Time(d.retryAt)
	r.put(r.key(g, kindHandoffRetry, n), r.arena.Keep(e.Encoded()))
	d.retryStored = true
}

func decodeHandoffRetry(v []byte) (attempts int, retryAt time.Time, err error) {
	d := newDec(v)
	a := d.Uvarint()
	if d.Err() == nil && a > 1<<31 {
		d.Fail("attempts")
	}
	at := d.Time()
	return int(a), at, end(&d)
}

// dropPending forgets pending n of g and deletes its records.
func (r *Receiver) dropPending(g *gstate, n uint64) {
	d := g.pending[n]
	r.removePending(g, n)
	r.del(r.key(g, group.KindDelivery, n))
	if d.retryStored {
		r.del(r.key(g, kindHandoffRetry, n))
	}
}

// urlKey addresses a callback URL's back-off record.
func urlKey(n uint64) group.Key {
	return group.Key{Role: group.RoleReceiver, Kind: group.KindMeta, Number: n}
}

// putURLState stores u's back-off after a failed POST.
func (r *Receiver) putURLState(u string, c *cbURL) {
	if c.key == 0 {
		c.key = r.out.nextSeq
		r.out.nextSeq++
	}
	e := newEnc(r.arena.Buf(32 + len(u)))
	e.Str(u)
	e.Uvarint(uint64(c.attempts))
	e.Time(c.retryAt)
	r.put(urlKey(c.key), r.arena.Keep(e.Encoded()))
}

// dropURLState deletes u's back-off record, if any.
func (r *Receiver) dropURLState(c *cbURL) {
	if c.key != 0 {
		r.del(urlKey(c.key))
		c.key = 0
	}
}

func decodeURLState(v []byte) (u string, attempts int, retryAt time.Time, err error) {
	d := newDec(v)
	u = d.Str()
	a := d.Uvarint()
	if d.Err() == nil && a > 1<<31 {
		d.Fail("attempts")
	}
	at := d.Time()
	if err := end(&d); err != nil {
		return "", 0, time.Time{}, err
	}
	if !usableURL(u) {
		return "", 0, time.Time{}, fmt.Errorf("%w: callback URL state", ErrCorrupt)
	}
	return u, int(a), at, nil
}

// recoverURLState applies a URL back-off record read by Recover.
func (r *Receiver) recoverURLState(n uint64, v []byte) error {
	u, attempts, at, err := decodeURLState(v)
	if err != nil {
		return err
	}
	c := r.out.url(u)
	if c.key != 0 {
		return fmt.Errorf("%w: URL state stored twice", ErrCorrupt)
	}
	c.key, c.attempts, c.retryAt = n, attempts, at
	r.out.nextSeq = max(r.out.nextSeq, n+1)
	return nil
}

// finishRecoveredURLs drops back-off records of URLs with nothing queued;
// their deletion goes with the next Persist.
func (r *Receiver) finishRecoveredURLs() {
	for u, c := range r.out.urls {
		if len(c.queue) == 0 {
			if c.key != 0 {
				r.out.staleKeys = append(r.out.staleKeys, c.key)
			}
			delete(r.out.urls, u)
		}
	}
}
