package outbound

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Two clients made from one Config with TLS, used at once, leave the
// caller's tls.Config as it was and still speak HTTP/2: net/http writes
// the ALPN protocols into a transport's config on its first exchange, and
// a shared one raced (go test -race ./internal/gateway, the peer and
// -deliver clients of TestMutualTLSGatewaysEndToEnd).
func TestNewClientKeepsTheCallersTLSConfig(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.Proto))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	shared := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}

	var wg sync.WaitGroup
	protos := make([]string, 2)
	errs := make([]error, 2)
	for i := range protos {
		c := NewClient(Config{Timeout: 10 * time.Second, TLS: shared})
		wg.Go(func() {
			resp, err := c.Get(srv.URL)
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			protos[i] = resp.Proto
		})
	}
	wg.Wait()
	for i := range protos {
		if errs[i] != nil {
			t.Fatalf("client %d: %v", i, errs[i])
		}
		if protos[i] != "HTTP/2.0" {
			t.Errorf("client %d spoke %q, want HTTP/2.0", i, protos[i])
		}
	}
	if len(shared.NextProtos) != 0 {
		t.Errorf("the caller's tls.Config was changed: NextProtos = %q", shared.NextProtos)
	}
}
