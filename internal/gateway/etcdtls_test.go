package gateway

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/internal/testpki"
	"github.com/wsrkit/wsrkit/store/etcdstore/etcdtest"
)

// startEtcdGateway starts one -store etcd gateway on eps with edit
// applied, stopped at the end of t; it waits until it holds every shard.
func startEtcdGateway(t *testing.T, eps []string, edit func(*Config)) *Server {
	t.Helper()
	cfg := clusterConfig(t, eps, "gw-tls", "")
	edit(&cfg)
	s, err := Start(cfg, Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	require.Eventually(t, func() bool { return len(s.nodes()) == cfg.Shards }, 20*time.Second, 20*time.Millisecond)
	return s
}

// receivesOneMessage sends one reliable message from a pebble gateway to
// s's RMP endpoint and waits for it in s's inbox: s's group state went
// through its etcd store.
func receivesOneMessage(t *testing.T, s *Server) {
	t.Helper()
	sender := startSender(t)
	var a SubmitAnswer
	require.Equal(t, 202, postJSON(t, sender.URL()+"/v1/messages", map[string]any{"to": s.URL() + "/rmp", "group": "g",
		"ordered": true, "ack": true, "dupElim": true, "expiresIn": "1m", "body": "<m>over etcd</m>"}, &a))
	require.Eventually(t, func() bool {
		var in struct {
			Messages []struct{ GroupID string } `json:"messages"`
		}
		if getJSON(s.URL()+"/v1/inbox", &in) != 200 {
			return false
		}
		for _, m := range in.Messages {
			if m.GroupID == a.GroupID {
				return true
			}
		}
		return false
	}, 20*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool {
		var ms MessageStatus
		return getJSON(sender.URL()+"/v1/messages/"+a.ID, &ms) == 200 && ms.State == "acknowledged"
	}, 20*time.Second, 20*time.Millisecond)
}

// TestEtcdOverTLS: with -etcd-ca and a client certificate the gateway's
// store works against a 3-member cluster that serves TLS and requires
// client certificates; a wrong CA, or no client certificate, refuses to start
// with one clear error (#19 item 6).
func TestEtcdOverTLS(t *testing.T) {
	p := newPKI(t)
	srvCert, srvKey := p.serverFiles(t, "etcd")
	client := p.ca.Client(t, "wsrkit-gateway")
	clientCert, clientKey := client.Write(t, p.dir, "etcd-client")
	etcd := etcdtest.StartTB(t, etcdtest.Options{Members: 3, TLS: &etcdtest.TLS{CertFile: srvCert, KeyFile: srvKey,
		ClientCAFile: p.caFile, Client: testpki.ClientConfig(p.ca.Pool(), client)}})

	s := startEtcdGateway(t, etcd.Endpoints, func(c *Config) {
		c.EtcdCA, c.EtcdCert, c.EtcdKey = p.caFile, clientCert, clientKey
	})
	receivesOneMessage(t, s)
	evs, err := etcd.History("/c/shard/")
	require.NoError(t, err)
	require.NotEmpty(t, evs, "the gateway's commits are in etcd")
	// One member down: the TLS client goes on with the others.
	require.NoError(t, etcd.Stop(0))
	receivesOneMessage(t, s)

	refused := func(edit func(*Config), want string) {
		t.Helper()
		cfg := clusterConfig(t, etcd.Endpoints, "gw-refused", "")
		cfg.EtcdTimeout = 2 * time.Second
		edit(&cfg)
		_, err := Start(cfg, Options{})
		require.Error(t, err)
		require.Contains(t, err.Error(), want)
		require.Contains(t, err.Error(), "-etcd-ca")
		t.Logf("refused: %v", err)
	}
	// The members' certificate is not signed by the CA given.
	refused(func(c *Config) { c.EtcdCA, c.EtcdCert, c.EtcdKey = p.otherFile, clientCert, clientKey }, "unknown authority")
	// No client certificate where the members require one.
	refused(func(c *Config) { c.EtcdCA = p.caFile }, "TLS to etcd")
}

// TestEtcdAuth: with etcd authentication on, -etcd-user and its password
// from -etcd-password-file work; a wrong password refuses to start with a
// clear error that does not contain it (#19 item 6).
func TestEtcdAuth(t *testing.T) {
	etcd := etcdtest.StartTB(t, etcdtest.Options{Members: 1})
	require.NoError(t, etcd.EnableAuth("root-pw", etcdtest.User{Name: "wsrkit", Password: "right-pw", Prefix: "/c/"}))
	dir := t.TempDir()
	pwFile := func(name, pw string) string {
		f := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(f, []byte(pw+"\n"), 0o600))
		return f
	}
	s := startEtcdGateway(t, etcd.Endpoints, func(c *Config) {
		c.EtcdUser, c.EtcdPasswordFile = "wsrkit", pwFile("right", "right-pw")
	})
	receivesOneMessage(t, s)

	cfg := clusterConfig(t, etcd.Endpoints, "gw-wrong", "")
	cfg.EtcdTimeout = 2 * time.Second
	cfg.EtcdUser, cfg.EtcdPasswordFile = "wsrkit", pwFile("wrong", "wrong-pw-4711")
	_, err := Start(cfg, Options{})
	require.Error(t, err)
	require.Contains(t, err.Error(), "authentication failed")
	require.Contains(t, err.Error(), "-etcd-password-file")
	require.NotContains(t, err.Error(), "wrong-pw-4711")

	// Without credentials the cluster refuses too.
	cfg.EtcdUser, cfg.EtcdPasswordFile = "", ""
	_, err = Start(cfg, Options{})
	require.Error(t, err)
}

// etcdConfigFor is a loopback -store etcd configuration for Validate and
// Open errors (its endpoint never answers).
func etcdConfigFor(t *testing.T) Config {
	c := loopbackConfig()
	c.DataDir, c.Store, c.EtcdEndpoints = t.TempDir(), StoreEtcd, []string{"127.0.0.1:1"}
	return c
}

// TestEtcdFlagsValidate: half-given pairs and unreadable files are one
// clear startup error each, naming the flag.
func TestEtcdFlagsValidate(t *testing.T) {
	base := func() Config { return etcdConfigFor(t) }
	c := base()
	c.EtcdCert = "x.crt"
	require.ErrorContains(t, c.Validate(), "-etcd-cert and -etcd-key go together")
	c = base()
	c.EtcdUser = "wsrkit"
	require.ErrorContains(t, c.Validate(), "-etcd-user and -etcd-password-file go together")
	c = base()
	c.EtcdPasswordFile = "pw"
	require.ErrorContains(t, c.Validate(), "-etcd-user and -etcd-password-file go together")

	missing := filepath.Join(t.TempDir(), "missing")
	for flag, edit := range map[string]func(*Config){
		"-etcd-ca":             func(c *Config) { c.EtcdCA = missing },
		"-etcd-cert/-etcd-key": func(c *Config) { c.EtcdCert, c.EtcdKey = missing, missing },
		"-etcd-password-file":  func(c *Config) { c.EtcdUser, c.EtcdPasswordFile = "wsrkit", missing },
	} {
		c := base()
		edit(&c)
		_, err := Open(c, Options{})
		require.ErrorContains(t, err, flag)
		require.ErrorContains(t, err, "no such file")
	}
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, []byte("\n"), 0o600))
	c = base()
	c.EtcdUser, c.EtcdPasswordFile = "wsrkit", empty
	_, err := Open(c, Options{})
	require.ErrorContains(t, err, "-etcd-password-file")
	require.ErrorContains(t, err, "empty")
}
