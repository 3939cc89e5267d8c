package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// The JSON API's shapes as the console reads them (README "HTTP API").

type groupJSON struct {
	GroupID      string      `json:"groupId"`
	Generation   uint64      `json:"generation"`
	Role         string      `json:"role"`
	State        string      `json:"state"`
	Ranges       [][2]uint64 `json:"ranges"`
	Held         int         `json:"held"`
	LastNumber   *uint64     `json:"lastNumber"`
	NextDeadline *string     `json:"nextDeadline"`
	LastActivity *string     `json:"lastActivity"`
	To           string      `json:"to"`
	Missing      [][2]uint64 `json:"missing"`
	Pending      []struct {
		ID          string  `json:"id"`
		Number      *uint64 `json:"number"`
		Attempts    int     `json:"attempts"`
		NextAttempt string  `json:"nextAttempt"`
		ExpiryTime  string  `json:"expiryTime"`
		LastError   string  `json:"lastError"`
	} `json:"pending"`
	PendingTotal int `json:"pendingTotal"`
}

type groupsJSON struct {
	Groups []groupJSON `json:"groups"`
	Total  int         `json:"total"`
	Next   *string     `json:"next"`
}

type messageJSON struct {
	ID        string  `json:"id"`
	GroupID   string  `json:"groupId"`
	Number    *uint64 `json:"number"`
	State     string  `json:"state"`
	Reason    string  `json:"reason"`
	Fault     string  `json:"fault"`
	Attempts  int     `json:"attempts"`
	LastError string  `json:"lastError"`
	Response  string  `json:"response"`
	At        string  `json:"at"`
}

type messagesJSON struct {
	Messages []messageJSON `json:"messages"`
	Total    int           `json:"total"`
	Next     *string       `json:"next"`
}

type peerJSON struct {
	To          string  `json:"to"`
	Reachable   *bool   `json:"reachable"`
	LastContact *string `json:"lastContact"`
	LastFailure *string `json:"lastFailure"`
	LastError   string  `json:"lastError"`
	Groups      int     `json:"groups"`
	Pending     int     `json:"pending"`
	Retrying    int     `json:"retrying"`
	NoAck       string  `json:"noAck"`
}

type minuteJSON struct {
	At        string `json:"at"`
	Submitted uint64 `json:"submitted"`
	Accepted  uint64 `json:"accepted"`
	Delivered uint64 `json:"delivered"`
	Failed    uint64 `json:"failed"`
}

type statsJSON struct {
	Now     string       `json:"now"`
	Minutes []minuteJSON `json:"minutes"`
	Totals  struct {
		Submitted, Accepted, Delivered, Acknowledged, Failed, Discarded, Duplicates, Retries uint64
	} `json:"totals"`
	Pending    int            `json:"pending"`
	Held       int            `json:"held"`
	OpenGroups map[string]int `json:"openGroups"`
	Faults     []struct {
		Code      string `json:"code"`
		Direction string `json:"direction"`
		Count     uint64 `json:"count"`
	} `json:"faults"`
	Store struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	} `json:"store"`
}

// apiError is an answer of the JSON API outside 2xx.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

// request is one page request: what it asks and with which token.
type request struct {
	c     *Console
	w     http.ResponseWriter
	r     *http.Request
	token string
}

// call makes an API request in process and decodes its JSON answer into
// out (nil: ignored).
func (q *request) call(method, path string, query url.Values, out any) error {
	u := path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(q.r.Context(), method, u, nil)
	if err != nil {
		return err
	}
	req.RemoteAddr = q.r.RemoteAddr
	req.TLS = q.r.TLS
	if q.token != "" {
		req.Header.Set("Authorization", "Bearer "+q.token)
	}
	rec := &recorder{header: http.Header{}}
	q.c.cfg.API.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if rec.status/100 != 2 {
		var e struct {
			Error string `json:"error"`
		}
		json.Unmarshal(rec.body.Bytes(), &e)
		if e.Error == "" {
			e.Error = fmt.Sprintf("%s %s: HTTP %d", method, path, rec.status)
		}
		return &apiError{status: rec.status, msg: e.Error}
	}
	if out == nil || rec.status == http.StatusNoContent {
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(&rec.body, 64<<20)).Decode(out); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

// recorder collects an in-process answer.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}
