package socrata

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
)

// DomainError says why a portal domain was refused: it is not a DNS host
// name of the public internet. Nothing was sent to it.
type DomainError struct {
	Domain string // as given
	Reason string // what is wrong, e.g. "it has a port (:8080)"
	// NotServed: the name is a portal's host name, but this server does not
	// serve it (an allowlist, the offline portal); no other name is offered
	// as an example.
	NotServed bool
}

func (e *DomainError) Error() string {
	if e.NotServed {
		return fmt.Sprintf("domain %q is refused: %s", e.Domain, e.Reason)
	}
	return fmt.Sprintf("domain %q is refused: %s; give a portal's host name, e.g. data.cityofchicago.org", e.Domain, e.Reason)
}

// maxDomain is the longest DNS name (RFC 1035), without the trailing dot.
const maxDomain = 253

// specialSuffixes are the names of no public portal: loopback, link-local
// multicast DNS, private and reserved zones (RFC 6761, RFC 6762, RFC 8375,
// ICANN's .internal) and names private networks commonly use.
var specialSuffixes = []string{
	"localhost", "local", "internal", "localdomain", "arpa", "invalid", "test", "onion",
	"lan", "home", "corp", "intranet", "private",
}

// CheckDomain checks that domain is a DNS host name and nothing else, and
// returns it in lower case. Refused, each with its reason (*DomainError): a
// scheme, userinfo, port, path, query or fragment; an IP literal in any
// form (IPv4 dotted, decimal, octal, hex or short, IPv6 with or without
// brackets or a zone id); a name of one label (localhost); the special-use
// names (.local, .internal, .localhost, .arpa, …); a trailing dot; and
// non-ASCII names (give the punycode form, xn--…). It does not resolve the
// name: see PublicAddr and PublicDialContext for that.
func CheckDomain(domain string) (string, error) {
	refuse := func(reason string, args ...any) (string, error) {
		return "", &DomainError{Domain: domain, Reason: fmt.Sprintf(reason, args...)}
	}
	d := strings.TrimSpace(domain)
	switch {
	case d == "":
		return refuse("it is empty")
	case strings.Contains(d, "://"):
		return refuse("it has a scheme (%s://); https is always used", d[:strings.Index(d, "://")])
	case strings.ContainsAny(d, "@"):
		return refuse("it has userinfo (@)")
	case strings.ContainsAny(d, "/\\"):
		return refuse("it has a path (/)")
	case strings.ContainsAny(d, "?#"):
		return refuse("it has a query or fragment")
	case strings.ContainsAny(d, "[]"), strings.Count(d, ":") > 1:
		return refuse("it is an IPv6 address; only host names are served")
	case strings.Contains(d, "%"):
		return refuse("it has a zone id or an escape (%%)")
	case strings.Contains(d, ":"):
		return refuse("it has a port (%s); https on its own port is always used", d[strings.Index(d, ":"):])
	}
	for _, r := range d {
		if r > 127 {
			return refuse("it is not ASCII; give an internationalized name in its punycode form (xn--…)")
		}
	}
	if _, err := netip.ParseAddr(d); err == nil {
		return refuse("it is an IP address; only host names are served")
	}
	if strings.HasSuffix(d, ".") {
		return refuse("it ends with a dot; give it without")
	}
	d = strings.ToLower(d)
	if len(d) > maxDomain {
		return refuse("it is %d characters long; a host name has at most %d", len(d), maxDomain)
	}
	labels := strings.Split(d, ".")
	for _, l := range labels {
		switch {
		case l == "":
			return refuse("it has an empty label (..)")
		case len(l) > 63:
			return refuse("its label %q is longer than 63 characters", l)
		case l[0] == '-' || l[len(l)-1] == '-':
			return refuse("its label %q begins or ends with a hyphen", l)
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return refuse("it has the character %q; a host name has letters, digits, hyphens and dots", r)
			}
		}
	}
	tld := labels[len(labels)-1]
	if tld[0] < 'a' || tld[0] > 'z' {
		// 2130706433, 0177.0.0.1, 0x7f.1, 127.1: what inet_aton reads as
		// an IPv4 address. No top-level domain begins with a digit.
		return refuse("it reads as an IPv4 address (decimal, octal, hex or short form); only host names are served")
	}
	if len(labels) < 2 {
		return refuse("it is a single label; a public portal's name has a dot (data.cityofchicago.org)")
	}
	for _, s := range specialSuffixes {
		if d == s || strings.HasSuffix(d, "."+s) {
			return refuse("it is in the special-use zone .%s, which no public portal uses", s)
		}
	}
	return d, nil
}

// specialPrefix is a range of addresses that is not the public internet,
// with where it is registered.
type specialPrefix struct {
	prefix netip.Prefix
	what   string
}

// specialPrefixes lists every range of the IANA IPv4 and IPv6
// Special-Purpose Address Registries
// (https://www.iana.org/assignments/iana-ipv4-special-registry and
// https://www.iana.org/assignments/iana-ipv6-special-registry, RFC 6890),
// the IPv4 multicast space (https://www.iana.org/assignments/multicast-addresses)
// and the IPv6 ranges the IPv6 Address Space registry
// (https://www.iana.org/assignments/ipv6-address-space) reserves or
// deprecates. Some (AS112, AMT, NAT64's 64:ff9b::/96) are "globally
// reachable" in the registry, but no portal is served from them, and each
// can lead to an address inside the network (NAT64 and 6to4 embed an IPv4
// address), so every one is refused.
var specialPrefixes = func() []specialPrefix {
	ranges := []struct{ cidr, what string }{
		// IPv4 Special-Purpose Address Registry.
		{"0.0.0.0/8", "this network (RFC 791)"},
		{"10.0.0.0/8", "private use (RFC 1918)"},
		{"100.64.0.0/10", "shared address space, carrier-grade NAT (RFC 6598)"},
		{"127.0.0.0/8", "loopback (RFC 1122)"},
		{"169.254.0.0/16", "link local (RFC 3927)"},
		{"172.16.0.0/12", "private use (RFC 1918)"},
		{"192.0.0.0/24", "IETF protocol assignments (RFC 6890)"},
		{"192.0.2.0/24", "documentation TEST-NET-1 (RFC 5737)"},
		{"192.31.196.0/24", "AS112-v4 (RFC 7535)"},
		{"192.52.193.0/24", "AMT (RFC 7450)"},
		{"192.88.99.0/24", "deprecated 6to4 relay anycast (RFC 7526)"},
		{"192.168.0.0/16", "private use (RFC 1918)"},
		{"192.175.48.0/24", "direct delegation AS112 service (RFC 7534)"},
		{"198.18.0.0/15", "benchmarking (RFC 2544)"},
		{"198.51.100.0/24", "documentation TEST-NET-2 (RFC 5737)"},
		{"203.0.113.0/24", "documentation TEST-NET-3 (RFC 5737)"},
		{"240.0.0.0/4", "reserved (RFC 1112)"},
		{"255.255.255.255/32", "limited broadcast (RFC 919)"},
		// IPv4 multicast (RFC 5771).
		{"224.0.0.0/4", "multicast (RFC 5771)"},
		// IPv6 Special-Purpose Address Registry.
		{"::1/128", "loopback (RFC 4291)"},
		{"::/128", "unspecified (RFC 4291)"},
		{"::ffff:0:0/96", "IPv4-mapped (RFC 4291)"},
		{"64:ff9b::/96", "IPv4-IPv6 translation, NAT64 (RFC 6052)"},
		{"64:ff9b:1::/48", "local-use IPv4/IPv6 translation (RFC 8215)"},
		{"100::/64", "discard-only (RFC 6666)"},
		{"100:0:0:1::/64", "dummy IPv6 prefix (RFC 9780)"},
		{"2001::/23", "IETF protocol assignments: Teredo, benchmarking, ORCHID and others (RFC 2928)"},
		{"2001:db8::/32", "documentation (RFC 3849)"},
		{"2002::/16", "6to4 (RFC 3056)"},
		{"2620:4f:8000::/48", "direct delegation AS112 service (RFC 7534)"},
		{"3fff::/20", "documentation (RFC 9637)"},
		{"5f00::/16", "segment routing SIDs (RFC 9602)"},
		{"fc00::/7", "unique local (RFC 4193)"},
		{"fe80::/10", "link-local unicast (RFC 4291)"},
		// IPv6 Address Space registry: deprecated or not unicast.
		{"::/96", "IPv4-compatible, deprecated (RFC 4291 section 2.5.5.1)"},
		{"fec0::/10", "site-local, deprecated (RFC 3879)"},
		{"ff00::/8", "multicast (RFC 4291)"},
	}
	out := make([]specialPrefix, len(ranges))
	for i, r := range ranges {
		out[i] = specialPrefix{netip.MustParsePrefix(r.cidr), r.what}
	}
	return out
}()

// globalUnicast6 is the only IPv6 range IANA allocates for global unicast
// (the IPv6 Address Space registry); the rest is reserved.
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// PublicAddr reports whether a is an address of the public internet: in
// none of the special-purpose ranges IANA registers (loopback, private,
// shared, link-local, documentation, benchmarking, the IETF protocol
// assignments, reserved, broadcast, multicast; NAT64, 6to4, Teredo,
// IPv4-compatible, site-local and unique local IPv6), and for IPv6 inside
// the global unicast range 2000::/3. An IPv4-mapped IPv6 address
// (::ffff:a.b.c.d) is judged as its IPv4 address, since that is where a
// connection to it goes; any other IPv6 form that embeds an IPv4 address
// (NAT64, 6to4, IPv4-compatible, IPv4-translated) is refused whatever it
// embeds.
func PublicAddr(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		return false
	}
	a = a.Unmap()
	if a.Is6() && !globalUnicast6.Contains(a) {
		return false
	}
	return specialRange(a) == ""
}

// specialRange names the special-purpose range that holds a, or is "".
func specialRange(a netip.Addr) string {
	for _, p := range specialPrefixes {
		if p.prefix.Contains(a) {
			return p.what
		}
	}
	return ""
}

// ErrNonPublicAddress is returned (wrapped) by PublicDialContext for a
// connection to an address PublicAddr refuses.
var ErrNonPublicAddress = errors.New("socrata: address is not public")

// PublicDialContext returns a DialContext for an http.Transport that
// connects only to public addresses: it checks every address the dialer is
// about to connect to (after DNS resolution, so a name that resolves, or
// comes to resolve, to a loopback or private address is refused before any
// packet is sent to it).
func PublicDialContext(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if d == nil {
		d = &net.Dialer{}
	}
	guarded := *d
	inner := d.Control
	guarded.Control = func(network, address string, c syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %s", ErrNonPublicAddress, address)
		}
		if !PublicAddr(ap.Addr()) {
			return fmt.Errorf("%w: %s", ErrNonPublicAddress, ap.Addr())
		}
		if inner != nil {
			return inner(network, address, c)
		}
		return nil
	}
	return guarded.DialContext
}
