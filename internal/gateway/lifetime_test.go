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
		resp, err := http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(c.body))
		require.NoError(t, err)
		var got struct{ Error, Field string }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, c.body)
		require.Equal(t, c.field, got.Field, c.body)
		require.Contains(t, got.Error, "max-lifetime", c.body)
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
