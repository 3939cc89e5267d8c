package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// submitKeyed POSTs body to /v1/messages with an Idempotency-Key; the
// status and the answer's id.
func submitKeyed(t *testing.T, base, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set(HeaderIdempotencyKey, key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var ans SubmitAnswer
	json.NewDecoder(resp.Body).Decode(&ans)
	return resp.StatusCode, ans.ID
}

func submittedTotal(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "wsrkit_messages_submitted_total ") {
			return strings.TrimPrefix(l, "wsrkit_messages_submitted_total ")
		}
	}
	return ""
}

// TestSubmitIdempotencyKey: the same Idempotency-Key and request answer
// the first submission's 202 again, across a restart, without a second
// message; another request with the key is 422; past -idempotency-window,
// or once -max-idempotency-keys newer keys came, the key submits anew
// (#18 item 9).
func TestSubmitIdempotencyKey(t *testing.T) {
	dir := t.TempDir()
	start := func() *Server {
		s, err := Start(func() Config {
			c := loopbackConfig()
			c.Listen, c.DataDir, c.FakeClock = "127.0.0.1:0", dir, true
			c.FakeClockStart = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			c.MaxIdempotencyKeys = 3
			return c
		}(), Options{})
		require.NoError(t, err)
		return s
	}
	stop := func(s *Server) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, s.Shutdown(ctx))
	}
	const a = `{"to": "http://127.0.0.1:1/rmp", "body": "<m>a</m>"}`
	const aAgain = `{ "body":"<m>a</m>",   "to":"http://127.0.0.1:1/rmp" }`
	const b = `{"to": "http://127.0.0.1:1/rmp", "body": "<m>b</m>"}`

	s := start()
	st, id1 := submitKeyed(t, s.URL(), "k1", a)
	require.Equal(t, 202, st)
	st, id := submitKeyed(t, s.URL(), "k1", aAgain)
	require.Equal(t, 202, st)
	require.Equal(t, id1, id, "the same key and request: the first answer")
	st, _ = submitKeyed(t, s.URL(), `"k1"`, aAgain) // a structured-field string
	require.Equal(t, 202, st)
	st, _ = submitKeyed(t, s.URL(), "k1", b)
	require.Equal(t, http.StatusUnprocessableEntity, st, "another request with the key")
	require.Equal(t, "1", submittedTotal(t, s.URL()), "one message submitted")
	st, _ = submitKeyed(t, s.URL(), strings.Repeat("x", 256), a)
	require.Equal(t, 400, st, "a key over 255 characters")
	st, idNoKey := submitKeyed(t, s.URL(), "", a)
	require.Equal(t, 202, st)
	require.NotEqual(t, id1, idNoKey, "without a key every submit is a new message")
	stop(s)

	s = start()
	st, id = submitKeyed(t, s.URL(), "k1", a)
	require.Equal(t, 202, st)
	require.Equal(t, id1, id, "remembered across a restart")
	require.Equal(t, "0", submittedTotal(t, s.URL()))

	// The cap: three newer keys push k1 out before its window ends.
	ids := map[string]string{}
	for _, k := range []string{"k2", "k3", "k4"} {
		st, ids[k] = submitKeyed(t, s.URL(), k, a)
		require.Equal(t, 202, st)
	}
	st, id = submitKeyed(t, s.URL(), "k4", a)
	require.Equal(t, ids["k4"], id)
	st, id = submitKeyed(t, s.URL(), "k1", a)
	require.Equal(t, 202, st)
	require.NotEqual(t, id1, id, "beyond -max-idempotency-keys the oldest key is forgotten")

	// The window: 24h later every key submits anew.
	in, _ := json.Marshal(map[string]string{"advance": "24h"})
	resp, err := http.Post(s.URL()+"/v1/clock", "application/json", bytes.NewReader(in))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	st, id = submitKeyed(t, s.URL(), "k4", a)
	require.Equal(t, 202, st)
	require.NotEqual(t, ids["k4"], id, "past -idempotency-window the key submits anew")
	stop(s)
}

// While a keyed submission is in progress the key answers 409; a
// submission that was not accepted leaves the key unused.
func TestIdempotencyInFlight(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	d, err := openIdempotency(t.TempDir()+"/k.jsonl", time.Hour, 10, now)
	require.NoError(t, err)
	defer d.close()
	_, ok, err := d.begin("k", "p", now)
	require.NoError(t, err)
	require.False(t, ok)
	_, _, err = d.begin("k", "p", now)
	require.ErrorIs(t, err, errKeyInFlight)
	require.NoError(t, d.done("k", "p", nil, now)) // refused (e.g. 503): not remembered
	_, ok, err = d.begin("k", "p", now)
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, d.done("k", "p", &SubmitAnswer{ID: "x"}, now))
	ans, ok, err := d.begin("k", "p", now.Add(59*time.Minute))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "x", ans.ID)
}

// TestSubmitActionIsChecked: an action with a quote, a backslash, CR/LF or
// white space, or one that is no URI, is 400 with "field": "action"; a URI
// action is taken (#18 item 9: `"` went unescaped into SOAPAction).
func TestSubmitActionIsChecked(t *testing.T) {
	s := startLocal(t, func(*Config) {})
	for _, c := range []struct {
		action string
		want   int
	}{
		{`urn:a"b`, 400}, {"urn:a\r\nX-Injected: 1", 400}, {"urn:a\nb", 400}, {`urn:a\b`, 400},
		{"urn:a b", 400}, {"no-scheme", 400}, {"urn:wsrkit:ok", 202}, {"http://example.com/op#Place", 202},
	} {
		var e errorJSON
		st := postJSON(t, s.URL()+"/v1/messages", map[string]any{"to": "http://127.0.0.1:1/rmp", "body": "<m/>", "action": c.action}, &e)
		require.Equal(t, c.want, st, "%q: %s", c.action, e.Error)
		if st == 400 {
			require.Equal(t, "action", e.Field, e.Error)
		}
	}
}
