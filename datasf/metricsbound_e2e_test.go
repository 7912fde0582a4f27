//go:build e2e

package datasf_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/datasf/datasftest"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// TestMetricsPortalsBounded: get_schema on 5,000 distinct portal domains,
// each resolving to a public address (every request reaching the fake
// portal), leaves /metrics with a bounded number of series: the
// configured portal and 20 others have their own, the rest are counted
// under portal="other". The failure this guards against: 141 → 150,111 series, a scrape of 18.8
// KB → 15.9 MB, never removed. (In process: the built binary cannot be
// made to resolve invented domains to a portal without the network.)
func TestMetricsPortalsBounded(t *testing.T) {
	t.Parallel()
	fake := socratatest.NewServer(t)
	cfg := datasf.Config{}
	cfg.Socrata.HTTPClient = &http.Client{Transport: fake.Client().Transport}
	cfg.Socrata.MaxRetries = -1
	cfg.LookupIP = func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("52.206.140.205")}, nil
	}
	env := datasftest.New(t, datasftest.Options{PortalURL: fake.URL(), Config: cfg})
	if _, err := env.Call(t.Context(), "get_schema", map[string]any{"dataset_id": "abcd-1234"}); err != nil {
		t.Fatal(err)
	}
	_, before := scrape(t, env.RESTURL(), "")
	for i := range 5_000 {
		if _, err := env.Call(t.Context(), "get_schema", map[string]any{"dataset_id": "abcd-1234", "domain": fmt.Sprintf("portal-%d.example.org", i)}); err != nil {
			t.Fatal(err)
		}
	}
	_, after := scrape(t, env.RESTURL(), "")
	portals := map[string]bool{}
	for series := range after {
		if _, rest, ok := strings.Cut(series, `portal="`); ok {
			portals[rest[:strings.IndexByte(rest, '"')]] = true
		}
	}
	t.Logf("get_schema on 5,000 distinct domains: %d → %d series, %d portal labels", len(before), len(after), len(portals))
	// A portal has at most ~40 series (requests by endpoint and status, a
	// latency histogram of 13 lines by endpoint, waits).
	if len(portals) > 22 || !portals["other"] || len(after) > len(before)+22*40 {
		t.Errorf("after 5,000 domains: %d series (from %d), %d portal labels (other: %v); want at most 22 labels (the configured portal, 20 others, other) and %d series",
			len(after), len(before), len(portals), portals["other"], len(before)+22*40)
	}
}
