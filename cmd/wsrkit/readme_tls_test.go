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
	"github.com/wsrkit/wsrkit/rmp/peer"
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
		leaf := verifiesBothWays(t, roots, dir, gw)
		cs := &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{leaf}}}
		require.Equal(t, "urn:partner:"+gw, peer.FromTLS(cs).ID())
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

// TestREADMEInstancesPKI runs the README's openssl commands for the
// instances of -store etcd: each instance's certificate verifies against
// the instances' CA under its host name for server and for client
// authentication, so it serves partners and forwards under -cluster-ca.
func TestREADMEInstancesPKI(t *testing.T) {
	testtool.Need(t, "openssl", "openssl")
	bash := testtool.Need(t, "bash", "bash")
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	s := string(b)
	i := strings.Index(s, "Several instances on etcd")
	require.GreaterOrEqual(t, i, 0, "README: the instances' PKI")
	i += strings.Index(s[i:], "```sh\n") + len("```sh\n")
	j := strings.Index(s[i:], "\ndone\n")
	require.Greater(t, j, 0)
	dir := t.TempDir()
	cmd := exec.Command(bash, "-euo", "pipefail", "-c", s[i:i+j+len("\ndone\n")])
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	caPEM, err := os.ReadFile(filepath.Join(dir, "instances.crt"))
	require.NoError(t, err)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(caPEM))
	for _, gw := range []string{"gw1", "gw2", "gw3"} {
		verifiesBothWays(t, roots, dir, gw)
	}
}

// verifiesBothWays loads dir/gw.crt and dir/gw.key and checks that the
// certificate verifies against roots as gw.example.com for server and for
// client authentication; it returns the certificate.
func verifiesBothWays(t *testing.T, roots *x509.CertPool, dir, gw string) *x509.Certificate {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, gw+".crt"), filepath.Join(dir, gw+".key"))
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	require.NoError(t, err)
	for _, u := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: gw + ".example.com", KeyUsages: []x509.ExtKeyUsage{u}})
		require.NoError(t, err, "%s for %v", gw, u)
	}
	return leaf
}
