package gateway

import (
	"encoding/json"
	"flag"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSubmitRefusesLifetimesBeyondMaxLifetime: POST /v1/messages answers
// 400 naming the field for an expiry, a group expiry or an idle duration
// beyond -max-lifetime (#18 item 3), including xsd:durations whose year
// would overflow; within it the message is accepted.
func TestSubmitRefusesLifetimesBeyondMaxLifetime(t *testing.T) {
	s := startLocal(t, func(c *Config) { c.MaxLifetime = 24 * time.Hour })
	far := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	cases := []struct{ body, field string }{
		{`{"to":"http://127.0.0.1:1/rmp","body":"<x/>","expiresIn":"25h"}`, "expiresIn"},
		{`{"to":"http://127.0.0.1:1/rmp","body":"<x/>","expiryTime":"9999-12-31T23:59:59Z"}`, "expiryTime"},
		{`{"to":"http://127.0.0.1:1/rmp","body":"<x/>","group":"k","groupExpiryTime":"` + far + `"}`, "groupExpiryTime"},
		{`{"to":"http://127.0.0.1:1/rmp","body":"<x/>","group":"k","groupMaxIdle":"P99999999999Y"}`, "groupMaxIdle"},
		{`{"to":"http://127.0.0.1:1/rmp","body":"<x/>","group":"k","groupMaxIdle":"P2D"}`, "groupMaxIdle"},
		{`{"to":"http://127.0.0.1:1/rmp","body":"<x/>","group":"k","groupMaxIdle":"25h"}`, "groupMaxIdle"},
	}
	for _, c := range cases {
		requireSubmit400(t, s.URL(), c.body, c.field, "max-lifetime")
	}
	resp, err := http.Post(s.URL()+"/v1/messages", "application/json",
		strings.NewReader(`{"to":"http://127.0.0.1:1/rmp","body":"<x/>","group":"k","expiresIn":"1h","groupMaxIdle":"PT23H"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
}

func TestLifetimeFlags(t *testing.T) {
	c := DefaultConfig()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c.RegisterFlags(fs)
	require.Equal(t, 7*24*time.Hour, c.MaxLifetime)
	require.Equal(t, 10000, c.MaxOpenGroupsPerPeer)
	require.NoError(t, fs.Parse([]string{"-max-lifetime", "30m", "-max-open-groups-per-peer", "5"}))
	require.Equal(t, 30*time.Minute, c.MaxLifetime)
	require.Equal(t, 5, c.MaxOpenGroupsPerPeer)
	require.ErrorContains(t, c.Validate(), "-default-expires-in (1h0m0s) must not exceed -max-lifetime")
	c.MaxLifetime = time.Hour
	require.NoError(t, c.Validate())
	rc := engineConfig(&c, "i").Receiver
	require.Equal(t, time.Hour, rc.MaxLifetime)
	require.Equal(t, 5, rc.MaxGroupsPerPeer)
}

// TestSubmitSenderRefusalsNameTheirField: a submission the gateway's own
// checks pass but the sender refuses (a group key beyond the sender's
// string limit) is 400 with the field the sender's FieldError names; the
// sender's rules (R07, R13, last, D10) keep their fields through the
// mapping, expiryTime reading expiresIn when the request gave that.
func TestSubmitSenderRefusalsNameTheirField(t *testing.T) {
	s := startLocal(t, func(*Config) {})
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	soon := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	cases := []struct{ body, field, rule string }{
		{`{"to":"http://127.0.0.1:1/rmp","body":"<x/>","group":"` + strings.Repeat("k", 5000) + `"}`, "group", "4096 bytes"},
		{`{"to":"http://127.0.0.1:1/rmp","body":"<x/>","ordered":true}`, "ordered", "(R07)"},
		{`{"to":"http://127.0.0.1:1/rmp","body":"<x/>","last":true}`, "last", "needs a group"},
		{`{"to":"http://127.0.0.1:1/rmp","body":"<x/>","group":"k","groupMaxIdle":"1m","groupExpiryTime":"` + soon + `"}`, "groupMaxIdle", "(R13)"},
		// R13 before -max-lifetime, as the gateway checked it before (serve_test).
		{`{"to":"http://127.0.0.1:1/rmp","body":"<x/>","group":"k","groupMaxIdle":"1m","groupExpiryTime":"2099-01-01T00:00:00Z"}`, "groupMaxIdle", "(R13)"},
		{`{"to":"http://127.0.0.1:1/rmp","body":"<x/>","expiryTime":"` + past + `"}`, "expiryTime", "has passed (D10)"},
		{`{"to":"http://127.0.0.1:1/rmp","body":"<x/>","group":"k","expiresIn":"2h","groupExpiryTime":"` + soon + `"}`, "expiresIn", "(R16)"},
	}
	for _, c := range cases {
		requireSubmit400(t, s.URL(), c.body, c.field, c.rule)
	}
}

// requireSubmit400 posts a submit body and requires a 400 naming field,
// its error containing text.
func requireSubmit400(t *testing.T, base, body, field, text string) {
	t.Helper()
	resp, err := http.Post(base+"/v1/messages", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	var got struct{ Error, Field string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	require.Equal(t, field, got.Field, body)
	require.Contains(t, got.Error, text, body)
}
