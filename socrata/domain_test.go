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
	ps, err := c.Portals(t.Context())
	if err != nil || len(ps) != 2 || ps[0] != (Portal{"data.cityofchicago.org", 879}) {
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
