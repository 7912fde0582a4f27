package portal

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Reached directly (no BaseURL), another portal's client connects only to
// public addresses, whatever its name resolved to when it was checked (a
// proxy the environment names is the user's, and is dialled); the
// configured portal's client is the caller's.
func TestDirectClientIsGuarded(t *testing.T) {
	t.Parallel()
	def := &Target{Domain: "data.sf.gov", Client: socrata.NewClient(socrata.Options{})}
	p, err := New(Options{Default: def, Socrata: socrata.Options{},
		LookupIP: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("52.206.140.199")}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.Get(t.Context(), "Data.CityOfChicago.org")
	if err != nil {
		t.Fatal(err)
	}
	if v.Domain != "data.cityofchicago.org" || v.transport == nil || v.transport.Proxy == nil {
		t.Fatalf("portal %q, transport %v; want data.cityofchicago.org with a transport of its own, proxies from the environment", v.Domain, v.transport)
	}
	// DNS rebinding: the name now points at this loopback server.
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	conn, err := v.transport.DialContext(t.Context(), "tcp", srv.Listener.Addr().String())
	if err == nil {
		conn.Close()
		t.Fatalf("the portal's transport dialled %s; want it refused", srv.Listener.Addr())
	}
	if !errors.Is(err, socrata.ErrNonPublicAddress) {
		t.Errorf("dial error %v; want socrata.ErrNonPublicAddress", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server was reached %d times", n)
	}
	if again, _ := p.Get(t.Context(), "data.cityofchicago.org"); again != v {
		t.Errorf("a second get made another portal; want the kept one")
	}
	if d, _ := p.Get(t.Context(), ""); d != def {
		t.Errorf(`get("") is not the configured portal`)
	}
	var de *socrata.DomainError
	if _, err := p.Get(t.Context(), "127.0.0.1"); !errors.As(err, &de) {
		t.Errorf(`get("127.0.0.1") = %v; want a *socrata.DomainError`, err)
	}
}
