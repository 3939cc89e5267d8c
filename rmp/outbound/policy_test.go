package outbound

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// The policy decides on addresses alone; nothing here is dialled.
func TestOutboundPolicyAddresses(t *testing.T) {
	loop := &Policy{Allow: mustAllow(t, "127.0.0.0/8,::1/128")}
	everything := &Policy{Allow: mustAllow(t, "0.0.0.0/0,::/0")}
	for _, c := range []struct {
		addr                 string
		byDefault, loop, all bool // allowed?
	}{
		{"169.254.169.254", false, false, false}, // cloud metadata
		{"::ffff:169.254.169.254", false, false, false},
		{"169.254.1.1", false, false, false},
		{"fe80::1", false, false, false},
		{"fe80::1%eth0", false, false, false},
		{"100.100.100.200", false, false, false}, // Alibaba metadata
		{"fd00:ec2::254", false, false, false},   // AWS IPv6 metadata
		{"0.0.0.0", false, false, false},
		{"::", false, false, false},
		{"224.0.0.1", false, false, false},
		{"ff02::1", false, false, false},
		{"255.255.255.255", false, false, false},
		{"127.0.0.1", false, true, true},
		{"127.1.2.3", false, true, true},
		{"::1", false, true, true},
		{"::ffff:127.0.0.1", false, true, true},
		{"10.1.2.3", false, false, true},
		{"172.16.0.1", false, false, true},
		{"192.168.1.1", false, false, true},
		{"fc00::1", false, false, true},
		{"100.64.0.1", false, false, true},
		{"0.1.2.3", false, false, true},
		{"8.8.8.8", true, true, true},
		{"2001:4860:4860::8888", true, true, true},
	} {
		a := netip.MustParseAddr(c.addr)
		for _, p := range []struct {
			name string
			pol  *Policy
			want bool
		}{{"default", &Policy{}, c.byDefault}, {"loopback", loop, c.loop}, {"everything", everything, c.all}} {
			err := p.pol.CheckAddr(a)
			if got := err == nil; got != p.want {
				t.Errorf("%s policy, %s: allowed=%v (%v), want %v", p.name, c.addr, got, err, p.want)
			}
			if err != nil && !errors.Is(err, ErrRefused) {
				t.Errorf("%s: error %v is not ErrRefused", c.addr, err)
			}
		}
	}
}

func TestOutboundPolicyURLs(t *testing.T) {
	def := &Policy{}
	for _, u := range []string{"http://169.254.169.254/latest/meta-data", "http://[fe80::1%25eth0]:80/",
		"http://localhost:8080/rmp", "http://a.localhost./x", "http://127.0.0.1:1/rmp", "https://[::1]/",
		"http://[::ffff:10.0.0.1]/", "ftp://example.com/", "/relative"} {
		if err := def.CheckURL(u); !errors.Is(err, ErrRefused) {
			t.Errorf("CheckURL(%q) = %v, want refused", u, err)
		}
	}
	// Names other than localhost are decided at dial time.
	for _, u := range []string{"http://example.com/rmp", "https://peer.example:8443/x", "http://8.8.8.8/"} {
		if err := def.CheckURL(u); err != nil {
			t.Errorf("CheckURL(%q) = %v, want allowed", u, err)
		}
	}
	if err := (&Policy{Allow: mustAllow(t, "127.0.0.1")}).CheckURL("http://localhost:9/"); err != nil {
		t.Errorf("localhost with 127.0.0.1 allowed: %v", err)
	}
	if _, err := ParseAllow("127.0.0.0/8,nonsense"); err == nil || !strings.Contains(err.Error(), "nonsense") {
		t.Errorf("ParseAllow(nonsense) = %v", err)
	}
}

func mustAllow(t *testing.T, s string) []netip.Prefix {
	t.Helper()
	p, err := ParseAllow(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
