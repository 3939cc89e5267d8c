package receiver

import (
	"slices"
	"strings"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

// cbEntry is one reply waiting to be POSTed to a ReplyTo URL (R74, R93).
// Entries live under the outbox key, apart from group generations, so a
// fault outlives the removal of its group's state.
type cbEntry struct {
	seq      uint64
	url      string
	groupID  string
	sequence bool
	from, to uint64
	code     faults.Code
	// until: retried up to this instant (the acked message's ExpiryTime,
	// R75; for faults at least FaultRetention).
	until    time.Time
	inFlight CallbackRef
}

// cbURL is the queue and retry state of one callback URL.
type cbURL struct {
	// queue holds entries not in flight, sorted by seq.
	queue    []*cbEntry
	inFlight int
	attempts int
	retryAt  time.Time
	// key numbers the stored back-off record (schedule.go); 0 when none.
	key uint64
}

type flight struct {
	url string
	// entries is nil for a one-shot poll answer (R80): not retried.
	entries []*cbEntry
}

// outbox is the callback queue of every URL.
type outbox struct {
	urls     map[string]*cbURL
	flights  map[CallbackRef]*flight
	queued   int
	nextSeq  uint64
	nextID   CallbackRef
	urlOrder []string
	// staleKeys are URL back-off records for the next Persist to delete.
	staleKeys []uint64
	// batchNums is scratch for flushCallbacks (admit), cleared per batch.
	batchNums map[cbNum]cbStatus
}

func newOutbox() outbox {
	return outbox{urls: map[string]*cbURL{}, flights: map[CallbackRef]*flight{}, nextSeq: 1}
}

// outboxKey addresses a callback entry: group id "" (never a valid groupId,
// R04) and generation 0 hold the receiver's callback outbox.
func outboxKey(seq uint64) group.Key {
	return group.Key{Role: group.RoleReceiver, Kind: group.KindReply, Number: seq}
}

func (o *outbox) url(u string) *cbURL {
	c := o.urls[u]
	if c == nil {
		c = &cbURL{}
		o.urls[u] = c
	}
	return c
}

func (o *outbox) enqueue(e *cbEntry) {
	c := o.url(e.url)
	c.queue = append(c.queue, e)
	o.queued++
}

// ready reports whether c may send its next batch at now: entries queued,
// back-off over, and no POST of c in flight — one at a time per URL, so
// that a later batch never overtakes an earlier one (R74).
func (c *cbURL) ready(now time.Time) bool {
	return len(c.queue) > 0 && c.inFlight == 0 && !now.Before(c.retryAt)
}

// deadline is the earliest retry of a URL with queued entries and no POST
// in flight (CallbackResult flushes the others).
func (o *outbox) deadline() (time.Time, bool) {
	var d earliest
	if o.queued == 0 {
		return d.at, d.ok
	}
	for _, c := range o.urls {
		if len(c.queue) > 0 && c.inFlight == 0 {
			d.offer(c.retryAt)
		}
	}
	return d.at, d.ok
}

// callback queues a reply item to url and persists it (R74, R93).
func (r *Receiver) callback(now time.Time, url string, it replyItem, expiry time.Time) {
	until := expiry
	if it.code != 0 {
		until = latest(expiry, now.Add(r.cfg.FaultRetention))
	}
	r.callbackUntil(url, it, until)
}

// callbackUntil queues a reply item to url, retried up to until (R75).
func (r *Receiver) callbackUntil(url string, it replyItem, until time.Time) {
	e := &cbEntry{seq: r.out.nextSeq, url: url, groupID: it.groupID, sequence: it.sequence,
		from: it.from, to: it.to, code: it.code, until: until}
	r.out.nextSeq++
	r.put(outboxKey(e.seq), r.arena.Keep(encodeEntry(r.arena.Buf(64+len(e.url)+len(e.groupID)), e)))
	r.out.enqueue(e)
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// flushCallbacks emits one batch per URL that is due, sorted by URL (R76);
// a URL with a POST in flight waits for its CallbackResult.
func (r *Receiver) flushCallbacks(now time.Time) {
	o := &r.out
	k := min(len(o.staleKeys), max(r.room(), 0))
	for _, key := range o.staleKeys[:k] {
		r.del(urlKey(key))
	}
	o.staleKeys = append(o.staleKeys[:0], o.staleKeys[k:]...) // the rest with the next Persist (budget.go)
	if o.queued == 0 {
		return
	}
	o.urlOrder = o.urlOrder[:0]
	for u, c := range o.urls {
		if c.ready(now) {
			o.urlOrder = append(o.urlOrder, u)
		}
	}
	slices.Sort(o.urlOrder)
	for _, u := range o.urlOrder {
		c := o.urls[u]
		var b replyBuilder
		var sent []*cbEntry
		clear(o.batchNums)
		kept := c.queue[:0]
		for _, e := range c.queue {
			switch {
			case group.Passed(e.until, now):
				if r.full() {
					kept = append(kept, e) // dropped at the next Tick (budget.go)
					continue
				}
				// R75: stop once the acknowledged messages have expired.
				r.del(outboxKey(e.seq))
				o.queued--
				r.event(Event{Kind: EventCallbackDropped, Group: group.ID{GroupID: e.groupID}, HasNumber: e.sequence,
					Number: e.from, Code: e.code, Label: "receiver.callback-expired"})
			case len(sent) < r.cfg.MaxCallbackBatch && o.admit(e):
				sent = append(sent, e)
				o.queued--
			default:
				kept = append(kept, e)
			}
		}
		clear(c.queue[len(kept):])
		c.queue = kept
		if len(sent) == 0 {
			r.maybeDropURL(u, c)
			continue
		}
		o.nextID++
		id := o.nextID
		for _, e := range sent {
			e.inFlight = id
			b.add(replyItem{groupID: e.groupID, sequence: e.sequence, from: e.from, to: e.to, code: e.code})
		}
		c.inFlight++
		o.flights[id] = &flight{url: u, entries: sent}
		r.rd.Callbacks = append(r.rd.Callbacks, Callback{ID: id, URL: u, Reply: b.buildFresh(r.cfg.Dialect)})
	}
}

// cbNum is one number of one group in a callback batch.
type cbNum struct {
	groupID  string
	sequence bool
	n        uint64
}

// cbStatus is what a batch says about one number so far.
type cbStatus struct {
	code faults.Code
	// blocked: a later entry about the number waits for the next batch,
	// so every later one does too (recorded order).
	blocked bool
}

// admit reports whether e may join the batch being built. One batch says
// one thing per number, a fault winning over an ack (reply.go); an entry
// that would be hidden there (an ack or another fault after a fault, as
// when a refused number is accepted, then discarded) waits for the next
// batch, so that no fault is lost (D13, R74, sim seed 201976).
func (o *outbox) admit(e *cbEntry) bool {
	if e.from != e.to {
		return true // entries are single numbers; a range is never hidden whole
	}
	if o.batchNums == nil {
		o.batchNums = map[cbNum]cbStatus{}
	}
	k := cbNum{e.groupID, e.sequence, e.from}
	st, seen := o.batchNums[k]
	switch {
	case !seen:
		o.batchNums[k] = cbStatus{code: e.code}
		return true
	case st.blocked:
		return false
	case st.code == 0 || st.code == e.code:
		st.code = e.code // an ack is superseded by what follows it
		o.batchNums[k] = st
		return true
	}
	st.blocked = true
	o.batchNums[k] = st
	return false
}

func (r *Receiver) maybeDropURL(u string, c *cbURL) {
	if len(c.queue) == 0 && c.inFlight == 0 {
		r.dropURLState(c)
		delete(r.out.urls, u)
	}
}

// oneShot emits a callback that is not retried (a poll answer, R80).
func (r *Receiver) oneShot(url string, rep Reply) {
	r.out.nextID++
	id := r.out.nextID
	r.out.flights[id] = &flight{url: url}
	r.rd.Callbacks = append(r.rd.Callbacks, Callback{ID: id, URL: url, Reply: rep})
}

// CallbackResult reports whether the callback POST id was accepted (HTTP
// 2xx). Accepted entries are forgotten; failed ones are retried with
// Config.CallbackRetry until they expire (R75).
func (r *Receiver) CallbackResult(now time.Time, id CallbackRef, ok bool) Ready {
	r.begin()
	f := r.out.flights[id]
	if f == nil {
		r.event(Event{Kind: EventIgnored, Label: "receiver.callback-unknown"})
		return r.finish(now)
	}
	delete(r.out.flights, id)
	if f.entries == nil {
		return r.finish(now)
	}
	c := r.out.url(f.url)
	c.inFlight--
	if ok {
		for _, e := range f.entries {
			r.del(outboxKey(e.seq))
		}
		c.attempts, c.retryAt = 0, time.Time{}
		r.dropURLState(c)
	} else {
		c.attempts++
		c.retryAt = now.Add(r.cfg.CallbackRetry.Delay(c.attempts))
		r.putURLState(f.url, c) // a recovered Receiver keeps the back-off
		for _, e := range f.entries {
			e.inFlight = 0
		}
		c.queue = append(c.queue, f.entries...)
		slices.SortFunc(c.queue, func(a, b *cbEntry) int { return cmpU64(a.seq, b.seq) })
		r.out.queued += len(f.entries)
	}
	r.maybeDropURL(f.url, c)
	return r.finish(now)
}

// usableURL reports whether u is an absolute http or https URL with a host
// (R19, R63).
func usableURL(u string) bool {
	l := strings.ToLower(u)
	var rest string
	switch {
	case strings.HasPrefix(l, "http://"):
		rest = u[len("http://"):]
	case strings.HasPrefix(l, "https://"):
		rest = u[len("https://"):]
	default:
		return false
	}
	for i := 0; i < len(u); i++ {
		if u[i] <= ' ' || u[i] == 0x7f {
			return false
		}
	}
	host := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host = rest[:i]
	}
	return host != "" && host[0] != ':' && host[0] != '@'
}
