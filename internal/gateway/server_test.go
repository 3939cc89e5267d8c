package gateway

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// startLocal starts a pebble gateway on a free loopback port with edit
// applied to the defaults, stopped at the end of t.
func startLocal(t *testing.T, edit func(*Config)) *Server {
	t.Helper()
	cfg := loopbackConfig()
	cfg.Listen, cfg.DataDir = "127.0.0.1:0", t.TempDir()
	edit(&cfg)
	s, err := Start(cfg, Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s
}

// loopbackConfig is DefaultConfig with loopback destinations allowed:
// test gateways and their peers live there (#18: refused by default).
func loopbackConfig() Config {
	c := DefaultConfig()
	c.AllowOutbound = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	return c
}

func dialServer(t *testing.T, s *Server) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.ln.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// closedWithin reads c until the server closes it, or until limit passes
// (then it fails): a connection the server bounds ends well before.
func closedWithin(t *testing.T, c net.Conn, limit time.Duration, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(limit))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: still open after %s", what, limit)
	}
}

const healthzRequest = "GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n"

// TestServerClosesIdleKeepAlive: a keep-alive connection left idle after
// a request is closed after -idle-timeout (#18 item 6).
func TestServerClosesIdleKeepAlive(t *testing.T) {
	s := startLocal(t, func(c *Config) { c.IdleTimeout = 300 * time.Millisecond })
	c := dialServer(t, s)
	_, err := io.WriteString(c, healthzRequest)
	require.NoError(t, err)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	closedWithin(t, c, 5*time.Second, "idle keep-alive")
}

// TestServerClosesSlowBodyAndHeader: a body or a header trickled byte by
// byte is cut off after -read-timeout / -read-header-timeout (#18 item 6:
// slow bodies stayed open forever).
func TestServerClosesSlowBodyAndHeader(t *testing.T) {
	s := startLocal(t, func(c *Config) {
		c.ReadTimeout, c.ReadHeaderTimeout = 500*time.Millisecond, 300*time.Millisecond
	})
	trickle := func(c net.Conn, data string) {
		for i := 0; i < len(data); i++ {
			if _, err := c.Write([]byte{data[i]}); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	body := dialServer(t, s)
	_, err := io.WriteString(body, "POST /v1/messages HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
	require.NoError(t, err)
	go trickle(body, strings.Repeat(" ", 100000))
	header := dialServer(t, s)
	go trickle(header, "POST /rmp HTTP/1.1\r\nHost: gw\r\n"+strings.Repeat("X-Slow: 1\r\n", 5000))
	closedWithin(t, body, 5*time.Second, "slow body")
	closedWithin(t, header, 5*time.Second, "slow header")
}

// TestServerMaxConns: with -max-conns N, an N+1th connection is served
// only once one of the N closes; N connections left idle do not lock a new
// client out, since the idle and header timeouts close them (#18 item 6:
// 239 idle connections locked every new client out).
func TestServerMaxConns(t *testing.T) {
	const n = 3
	s := startLocal(t, func(c *Config) {
		c.MaxConns, c.IdleTimeout, c.ReadHeaderTimeout = n, time.Second, time.Second
	})
	answered := make(chan int, n+1)
	for i := range n + 1 {
		c := dialServer(t, s)
		go func() {
			if _, err := io.WriteString(c, healthzRequest); err != nil {
				return
			}
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				resp.Body.Close()
				answered <- i
			}
		}()
	}
	for range n {
		select {
		case <-answered:
		case <-time.After(5 * time.Second):
			t.Fatal("the first connections were not served")
		}
	}
	select {
	case <-answered:
		t.Fatalf("%d connections served at once under -max-conns %d", n+1, n)
	case <-time.After(300 * time.Millisecond):
	}
	select {
	case <-answered: // one of the first went idle past -idle-timeout
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting connection was never served")
	}

	// N+1 silent connections, then a well-behaved client.
	for range n + 1 {
		dialServer(t, s)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(s.URL() + "/healthz")
	require.NoError(t, err, "a new client was locked out by idle connections")
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
}

// TestFlagsConnectionBounds: the connection flags parse, default and
// validate.
func TestFlagsConnectionBounds(t *testing.T) {
	c := DefaultConfig()
	require.Equal(t, 1024, c.MaxConns)
	require.Greater(t, c.WriteTimeout, c.ReadTimeout, "a response's deadline covers reading its body")
	require.Greater(t, c.WriteTimeout, 30*time.Second, "and the deliver client's timeout, for a business response (R73)")
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.RegisterFlags(fs)
	require.NoError(t, fs.Parse([]string{"-max-conns", "7", "-idle-timeout", "5s", "-read-timeout", "9s",
		"-write-timeout", "3m", "-read-header-timeout", "2s", "-max-header-bytes", "8KiB"}))
	require.Equal(t, Config{MaxConns: 7, IdleTimeout: 5 * time.Second, ReadTimeout: 9 * time.Second,
		WriteTimeout: 3 * time.Minute, ReadHeaderTimeout: 2 * time.Second, MaxHeaderBytes: 8 << 10},
		Config{MaxConns: c.MaxConns, IdleTimeout: c.IdleTimeout, ReadTimeout: c.ReadTimeout,
			WriteTimeout: c.WriteTimeout, ReadHeaderTimeout: c.ReadHeaderTimeout, MaxHeaderBytes: c.MaxHeaderBytes})
	c.WriteTimeout = c.ReadTimeout
	require.ErrorContains(t, c.Validate(), "-write-timeout (9s) must exceed -read-timeout (9s)")
	c.MaxConns = 0
	require.ErrorContains(t, c.Validate(), "-max-conns must be positive")
}
