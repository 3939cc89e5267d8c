package gateway

import (
	"encoding/json"
	"sync"
)

// Record is the last outcome of one submitted message as the gateway keeps
// it once the outcome was handled (D27): GET /v1/messages/{id} answers
// from it when the sending RMP no longer holds the message.
type Record struct {
	ID      string  `json:"id"`
	GroupID string  `json:"groupId"`
	Number  *uint64 `json:"number"`
	Outcome string  `json:"outcome"`
	Reason  string  `json:"reason"`
	Fault   string  `json:"fault"`
	// Attempts counts transmissions when the outcome was reported.
	Attempts int `json:"attempts,omitempty"`
	// Response is the business response of an acknowledged message (R73)
	// when it is at most maxRecordResponse bytes.
	Response string `json:"response,omitempty"`
	// At is when the outcome was recorded (the gateway's clock, RFC 3339);
	// absent from records written before #21.
	At string `json:"at,omitempty"`
}

// Bounds on the business responses the records keep: one larger than
// maxRecordResponse is left out of its record (the -notify POST still
// carries it); past maxRecordResponses in all, the oldest records go.
const (
	maxRecordResponse  = maxBusinessResponse
	maxRecordResponses = 64 << 20
)

// records is a bounded map of Records, appended to a JSON-lines file
// (synced per record) so that they survive a restart. Invariant: len(byID)
// <= max, and order lists byID's keys oldest first (the eviction order).
type records struct {
	mu    sync.Mutex
	max   int
	byID  map[string]Record
	order []string
	file  jsonlFile // no file: memory only
	bytes int       // sum of len(Response) over byID
}

func openRecords(path string, max int) (*records, error) {
	r := &records{max: max, byID: map[string]Record{}}
	if path == "" {
		return r, nil
	}
	err := readJSONL(path, 8<<20, func(line []byte) { // a record with a 1 MiB response, JSON-escaped
		var rec Record
		if json.Unmarshal(line, &rec) != nil || rec.ID == "" {
			return // a torn last line after a crash
		}
		r.putLocked(rec)
	})
	if err != nil {
		return nil, err
	}
	if err := r.rewrite(path); err != nil {
		return nil, err
	}
	return r, nil
}

// rewrite compacts the file to the records held.
func (r *records) rewrite(path string) error {
	return r.file.rewrite(path, func(put func(any)) {
		for _, id := range r.order {
			put(r.byID[id])
		}
	})
}

func (r *records) putLocked(rec Record) {
	if len(rec.Response) > maxRecordResponse {
		rec.Response = ""
	}
	if old, ok := r.byID[rec.ID]; !ok {
		r.order = append(r.order, rec.ID)
	} else {
		r.bytes -= len(old.Response)
	}
	r.byID[rec.ID] = rec
	r.bytes += len(rec.Response)
	for len(r.order) > r.max || r.bytes > maxRecordResponses {
		r.bytes -= len(r.byID[r.order[0]].Response)
		delete(r.byID, r.order[0])
		r.order = r.order[1:]
	}
}

// put records rec durably; a message acknowledged and later failed (D12,
// D13) keeps its last outcome.
func (r *records) put(rec Record) error { return r.putAll([]Record{rec}) }

// putAll records recs durably with one sync, in order.
func (r *records) putAll(recs []Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var buf []byte
	for _, rec := range recs {
		r.putLocked(rec)
		b, _ := json.Marshal(rec)
		buf = append(append(buf, b...), '\n')
	}
	return r.file.append(buf, len(recs), r.max, r.rewrite, "outcome records")
}

func (r *records) get(id string) (Record, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.byID[id]
	return rec, ok
}

// list returns up to limit records that match, newest first, starting
// after the record whose id is after ("" from the newest); next is the id
// to pass as after for the next page ("" on the last), total counts every
// record that matches.
func (r *records) list(match func(*Record) bool, after string, limit int) (page []Record, next string, total int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	started := after == ""
	for i := len(r.order) - 1; i >= 0; i-- {
		rec := r.byID[r.order[i]]
		if match(&rec) {
			total++
			switch {
			case !started:
			case len(page) < limit:
				page = append(page, rec)
			case next == "":
				next = page[len(page)-1].ID
			}
		}
		if rec.ID == after {
			started = true
		}
	}
	return page, next, total
}

func (r *records) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.file.close()
}
