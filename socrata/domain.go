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

// cgnat is the shared address space of carrier-grade NAT (RFC 6598).
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// PublicAddr reports whether a is an address of the public internet: not
// loopback, private (RFC 1918, unique local fc00::/7, carrier-grade NAT),
// link-local, unspecified, multicast or the IPv4 broadcast or "this
// network" ranges. IPv4-mapped IPv6 addresses are judged as IPv4.
func PublicAddr(a netip.Addr) bool {
	a = a.Unmap()
	switch {
	case !a.IsValid(), a.IsLoopback(), a.IsPrivate(), a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast(),
		a.IsInterfaceLocalMulticast(), a.IsMulticast(), a.IsUnspecified():
		return false
	case a.Is4() && (cgnat.Contains(a) || a.As4()[0] == 0 || a == netip.AddrFrom4([4]byte{255, 255, 255, 255})):
		return false
	}
	return a.IsGlobalUnicast()
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
