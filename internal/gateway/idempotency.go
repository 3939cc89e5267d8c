package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// HeaderIdempotencyKey names a submission (IETF httpapi
// Idempotency-Key): the same key within -idempotency-window answers the
// first submission's 202 again instead of submitting a second message.
const HeaderIdempotencyKey = "Idempotency-Key"

// maxIdempotencyKey bounds a key's length (the draft suggests a UUID).
const maxIdempotencyKey = 255

// idemEntry is one remembered submission: its key, a fingerprint of the
// request it came with, its answer, and when it was first made.
type idemEntry struct {
	Key     string       `json:"key"`
	Print   string       `json:"print"` // sha256 of the decoded request, hex
	Answer  SubmitAnswer `json:"answer"`
	At      time.Time    `json:"at"`
	evicted bool
}

// idempotency remembers keyed submissions for a window, at most max of
// them, in a JSON-lines file synced per key (as outcomes.jsonl is) so a
// restart keeps them; compacted once it holds twice max lines. At the cap
// the oldest key is forgotten before its window ends: a retry with it
// then submits a new message (size -max-idempotency-keys to the window
// times the keyed submit rate).
type idempotency struct {
	mu       sync.Mutex
	window   time.Duration
	max      int
	byKey    map[string]*idemEntry
	order    []*idemEntry // oldest first; evicted or expired entries are skipped
	inFlight map[string]bool
	file     jsonlFile
}

var (
	errKeyInFlight  = errors.New("a submission with this Idempotency-Key is in progress; retry later")
	errKeyDifferent = errors.New("this Idempotency-Key was used for a different request")
)

func openIdempotency(path string, window time.Duration, max int, now time.Time) (*idempotency, error) {
	d := &idempotency{window: window, max: max, byKey: map[string]*idemEntry{}, inFlight: map[string]bool{}}
	err := readJSONL(path, 64<<10, func(line []byte) {
		var e idemEntry
		if json.Unmarshal(line, &e) != nil || e.Key == "" {
			return // a torn last line after a crash
		}
		d.putLocked(&e)
	})
	if err != nil {
		return nil, err
	}
	d.expireLocked(now)
	if err := d.rewrite(path); err != nil {
		return nil, err
	}
	return d, nil
}

// begin looks key up at now: a remembered answer for the same print, an
// error for another print or a key in flight, or (false, nil) when the
// caller is to submit and then call done.
func (d *idempotency) begin(key, print string, now time.Time) (SubmitAnswer, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.expireLocked(now)
	if e, ok := d.byKey[key]; ok {
		if e.Print != print {
			return SubmitAnswer{}, false, errKeyDifferent
		}
		return e.Answer, true, nil
	}
	if d.inFlight[key] {
		return SubmitAnswer{}, false, errKeyInFlight
	}
	d.inFlight[key] = true
	return SubmitAnswer{}, false, nil
}

// done ends begin's flight; with an answer (a 202) the key is remembered
// durably before the caller answers.
func (d *idempotency) done(key, print string, ans *SubmitAnswer, now time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.inFlight, key)
	if ans == nil {
		return nil
	}
	e := &idemEntry{Key: key, Print: print, Answer: *ans, At: now.UTC()}
	d.putLocked(e)
	b, _ := json.Marshal(e)
	return d.file.append(append(b, '\n'), 1, d.max, d.rewrite, "idempotency keys")
}

func (d *idempotency) putLocked(e *idemEntry) {
	if old, ok := d.byKey[e.Key]; ok {
		old.evicted = true
	}
	d.byKey[e.Key] = e
	d.order = append(d.order, e)
	for len(d.byKey) > d.max {
		d.dropOldestLocked()
	}
}

func (d *idempotency) dropOldestLocked() {
	e := d.order[0]
	d.order[0] = nil
	d.order = d.order[1:]
	if !e.evicted {
		delete(d.byKey, e.Key)
	}
}

// expireLocked forgets the keys whose window ended by now.
func (d *idempotency) expireLocked(now time.Time) {
	for len(d.order) > 0 && (d.order[0].evicted || !now.Before(d.order[0].At.Add(d.window))) {
		d.dropOldestLocked()
	}
}

// rewrite compacts the file to the keys held.
func (d *idempotency) rewrite(path string) error {
	return d.file.rewrite(path, func(put func(any)) {
		for _, e := range d.order {
			if !e.evicted {
				put(e)
			}
		}
	})
}

func (d *idempotency) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.file.close()
}

// idempotencyKey reads the request's Idempotency-Key: "" when absent; a
// structured-field string ("…") loses its quotes. A key must be 1 to 255
// printable ASCII characters.
func idempotencyKey(r *http.Request) (string, error) {
	vs := r.Header.Values(HeaderIdempotencyKey)
	if len(vs) == 0 {
		return "", nil
	}
	if len(vs) > 1 {
		return "", errors.New("Idempotency-Key: give one key")
	}
	k := vs[0]
	if len(k) >= 2 && k[0] == '"' && k[len(k)-1] == '"' {
		if u, err := strconv.Unquote(k); err == nil {
			k = u
		}
	}
	if k == "" || len(k) > maxIdempotencyKey {
		return "", fmt.Errorf("Idempotency-Key: want 1 to %d characters", maxIdempotencyKey)
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return "", errors.New("Idempotency-Key: printable ASCII only")
		}
	}
	return k, nil
}

// requestPrint fingerprints a decoded submit request: the same request
// re-encoded (other white space, key order) has the same print.
func requestPrint(req *SubmitRequest) string {
	b, _ := json.Marshal(req)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
