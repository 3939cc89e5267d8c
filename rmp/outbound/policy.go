// Package outbound is how an RMP makes its HTTP POSTs: the Transport the
// Node sends them with (HTTPTransport, the default); the policy for the
// URLs a peer or a producer chose (a Callback or PollRequest ReplyTo, a
// submission's To): which addresses it may connect to, checked when a URL
// comes in and again at every dial, after name resolution; and the
// settings of the HTTP clients that make those calls (Config, NewClient).
package outbound

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// ErrRefused is returned for a destination the Policy
// does not let the RMP call.
var ErrRefused = errors.New("rmp: outbound destination refused by policy")

// Policy decides which addresses an RMP may call at the URLs a
// peer or a producer chose: a Callback ReplyTo, a PollRequest ReplyTo, a
// submission's To. The zero value is the secure default: public unicast
// addresses only. Literal addresses are checked when a URL comes in; every
// connection is checked again at dial time against the address it is
// about to connect to, after name resolution, so a name that resolves (or
// rebinds) to a refused address is refused too.
type Policy struct {
	// Allow lists loopback and private ranges that may be called too (a
	// loopback or private deployment). Link-local, cloud metadata,
	// unspecified, multicast and broadcast addresses are refused whatever
	// it lists.
	Allow []netip.Prefix
	// Exempt lists origins (scheme://host[:port]) of the operator's own
	// destinations, such as a gateway's -route targets: never checked,
	// called at whatever address they resolve to.
	Exempt []string
}

// Origin is u's scheme://host[:port], lowercased: what Exempt lists and
// what an HTTPTransport keys its per-destination limits by.
func Origin(u *url.URL) string { return strings.ToLower(u.Scheme + "://" + u.Host) }

// Exempts reports whether origin (see Origin) is one of Exempt's.
func (p *Policy) Exempts(origin string) bool {
	for _, e := range p.Exempt {
		if strings.EqualFold(strings.TrimSuffix(e, "/"), origin) {
			return true
		}
	}
	return false
}

// metadataAddrs are cloud instance-metadata endpoints outside the
// link-local ranges (Alibaba, AWS IPv6); 169.254.169.254 is link-local.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("100.100.100.200"),
	netip.MustParseAddr("fd00:ec2::254"),
}

// restricted are ranges refused unless Allow lists them: loopback,
// private (RFC 1918, RFC 4193), shared (RFC 6598) and "this network".
var restricted = []netip.Prefix{
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("fec0::/10"), // deprecated site-local
}

// CheckAddr says whether the RMP may connect to a.
func (p *Policy) CheckAddr(a netip.Addr) error {
	a = a.Unmap().WithZone("")
	refuse := func(why string) error { return fmt.Errorf("%w: %s is %s", ErrRefused, a, why) }
	switch {
	case !a.IsValid():
		return fmt.Errorf("%w: no address", ErrRefused)
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return refuse("link-local (cloud metadata lives there)")
	case a.IsUnspecified():
		return refuse("unspecified")
	case a.IsMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return refuse("multicast or broadcast")
	}
	for _, m := range metadataAddrs {
		if a == m {
			return refuse("a cloud metadata address")
		}
	}
	for _, r := range restricted {
		if !r.Contains(a) {
			continue
		}
		for _, ok := range p.Allow {
			if ok.Contains(a) {
				return nil
			}
		}
		return refuse("loopback or private, and not in the allowed ranges (-allow-outbound)")
	}
	return nil
}

// CheckURL checks what can be known of raw without resolving it: an
// absolute http(s) URL whose host, when it is an IP literal or a localhost
// name, is an allowed address. Other host names are checked at dial time.
func (p *Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: %q is not an absolute http(s) URL", ErrRefused, raw)
	}
	if p.Exempts(Origin(u)) {
		return nil
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return p.CheckAddr(netip.AddrFrom4([4]byte{127, 0, 0, 1})) // RFC 6761
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return p.CheckAddr(a)
	}
	return nil
}

// Control is a net.Dialer Control: it runs after resolution, before the
// connection is made, with the address about to be connected to.
func (p *Policy) Control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrRefused, err)
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrRefused, err)
	}
	return p.CheckAddr(a)
}

// ParseAllow reads a comma-separated list of CIDR prefixes or
// single addresses (the -allow-outbound flag).
func ParseAllow(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if a, err := netip.ParseAddr(f); err == nil {
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		pr, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("invalid range %q: want CIDR prefixes or addresses, comma-separated", f)
		}
		out = append(out, pr.Masked())
	}
	return out, nil
}

// Redact is a destination URL fit for the log: a password in its user
// information is masked (a peer's URL may carry credentials).
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
