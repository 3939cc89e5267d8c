package gateway

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/wsrkit/wsrkit/store/etcdstore"
)

// etcdOptions are the etcd client options of -etcd-endpoints and the etcd
// TLS and auth flags (-etcd-ca, -etcd-cert/-etcd-key, -etcd-user with
// -etcd-password-file). A file that cannot be read is an error naming
// its flag; the password itself is never part of an error.
func etcdOptions(c *Config) (etcdstore.Options, error) {
	o := etcdstore.Options{
		Endpoints:      c.EtcdEndpoints,
		RequestTimeout: c.EtcdTimeout, // one bound for dialing and for each request
		Prefix:         c.EtcdPrefix,
		DialTimeout:    c.EtcdTimeout,
	}
	if c.EtcdCA != "" || c.EtcdCert != "" {
		var err error
		if o.TLS, err = clientTLS(c.EtcdCA, "-etcd-ca"); err != nil {
			return o, err
		}
		if c.EtcdCert != "" {
			kp, err := tls.LoadX509KeyPair(c.EtcdCert, c.EtcdKey)
			if err != nil {
				return o, fmt.Errorf("-etcd-cert/-etcd-key: %w", err)
			}
			o.TLS.Certificates = []tls.Certificate{kp}
		}
	}
	if c.EtcdUser != "" {
		pw, err := readSecretLine(c.EtcdPasswordFile)
		if err != nil {
			return o, fmt.Errorf("-etcd-password-file: %w", err)
		}
		o.Username, o.Password = c.EtcdUser, pw
	}
	return o, nil
}

// readSecretLine reads the first line of a secret file, without its line
// ending. The errors name the file, never its content.
func readSecretLine(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return "", fmt.Errorf("%s: the first line is empty", file)
	}
	return line, nil
}

// etcdHint explains a failure to reach etcd when the flags make a likely
// cause: a TLS mismatch (an etcd request that timed out says only that,
// so a handshake with the first endpoint finds the reason) or refused
// credentials.
func etcdHint(c *Config, tc *tls.Config, err error) error {
	msg := err.Error()
	if tc != nil && !strings.Contains(msg, "x509:") && !strings.Contains(msg, "tls:") {
		if perr := probeTLSAny(c.EtcdEndpoints, tc, c.EtcdTimeout); perr != nil {
			err, msg = fmt.Errorf("%w: %w", err, perr), msg+perr.Error()
		}
	}
	switch {
	case strings.Contains(msg, "x509:") || strings.Contains(msg, "tls:"):
		return fmt.Errorf("%w (TLS to etcd: check -etcd-ca, -etcd-cert and -etcd-key)", err)
	case strings.Contains(msg, "authentication failed") || strings.Contains(msg, "invalid auth token"):
		return fmt.Errorf("%w (etcd auth: check -etcd-user and -etcd-password-file)", err)
	case strings.Contains(msg, "permission denied"):
		return fmt.Errorf("%w (etcd auth: -etcd-user %q needs read and write on %s)", err, c.EtcdUser, c.EtcdPrefix)
	}
	return err
}

// probeTLSAny is probeTLS of the first endpoint that takes a TCP
// connection; nil when none does or the handshake succeeds.
func probeTLSAny(addrs []string, tc *tls.Config, timeout time.Duration) error {
	for _, a := range addrs {
		err := probeTLS(a, tc, timeout)
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			continue // down: try the next member
		}
		return err
	}
	return nil
}

// probeTLS shakes hands with addr as the etcd client would, and waits
// briefly for the server's verdict on the client certificate (under TLS
// 1.3 a refusal arrives after the client's handshake has completed).
func probeTLS(addr string, tc *tls.Config, timeout time.Duration) error {
	tc = tc.Clone()
	if host, _, err := net.SplitHostPort(addr); err == nil && tc.ServerName == "" {
		tc.ServerName = host
	}
	d := &net.Dialer{Timeout: timeout}
	conn, err := tls.DialWithDialer(d, "tcp", addr, tc)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(min(timeout, 500*time.Millisecond)))
	var b [1]byte
	if _, err := conn.Read(b[:]); err != nil && strings.Contains(err.Error(), "tls:") {
		return err
	}
	return nil
}
