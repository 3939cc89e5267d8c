package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/internal/gateway"
	"github.com/wsrkit/wsrkit/store/etcdstore"
	"github.com/wsrkit/wsrkit/store/etcdstore/etcdtest"
)

// lockedBuffer is serve's stderr, read by the test while serve writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// pendingServe is a serve started in the background: ready delivers its
// server once it holds the etcd claim (a standby waits).
type pendingServe struct {
	ready  chan *gateway.Server
	stop   chan struct{}
	status chan int
	stderr *lockedBuffer
	once   sync.Once
}

func startServeAsync(t *testing.T, args ...string) *pendingServe {
	t.Helper()
	p := &pendingServe{ready: make(chan *gateway.Server, 1), stop: make(chan struct{}), status: make(chan int, 1), stderr: &lockedBuffer{}}
	go func() {
		p.status <- serve(append([]string{"-listen", "127.0.0.1:0", "-log", "info", "-allow-outbound", loopbackRanges}, args...), p.stderr,
			func(srv *gateway.Server) <-chan struct{} { p.ready <- srv; return p.stop })
	}()
	t.Cleanup(func() {
		p.halt()
		select {
		case <-p.status:
		case <-time.After(15 * time.Second):
			t.Errorf("serve did not stop: %s", p.stderr.String())
		}
	})
	return p
}

func (p *pendingServe) halt() { p.once.Do(func() { close(p.stop) }) }

func (p *pendingServe) server(t *testing.T, within time.Duration) *gateway.Server {
	t.Helper()
	select {
	case s := <-p.ready:
		return s
	case st := <-p.status:
		t.Fatalf("serve exited with %d: %s", st, p.stderr.String())
	case <-time.After(within):
		t.Fatalf("serve did not become active within %s: %s", within, p.stderr.String())
	}
	return nil
}

// TestServeEtcd runs `wsrkit serve -store etcd` against a 3-member embedded
// cluster: a lone instance holds every shard claim and keeps its group
// state in etcd (not under -data); with -shards 1, a second instance holds
// nothing while the first lives and takes over the pending work when it
// dies.
func TestServeEtcd(t *testing.T) {
	cluster := etcdtest.StartTB(t, etcdtest.Options{Members: 3})
	eps := strings.Join(cluster.Endpoints, ",")

	t.Run("active instance sends and is acknowledged", func(t *testing.T) {
		sink := &notifySink{}
		ns := httptest.NewServer(sink)
		defer ns.Close()
		recv := startServe(t, "-data", t.TempDir())
		dir := t.TempDir()
		a := startServeAsync(t, "-data", dir, "-store", "etcd", "-etcd-endpoints", eps, "-etcd-prefix", "/t1/",
			"-node-id", "a", "-notify", ns.URL, "-retry-interval", "200ms").server(t, 20*time.Second)

		st, m, e := submit(t, a.URL(), map[string]any{"to": recv.URL() + "/rmp", "group": "g", "ordered": true,
			"ack": true, "dupElim": true, "replyPattern": "Response", "expiresIn": "1m", "body": "<x>etcd</x>"})
		require.Equal(t, 202, st, e)
		require.Eventually(t, func() bool { return len(sink.byID(m.ID)) == 1 }, 10*time.Second, 10*time.Millisecond)
		require.Equal(t, "acknowledged", sink.byID(m.ID)[0].Outcome)
		var in inboxList
		require.Equal(t, 200, do(t, "GET", recv.URL()+"/v1/inbox", nil, &in))
		require.Len(t, in.Messages, 1)
		require.Contains(t, in.Messages[0].Body, "<x>etcd</x>")

		// Group state is in etcd: no pebble store under -data; every shard
		// is held by node "a", so another owner cannot take one.
		_, err := os.Stat(filepath.Join(dir, "store"))
		require.ErrorIs(t, err, os.ErrNotExist)
		base, err := etcdstore.Open(etcdstore.Options{Endpoints: cluster.Endpoints, Prefix: "/t1/"})
		require.NoError(t, err)
		defer base.Close()
		other, err := etcdstore.NewOwner(base, "probe", time.Second)
		require.NoError(t, err)
		defer other.Close()
		for _, shard := range []int{0, 7, 15} { // the default -shards 16
			s, err := etcdstore.Open(etcdstore.Options{Client: base.Client(), Prefix: fmt.Sprintf("/t1/shard/%d/", shard)})
			require.NoError(t, err)
			_, err = other.In(s).TryAcquire(context.Background(), "shard")
			require.ErrorIs(t, err, etcdstore.ErrOwned)
			require.Contains(t, err.Error(), `node "a"`)
		}
	})

	t.Run("another instance takes over pending work", func(t *testing.T) {
		sink := &notifySink{}
		ns := httptest.NewServer(sink)
		defer ns.Close()
		recv := startServe(t, "-data", t.TempDir())
		var up atomic.Bool // the receiver is unreachable until the takeover
		front := dropProxy(t, recv.URL, func([]byte) bool { return !up.Load() })
		common := []string{"-store", "etcd", "-etcd-endpoints", eps, "-etcd-prefix", "/t2/", "-lease-ttl", "2s", "-shards", "1", "-balance-interval", "200ms",
			"-notify", ns.URL, "-retry-interval", "100ms", "-retry-max-interval", "300ms", "-max-retries", "1000"}
		pa := startServeAsync(t, append([]string{"-data", t.TempDir(), "-node-id", "a"}, common...)...)
		a := pa.server(t, 20*time.Second)
		st, m, e := submit(t, a.URL(), map[string]any{"to": front.URL + "/rmp", "group": "g", "ordered": true,
			"ack": true, "dupElim": true, "replyPattern": "Response", "expiresIn": "5m", "body": "<x>kept</x>"})
		require.Equal(t, 202, st, e)

		pb := startServeAsync(t, append([]string{"-data", t.TempDir(), "-node-id", "b"}, common...)...)
		b := pb.server(t, 20*time.Second)
		// The one shard is a's: b holds nothing and forwards to a.
		time.Sleep(500 * time.Millisecond) // a few balance steps of b
		require.NotContains(t, pb.stderr.String(), "holding shard")
		var ms gateway.MessageStatus
		require.Equal(t, 200, do(t, "GET", b.URL()+"/v1/messages/"+m.ID, nil, &ms))
		require.Equal(t, "pending", ms.State)

		// a's etcd client goes away without revoking the lease, which
		// expires after the TTL; a stops with one clear line.
		a.Gateway.Kill()
		select {
		case st := <-pa.status:
			require.Equal(t, 1, st)
			require.Contains(t, pa.stderr.String(), "wsrkit serve: stopping: gateway: etcd ownership lost")
			var lines []string
			for _, l := range strings.Split(pa.stderr.String(), "\n") {
				if strings.HasPrefix(l, "wsrkit serve:") {
					lines = append(lines, l)
				}
			}
			require.Len(t, lines, 1, "one clear line: %s", pa.stderr.String())
		case <-time.After(10 * time.Second):
			t.Fatalf("a did not stop after losing its lease: %s", pa.stderr.String())
		}
		pa.status <- 1 // for the cleanup

		require.Eventually(t, func() bool { return strings.Contains(pb.stderr.String(), "holding shard") }, 15*time.Second, 20*time.Millisecond)
		up.Store(true)
		require.Eventually(t, func() bool { return len(sink.byID(m.ID)) == 1 }, 10*time.Second, 10*time.Millisecond)
		require.Equal(t, "acknowledged", sink.byID(m.ID)[0].Outcome)
		var in inboxList
		require.Equal(t, 200, do(t, "GET", recv.URL()+"/v1/inbox", nil, &in))
		require.Len(t, in.Messages, 1)
		require.Contains(t, in.Messages[0].Body, "<x>kept</x>")
		// b's sending RMP answers for the message it finished.
		require.Equal(t, 200, do(t, "GET", b.URL()+"/v1/messages/"+m.ID, nil, &ms))
		require.Equal(t, "acknowledged", ms.State)
	})
}

// TestServeStoreFlags: bad -store settings and an unreachable cluster are
// one line and a non-zero exit.
func TestServeStoreFlags(t *testing.T) {
	cases := []struct {
		args   []string
		status int
		stderr string
	}{
		{[]string{"-store", "mem"}, 1, `-store must be pebble or etcd, got "mem"`},
		{[]string{"-store", "etcd"}, 1, "-store etcd needs -etcd-endpoints"},
		{[]string{"-etcd-endpoints", "nohost"}, 2, `invalid endpoint "nohost": want host:port`},
		{[]string{"-store", "etcd", "-etcd-endpoints", "127.0.0.1:1", "-lease-ttl", "0s"}, 1, "-lease-ttl must be positive"},
		{[]string{"-store", "etcd", "-etcd-endpoints", "127.0.0.1:1", "-node-id", ""}, 1, "-node-id must not be empty"},
		// No member answers: a bounded failure, not a hang in the lease grant.
		{[]string{"-store", "etcd", "-etcd-endpoints", "127.0.0.1:1", "-etcd-timeout", "300ms"}, 1, "wsrkit serve: opening store: etcd 127.0.0.1:1:"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		args := append([]string{"serve", "-listen", "127.0.0.1:0", "-data", t.TempDir()}, c.args...)
		if got := run(args, &out, &errb); got != c.status {
			t.Errorf("run(%q) = %d, want %d (stderr %q)", c.args, got, c.status, errb.String())
		}
		if !strings.Contains(errb.String(), c.stderr) {
			t.Errorf("run(%q) stderr = %q, want it to contain %q", c.args, errb.String(), c.stderr)
		}
	}
}
