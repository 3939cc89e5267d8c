package outbound

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// TestHTTPTransportChecksResolvedAddress: the check runs at dial time on
// the address a name resolved to, so a name that resolves (or rebinds) to
// the metadata address is refused though its URL looked harmless. Names
// resolve through a fake DNS server on an in-memory pipe; a recorder runs
// after the policy and refuses anything but loopback itself, so even a
// broken policy never lets this test connect beyond loopback.
func TestHTTPTransportChecksResolvedAddress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	zone := map[string][4]byte{"meta.test.": {169, 254, 169, 254}, "self.test.": {127, 0, 0, 1}, "private.test.": {10, 0, 0, 7}}
	var mu sync.Mutex
	var asked []string
	record := func(_, address string, _ syscall.RawConn) error {
		mu.Lock()
		asked = append(asked, address)
		mu.Unlock()
		host, _, _ := net.SplitHostPort(address)
		if a, err := netip.ParseAddr(host); err != nil || !a.IsLoopback() {
			return errors.New("test recorder: not dialling beyond loopback")
		}
		return nil
	}
	newTransport := func(pol *Policy) *HTTPTransport {
		return NewHTTPTransport(Config{Policy: pol, Resolver: fakeResolver(zone), Control: record})
	}

	def := newTransport(&Policy{})
	for _, name := range []string{"meta.test", "private.test", "self.test"} {
		_, err := def.Do(context.Background(), Post{URL: "http://" + name + ":" + port + "/"})
		if !errors.Is(err, ErrRefused) {
			t.Errorf("default policy, %s: err = %v, want ErrRefused", name, err)
		}
	}
	mu.Lock()
	if len(asked) != 0 {
		t.Errorf("refused dials reached the connection step: %v", asked)
	}
	mu.Unlock()

	loop := newTransport(&Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	res, err := loop.Do(context.Background(), Post{URL: "http://self.test:" + port + "/"})
	if err != nil || string(res.Body) != "ok" {
		t.Fatalf("allowed loopback name: %+v, %v", res, err)
	}
	if _, err := loop.Do(context.Background(), Post{URL: "http://meta.test:" + port + "/"}); !errors.Is(err, ErrRefused) {
		t.Errorf("metadata with loopback allowed: err = %v", err)
	}
	mu.Lock()
	if len(asked) != 1 || asked[0] != "127.0.0.1:"+port {
		t.Errorf("connections attempted: %v, want only 127.0.0.1:%s", asked, port)
	}
	mu.Unlock()

	// An operator's origin (a -route target) is exempt; only that origin.
	op := newTransport(&Policy{Exempt: []string{"HTTP://127.0.0.1:" + port}})
	if err := op.cfg.Policy.CheckURL(srv.URL + "/x"); err != nil {
		t.Errorf("exempt origin: %v", err)
	}
	if res, err := op.Do(context.Background(), Post{URL: srv.URL + "/x"}); err != nil || string(res.Body) != "ok" {
		t.Errorf("exempt origin: %+v, %v", res, err)
	}
	if _, err := op.Do(context.Background(), Post{URL: "http://self.test:" + port + "/"}); !errors.Is(err, ErrRefused) {
		t.Errorf("another origin at the same address: err = %v, want refused", err)
	}
}

// fakeResolver answers A queries from zone over an in-memory stream (no
// network): every other name and type is answered with no records.
func fakeResolver(zone map[string][4]byte) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		client, server := net.Pipe()
		go serveFakeDNS(server, zone)
		return client, nil
	}}
}

func serveFakeDNS(c net.Conn, zone map[string][4]byte) {
	defer c.Close()
	for {
		var n [2]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return
		}
		q := make([]byte, binary.BigEndian.Uint16(n[:]))
		if _, err := io.ReadFull(c, q); err != nil {
			return
		}
		var m dnsmessage.Message
		if m.Unpack(q) != nil || len(m.Questions) != 1 {
			return
		}
		qs := m.Questions[0]
		m.Header.Response, m.Header.Authoritative = true, true
		ip, ok := zone[strings.ToLower(qs.Name.String())]
		switch {
		case ok && qs.Type == dnsmessage.TypeA:
			m.Answers = []dnsmessage.Resource{{
				Header: dnsmessage.ResourceHeader{Name: qs.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 1},
				Body:   &dnsmessage.AResource{A: ip},
			}}
		case !ok:
			m.Header.RCode = dnsmessage.RCodeNameError
		}
		b, err := m.Pack()
		if err != nil {
			return
		}
		binary.BigEndian.PutUint16(n[:], uint16(len(b)))
		if _, err := c.Write(append(n[:], b...)); err != nil {
			return
		}
	}
}
