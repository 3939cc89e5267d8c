//go:build unix

package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/internal/testtool"
	"github.com/wsrkit/wsrkit/rmp"
)

// readmePKI returns the README's openssl commands of "Deploying on a
// network": from "# 1. The CA" to the line making the admin token.
func readmePKI(t *testing.T) string {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	s := string(b)
	i := strings.Index(s, "# 1. The CA")
	require.GreaterOrEqual(t, i, 0, "README: the openssl setup")
	j := strings.Index(s[i:], "chmod 600")
	require.Greater(t, j, 0)
	end := i + j + strings.Index(s[i+j:], "\n")
	return s[i:end]
}

// TestREADMEMutualTLSSetup runs the README's openssl commands as written
// and serves with what they make: gateway B's certificate verifies against
// the CA under its host name, gateway A's is a client certificate B accepts
// and whose identity is its URI SAN, and the admin token works (#19).
func TestREADMEMutualTLSSetup(t *testing.T) {
	testtool.Need(t, "openssl", "openssl")
	bash := testtool.Need(t, "bash", "bash")
	dir := t.TempDir()
	cmd := exec.Command(bash, "-euo", "pipefail", "-c", readmePKI(t))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	file := func(n string) string { return filepath.Join(dir, n) }
	caPEM, err := os.ReadFile(file("ca.crt"))
	require.NoError(t, err)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(caPEM))
	for _, gw := range []string{"gw-a", "gw-b"} {
		pair, err := tls.LoadX509KeyPair(file(gw+".crt"), file(gw+".key"))
		require.NoError(t, err)
		leaf, err := x509.ParseCertificate(pair.Certificate[0])
		require.NoError(t, err)
		for _, u := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
			_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: gw + ".example.com", KeyUsages: []x509.ExtKeyUsage{u}})
			require.NoError(t, err, "%s for %v", gw, u)
		}
		cs := &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{leaf}}}
		require.Equal(t, "urn:partner:"+gw, rmp.PeerFromTLS(cs).ID())
	}
	token, err := os.ReadFile(file("admin.token"))
	require.NoError(t, err)
	require.Len(t, strings.TrimSpace(string(token)), 64)

	p := startServeProc(t, "-data", file("b"), "-tls-cert", file("gw-b.crt"), "-tls-key", file("gw-b.key"),
		"-tls-client-ca", file("ca.crt"), "-admin-token-file", file("admin.token"))
	a, err := tls.LoadX509KeyPair(file("gw-a.crt"), file("gw-a.key"))
	require.NoError(t, err)
	conn, err := tls.Dial("tcp", strings.TrimPrefix(p.url, "https://"), &tls.Config{
		RootCAs: roots, ServerName: "gw-b.example.com", Certificates: []tls.Certificate{a}})
	require.NoError(t, err, "B's certificate for its host name, A's accepted")
	defer conn.Close()
	require.Equal(t, 200, tlsGet(t, conn, bufio.NewReader(conn), "/v1/groups", strings.TrimSpace(string(token))))
}
