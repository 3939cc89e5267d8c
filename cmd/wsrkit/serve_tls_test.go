//go:build unix

package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/internal/testpki"
)

// padded writes b to path padded with newlines to size bytes (PEM readers
// skip them), so that a replaced file keeps its size.
func padded(t *testing.T, path string, b []byte, size int) {
	t.Helper()
	require.Less(t, len(b), size)
	require.NoError(t, os.WriteFile(path, append(b, bytes.Repeat([]byte("\n"), size-len(b))...), 0o600))
}

// tlsGet sends GET path on an open TLS connection and returns the status.
func tlsGet(t *testing.T, c *tls.Conn, br *bufio.Reader, path, token string) int {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer %s\r\n\r\n", path, token)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// TestServeReloadsCertificateOnSIGHUP: a real `wsrkit serve` under mutual
// TLS gets new certificate files (same size and mtime, so only the signal
// can tell) and SIGHUP: new handshakes get the new certificate, a
// connection opened before stays up and keeps being served, the process
// goes on. Its log, at debug, never holds the admin token, the private
// key or a message body (#19 items 1, 5).
func TestServeReloadsCertificateOnSIGHUP(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "ca")
	caFile := ca.WriteCA(t, dir, "ca.crt")
	certFile, keyFile := filepath.Join(dir, "gw.crt"), filepath.Join(dir, "gw.key")
	one, two := ca.Server(t, "one"), ca.Server(t, "two")
	padded(t, certFile, one.CertPEM, 4096)
	padded(t, keyFile, one.KeyPEM, 1024)
	const token = "tok-5e7e6a1b9c3d"
	tokenFile := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(token+"\n"), 0o600))
	p := startServeProc(t, "-data", filepath.Join(dir, "data"), "-log", "debug",
		"-tls-cert", certFile, "-tls-key", keyFile, "-tls-client-ca", caFile, "-admin-token-file", tokenFile)
	require.True(t, strings.HasPrefix(p.url, "https://"), p.url)
	addr := strings.TrimPrefix(p.url, "https://")
	operator := testpki.ClientConfig(ca.Pool(), ca.Client(t, "operator"))
	dial := func() (*tls.Conn, *bufio.Reader, string) {
		c, err := tls.Dial("tcp", addr, operator.Clone())
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c), c.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	kept, keptR, cn := dial()
	require.Equal(t, "one", cn)
	require.Equal(t, 200, tlsGet(t, kept, keptR, "/v1/groups", token))
	require.Equal(t, 401, tlsGet(t, kept, keptR, "/v1/groups", "wrong-"+token))

	// A message whose body the log must not show, sent to a black hole.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: operator.Clone()}, Timeout: 10 * time.Second}
	req, _ := http.NewRequest("POST", p.url+"/v1/messages", strings.NewReader(
		`{"to":"http://127.0.0.1:1/rmp","ack":true,"body":"<m xmlns='urn:t'>BODY-MARKER-77</m>"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 202, resp.StatusCode)

	// Each new file is written beside the old one, given the old one's own
	// mtime and only then renamed over it. Written in place, a file poll
	// between the write and the Chtimes saw a new mtime; and the key once
	// took the certificate's mtime, which differs when the two were
	// written in different clock ticks: either reloaded without the signal
	// (a flake under load).
	for _, f := range []struct {
		path string
		pem  []byte
		size int
	}{{certFile, two.CertPEM, 4096}, {keyFile, two.KeyPEM, 1024}} {
		st, err := os.Stat(f.path)
		require.NoError(t, err)
		next := f.path + ".next"
		padded(t, next, f.pem, f.size)
		require.NoError(t, os.Chtimes(next, st.ModTime(), st.ModTime()))
		require.NoError(t, os.Rename(next, f.path))
	}
	time.Sleep(1500 * time.Millisecond) // past a file poll: nothing changed for it
	_, _, cn = dial()
	require.Equal(t, "one", cn, "same size and mtime: only SIGHUP reloads")
	p.signal(t, syscall.SIGHUP)
	p.waitLog(t, `why=SIGHUP`, 30*time.Second)
	_, _, cn = dial()
	require.Equal(t, "two", cn, "new handshakes get the new certificate")
	require.Equal(t, 200, tlsGet(t, kept, keptR, "/healthz", ""), "the connection opened before is still served")
	require.Equal(t, "one", kept.ConnectionState().PeerCertificates[0].Subject.CommonName)
	select {
	case <-p.exited:
		t.Fatalf("serve exited on SIGHUP: %s", p.stderr.String())
	default:
	}

	time.Sleep(300 * time.Millisecond) // let the failing send be logged
	log := p.stderr.String()
	require.Contains(t, log, "reloaded")
	require.NotContains(t, log, token, "the admin token")
	require.NotContains(t, log, "PRIVATE KEY", "key material")
	for _, k := range [][]byte{one.KeyPEM, two.KeyPEM} {
		body := strings.Split(strings.TrimSpace(string(k)), "\n")[1]
		require.NotContains(t, log, body[:32], "key material")
	}
	require.NotContains(t, log, "BODY-MARKER-77", "a message body")
}

// TestServeSIGHUPWithoutTLSKeepsServing: SIGHUP no longer ends a plain
// gateway (its default action): it logs that there is nothing to reload.
func TestServeSIGHUPWithoutTLSKeepsServing(t *testing.T) {
	// Sent as soon as the listening line is out: serve catches SIGHUP
	// before it logs that line (it once did after, and a SIGHUP in between
	// ended the process).
	p := startServeProc(t, "-data", t.TempDir())
	p.signal(t, syscall.SIGHUP)
	p.waitLog(t, "nothing to reload", 30*time.Second)
	resp, err := pollClient.Get(p.url + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
}
