package portal

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// HTTPS_PROXY applies to every portal a server reaches directly, the
// configured one's, another domain's and Discovery's alike; the proxy, on
// a loopback address, is dialled (the user's choice), while a portal's own
// addresses are still checked. The environment is read once per process
// (http.ProxyFromEnvironment), so the requests run in a child process.
func TestPortalRequestsUseTheProxy(t *testing.T) {
	if os.Getenv("PORTAL_PROXY_CHILD") == "1" {
		proxyChild(t)
		return
	}
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.Host)
		mu.Unlock()
		http.Error(w, "test proxy: not forwarding", http.StatusBadGateway)
	}))
	defer proxy.Close()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestPortalRequestsUseTheProxy$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PORTAL_PROXY_CHILD=1", "HTTPS_PROXY="+proxy.URL, "https_proxy="+proxy.URL, "NO_PROXY=", "no_proxy=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	got := strings.Join(seen, "\n")
	for _, want := range []string{"CONNECT data.sf.gov:443", "CONNECT data.cityofchicago.org:443", "CONNECT api.us.socrata.com:443"} {
		if !strings.Contains(got, want) {
			t.Errorf("the proxy saw:\n%s\nwant %q", got, want)
		}
	}
}

// proxyChild sends a request to the configured portal, to another domain
// and to Discovery, each of which fails at the proxy.
func proxyChild(t *testing.T) {
	ctx := context.Background()
	reg, err := New(Options{Socrata: socrata.Options{MaxRetries: -1}, Limits: Limits{}.Resolve(false),
		LookupIP: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("52.206.140.199")}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = reg.Default().Client.Schema(ctx, "wg3w-h783")
	other, err := reg.Get(ctx, "data.cityofchicago.org")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = other.Client.Schema(ctx, "ijzp-q8t2")
	_, _ = reg.Catalog.Search(ctx, "trees", 1)
}
