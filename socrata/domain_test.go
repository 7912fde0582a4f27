package socrata

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCheckDomain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		reason   string // a word of the refusal's reason; "" when accepted
	}{
		{"data.sfgov.org", "data.sfgov.org", ""},
		{"DATA.CityOfChicago.ORG", "data.cityofchicago.org", ""},
		{"  data.ny.gov ", "data.ny.gov", ""},
		{"xn--bcher-kva.example", "xn--bcher-kva.example", ""},
		{"data-1.example.co.uk", "data-1.example.co.uk", ""},
		{"", "", "empty"},
		{"https://data.sfgov.org", "", "scheme"},
		{"ftp://data.sfgov.org", "", "scheme"},
		{"user@data.sfgov.org", "", "userinfo"},
		{"user:pw@data.sfgov.org", "", "userinfo"},
		{"data.sfgov.org:443", "", "port"},
		{"data.sfgov.org/resource", "", "path"},
		{`data.sfgov.org\x`, "", "path"},
		{"//data.sfgov.org", "", "path"},
		{"data.sfgov.org?a=b", "", "query"},
		{"data.sfgov.org#x", "", "fragment"},
		{"127.0.0.1", "", "IP address"},
		{"8.8.8.8", "", "IP address"},
		{"2130706433", "", "IPv4"},
		{"0177.0.0.1", "", "IPv4"},
		{"0x7f.1", "", "IPv4"},
		{"0x7f000001", "", "IPv4"},
		{"127.1", "", "IPv4"},
		{"10.1", "", "IPv4"},
		{"::1", "", "IPv6"},
		{"[::1]", "", "IPv6"},
		{"[::1]:443", "", "IPv6"},
		{"fe80::1%eth0", "", "IPv6"},
		{"[fe80::1%25eth0]", "", "IPv6"},
		{"fe80%eth0", "", "zone"},
		{"localhost", "", "single label"},
		{"LocalHost", "", "single label"},
		{"intranet", "", "single label"},
		{"portal.localhost", "", ".localhost"},
		{"printer.local", "", ".local"},
		{"metadata.google.internal", "", ".internal"},
		{"1.0.0.127.in-addr.arpa", "", ".arpa"},
		{"data.sfgov.org.", "", "dot"},
		{"localhost.", "", "dot"},
		{"données.example.fr", "", "punycode"},
		{"data..org", "", "empty label"},
		{".data.org", "", "empty label"},
		{"-data.example.org", "", "hyphen"},
		{"data-.example.org", "", "hyphen"},
		{"data_x.example.org", "", "character"},
		{"data example.org", "", "character"},
		{strings.Repeat("a", 64) + ".example.org", "", "63"},
		{strings.Repeat("abcdefghi.", 26) + "org", "", "253"},
	}
	for _, tt := range tests {
		got, err := CheckDomain(tt.in)
		if tt.reason == "" {
			if err != nil || got != tt.want {
				t.Errorf("CheckDomain(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			continue
		}
		var de *DomainError
		if !errors.As(err, &de) {
			t.Errorf("CheckDomain(%q) = %q, %v; want a *DomainError", tt.in, got, err)
			continue
		}
		if !strings.Contains(de.Reason, tt.reason) {
			t.Errorf("CheckDomain(%q) refused because %q; want a reason with %q", tt.in, de.Reason, tt.reason)
		}
		if !strings.Contains(err.Error(), "domain") {
			t.Errorf("CheckDomain(%q) error %q does not name the domain", tt.in, err)
		}
	}
}

func TestPublicAddr(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"52.206.140.205": true, "2600:1f18:1cb5::1": true, "8.8.8.8": true,
		"127.0.0.1": false, "127.9.9.9": false, "::1": false, "10.0.0.5": false, "172.16.1.1": false,
		"192.168.1.1": false, "169.254.169.254": false, "fe80::1": false, "fd00::5": false, "0.0.0.0": false,
		"::": false, "0.1.2.3": false, "100.64.1.1": false, "224.0.0.1": false, "ff02::1": false,
		"255.255.255.255": false, "::ffff:127.0.0.1": false, "::ffff:192.168.1.10": false, "::ffff:8.8.8.8": true,
	} {
		if got := PublicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("PublicAddr(%s) = %v; want %v", addr, got, want)
		}
	}
}

// Every special-purpose range of the IANA IPv4 and IPv6 registries
// (https://www.iana.org/assignments/iana-ipv4-special-registry,
// https://www.iana.org/assignments/iana-ipv6-special-registry) and the
// deprecated IPv6 forms are refused: the first and last address of each,
// the addresses once found accepted, and public neighbours just
// outside a range are still accepted.
func TestPublicAddrSpecialRanges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		refused []string
		public  []string // just outside the range
	}{
		{"this network 0.0.0.0/8", []string{"0.0.0.0", "0.255.255.255"}, []string{"1.0.0.1"}},
		{"private 10.0.0.0/8", []string{"10.0.0.0", "10.255.255.255"}, []string{"11.0.0.1", "9.255.255.254"}},
		{"shared 100.64.0.0/10", []string{"100.64.0.0", "100.127.255.255"}, []string{"100.63.255.254", "100.128.0.1"}},
		{"loopback 127.0.0.0/8", []string{"127.0.0.1", "127.255.255.255"}, []string{"128.0.0.1"}},
		{"link local 169.254.0.0/16", []string{"169.254.0.0", "169.254.169.254"}, []string{"169.253.255.254", "169.255.0.1"}},
		{"private 172.16.0.0/12", []string{"172.16.0.0", "172.31.255.255"}, []string{"172.15.255.254", "172.32.0.1"}},
		{"IETF protocol assignments 192.0.0.0/24", []string{"192.0.0.1", "192.0.0.9", "192.0.0.170", "192.0.0.255"}, []string{"192.0.1.1"}},
		{"TEST-NET-1 192.0.2.0/24", []string{"192.0.2.1"}, []string{"192.0.3.1"}},
		{"AS112-v4 192.31.196.0/24", []string{"192.31.196.1"}, []string{"192.31.197.1"}},
		{"AMT 192.52.193.0/24", []string{"192.52.193.1"}, []string{"192.52.194.1"}},
		{"6to4 relay anycast 192.88.99.0/24", []string{"192.88.99.1"}, []string{"192.88.100.1"}},
		{"private 192.168.0.0/16", []string{"192.168.0.0", "192.168.255.255"}, []string{"192.169.0.1"}},
		{"AS112 192.175.48.0/24", []string{"192.175.48.1"}, []string{"192.175.49.1"}},
		{"benchmarking 198.18.0.0/15", []string{"198.18.0.1", "198.19.255.255"}, []string{"198.17.255.254", "198.20.0.1"}},
		{"TEST-NET-2 198.51.100.0/24", []string{"198.51.100.1"}, []string{"198.51.101.1"}},
		{"TEST-NET-3 203.0.113.0/24", []string{"203.0.113.1"}, []string{"203.0.114.1"}},
		{"multicast 224.0.0.0/4", []string{"224.0.0.1", "239.255.255.255"}, []string{"223.255.255.254"}},
		{"reserved 240.0.0.0/4", []string{"240.0.0.1", "255.255.255.254"}, nil},
		{"broadcast", []string{"255.255.255.255"}, nil},
		{"IPv6 loopback and unspecified", []string{"::1", "::"}, nil},
		{"IPv4-mapped ::ffff:0:0/96", []string{"::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.1.2.3"}, []string{"::ffff:8.8.8.8"}},
		{"IPv4-translated ::ffff:0:0:0/96", []string{"::ffff:0:127.0.0.1", "::ffff:0:8.8.8.8"}, nil},
		{"IPv4-compatible ::/96", []string{"::127.0.0.1", "::169.254.169.254", "::8.8.8.8"}, nil},
		{"NAT64 64:ff9b::/96", []string{"64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1", "64:ff9b::808:808"}, nil},
		{"local NAT64 64:ff9b:1::/48", []string{"64:ff9b:1::a00:1", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff"}, nil},
		{"discard-only 100::/64", []string{"100::1"}, nil},
		{"dummy prefix 100:0:0:1::/64", []string{"100:0:0:1::1"}, nil},
		{"IETF protocol assignments 2001::/23", []string{"2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:2::1", "2001:4:112::1", "2001:1ff:ffff::1"},
			[]string{"2001:200::1"}},
		{"documentation 2001:db8::/32", []string{"2001:db8::1"}, []string{"2001:db9::1"}},
		{"6to4 2002::/16", []string{"2002:7f00:1::1", "2002:a9fe:a9fe::1", "2002:c0a8:101::1", "2002:808:808::1"}, []string{"2003::1"}},
		{"AS112 2620:4f:8000::/48", []string{"2620:4f:8000::1"}, []string{"2620:4f:8001::1"}},
		{"documentation 3fff::/20", []string{"3fff::1", "3fff:fff::1"}, []string{"3fff:1000::1"}},
		{"segment routing 5f00::/16", []string{"5f00::1"}, nil},
		{"unique local fc00::/7", []string{"fc00::1", "fd12:3456::1"}, nil},
		{"site-local fec0::/10", []string{"fec0::1", "feff::1"}, nil},
		{"link-local fe80::/10", []string{"fe80::1"}, nil},
		{"multicast ff00::/8", []string{"ff02::1", "ff0e::1"}, nil},
		{"outside global unicast 2000::/3", []string{"4000::1", "1fff:ffff::1", "8000::1"}, []string{"2000::1", "3ffe::1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, addr := range tt.refused {
				if PublicAddr(netip.MustParseAddr(addr)) {
					t.Errorf("PublicAddr(%s) = true; want false (%s)", addr, tt.name)
				}
			}
			for _, addr := range tt.public {
				if !PublicAddr(netip.MustParseAddr(addr)) {
					t.Errorf("PublicAddr(%s) = false; want true (outside %s)", addr, tt.name)
				}
			}
		})
	}
}

// The dialer refuses a loopback address after resolution: the listener
// never sees a connection, and the error is ErrNonPublicAddress.
func TestPublicDialContextRefusesLoopback(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan string, 16) // the remote address of each connection
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c.RemoteAddr().String()
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	dial := PublicDialContext(&net.Dialer{Timeout: 2 * time.Second})
	// "localhost" resolves to the loopback address only at dial time: the
	// case of a name that comes to resolve to a private address.
	for _, addr := range []string{"127.0.0.1:" + port, "localhost:" + port} {
		conn, err := dial(t.Context(), "tcp", addr)
		if err == nil {
			conn.Close()
			t.Errorf("PublicDialContext dialled %s; want it refused", addr)
			continue
		}
		if !errors.Is(err, ErrNonPublicAddress) {
			t.Errorf("PublicDialContext(%s) = %v; want ErrNonPublicAddress", addr, err)
		}
	}
	// Through an http.Client, as the portals' clients use it.
	hc := &http.Client{Transport: &http.Transport{DialContext: dial}}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://localhost:"+port+"/", nil)
	if resp, err := hc.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("GET through the public dialer reached loopback")
	} else if !errors.Is(err, ErrNonPublicAddress) {
		t.Errorf("GET through the public dialer: %v; want ErrNonPublicAddress", err)
	}
	// The refusals came before connect(2): the listener accepts a plain
	// connection made now before any other.
	sentinel, err := (&net.Dialer{}).DialContext(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer sentinel.Close()
	if first := <-accepted; first != sentinel.LocalAddr().String() {
		t.Errorf("the loopback listener accepted a connection from %s before the plain one; want none through the public dialer", first)
	}
}

// SearchPortals sends the domains it is given (none: every portal) and
// no search_context; Portals reads the domain list.
func TestSearchPortalsAndPortals(t *testing.T) {
	t.Parallel()
	var (
		mu  sync.Mutex
		got []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r.URL.Path+"?"+r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/catalog/v1/domains" {
			w.Write([]byte(`{"results":[{"domain":"data.ny.gov","count":3},{"domain":"data.cityofchicago.org","count":879}],"resultSetSize":2}`))
			return
		}
		w.Write([]byte(`{"results":[{"resource":{"id":"6iiy-9s97","name":"CTA"},"metadata":{"domain":"data.cityofchicago.org"}}],"resultSetSize":1}`))
	}))
	defer srv.Close()
	c := NewClient(Options{DiscoveryURL: srv.URL, BaseURL: srv.URL, MaxRetries: -1})
	ds, err := c.SearchPortals(t.Context(), "ridership", []string{"data.cityofchicago.org", "data.ny.gov"}, 3)
	if err != nil || len(ds) != 1 || ds[0].Domain != "data.cityofchicago.org" {
		t.Fatalf("SearchPortals = %+v, %v; want one dataset of data.cityofchicago.org", ds, err)
	}
	if _, err := c.SearchPortals(t.Context(), "ridership", nil, 0); err != nil {
		t.Fatal(err)
	}
	ps, err := c.CatalogDomains(t.Context())
	if err != nil || len(ps) != 2 || ps[0] != (CatalogDomain{"data.cityofchicago.org", 879}) {
		t.Fatalf("Portals = %+v, %v; want Chicago (879) first", ps, err)
	}
	want := []string{
		"/api/catalog/v1?domains=data.cityofchicago.org%2Cdata.ny.gov&limit=3&only=dataset&q=ridership",
		"/api/catalog/v1?limit=10&only=dataset&q=ridership",
		"/api/catalog/v1/domains?only=dataset",
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
