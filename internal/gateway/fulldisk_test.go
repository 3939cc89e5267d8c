package gateway

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/soap"
	"github.com/wsrkit/wsrkit/store/pebblestore"
)

// postSingleton POSTs a singleton reliable message with an incompressible
// body to /rmp and returns the status and whether the answer acknowledges it.
func postSingleton(t *testing.T, c *http.Client, base, gid string, rng *rand.Rand) (int, bool) {
	t.Helper()
	raw := make([]byte, 32<<10)
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	env, err := soap.AppendRequestEnvelope(nil, soap.SOAP11, &soap.Request{
		MessageID:    soap.MessageID{GroupID: gid},
		ExpiryTime:   time.Now().Add(time.Hour).UTC().Truncate(time.Second),
		ReplyPattern: soap.ReplyPattern{Value: group.ReplyResponse},
		Flags:        group.Flags{AckRequested: true, DuplicateElimination: true},
	}, []byte("<x>"+hex.EncodeToString(raw)+"</x>"))
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, base+"/rmp", bytes.NewReader(env))
	require.NoError(t, err)
	req.Header.Set("Content-Type", soap.ContentTypeSOAP11)
	req.Header.Set("SOAPAction", `""`)
	resp, err := c.Do(req)
	require.NoError(t, err, "the gateway must answer, not hang")
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.StatusCode == http.StatusOK && strings.Contains(string(b), "NonSequenceReply") && !strings.Contains(string(b), "fault=")
}

// TestFullDiskAnswers503ThenExitsOnceSpaceIsBack: a full disk (ENOSPC on
// every new block) stops the store: /rmp and /healthz answer 503 without
// hanging, the gateway stays up while the disk is full, reports on
// StoreFailed once it takes writes again, shuts down in bounded time, and
// a restart holds every message it acknowledged (#18 item 8).
func TestFullDiskAnswers503ThenExitsOnceSpaceIsBack(t *testing.T) {
	var disk pebblestore.FullDisk
	cfg := DefaultConfig()
	cfg.Listen, cfg.DataDir = "127.0.0.1:0", t.TempDir()
	s, err := Start(cfg, Options{Pebble: func(o *pebblestore.Options) { *o = disk.Wrap(*o) }})
	require.NoError(t, err)
	c := &http.Client{Timeout: 10 * time.Second}
	rng := rand.New(rand.NewPCG(1, 2))
	acked := 0
	post := func() int {
		st, ok := postSingleton(t, c, s.URL(), fmt.Sprintf("urn:full:%d", acked), rng)
		if ok {
			acked++
		}
		return st
	}
	for range 3 {
		require.Equal(t, http.StatusOK, post())
	}
	disk.Fill()
	refused := false
	for range 1000 { // 64 KiB each: a memtable is 4 MiB
		if st := post(); st == http.StatusServiceUnavailable {
			refused = true
			break
		}
	}
	require.True(t, refused, "a full disk must end in 503s (%d writes refused, %d acknowledged)", disk.Refused(), acked)
	require.Equal(t, http.StatusServiceUnavailable, post())
	resp, err := c.Get(s.URL() + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	select {
	case err := <-s.StoreFailed():
		t.Fatalf("reported while the disk is still full: %v", err)
	case <-time.After(2 * storeProbeInterval):
	}
	disk.Free()
	select {
	case err := <-s.StoreFailed():
		require.ErrorIs(t, err, ErrStoreFailed)
		require.Contains(t, err.Error(), "no space left on device")
	case <-time.After(30 * time.Second):
		t.Fatal("no report once the disk takes writes again")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() { s.Shutdown(ctx); close(done) }() //nolint:errcheck // the store's failure
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("shutdown after a store failure took over 15 s")
	}
	// The restart (what a supervisor does) holds every acknowledged message.
	r, err := Start(cfg, Options{})
	require.NoError(t, err)
	defer r.Shutdown(context.Background()) //nolint:errcheck
	var in struct{ Messages []json.RawMessage }
	require.Eventually(t, func() bool {
		resp, err := c.Get(r.URL() + "/v1/inbox")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		in.Messages = nil
		json.NewDecoder(resp.Body).Decode(&in) //nolint:errcheck
		return len(in.Messages) >= acked
	}, 20*time.Second, 50*time.Millisecond, "acknowledged %d, in the inbox after the restart %d", acked, len(in.Messages))
	t.Logf("%d messages acknowledged; %d writes refused", acked, disk.Refused())
}
