package metrics

import (
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// TestPortalSeriesBounded: past MaxPortals other portals, requests count
// under portal="other"; a portal idle past PortalIdle is forgotten (its
// series removed) when a new one needs its place; the configured portal
// always keeps its own.
func TestPortalSeriesBounded(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := New(Options{MaxPortals: 3, PortalIdle: time.Hour, Now: func() time.Time { return now }})
	m.KeepPortal("Data.SF.gov")
	request := func(domain string) {
		m.OnRequest(socrata.RequestInfo{Domain: domain, Endpoint: "views", Status: 200, Took: time.Millisecond})
	}
	scrape := func() string {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		b, _ := io.ReadAll(rec.Body)
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "datasf_upstream_requests_total{") {
				lines = append(lines, l)
			}
		}
		return strings.Join(lines, "\n")
	}
	request("data.sf.gov")
	for i := range 100 {
		request(fmt.Sprintf("p%d.example.org", i))
	}
	got := scrape()
	for _, want := range []string{`portal="data.sf.gov"`, `portal="p0.example.org"`, `portal="p2.example.org"`, `portal="other",status="200"} 97`} {
		if !strings.Contains(got, want) {
			t.Errorf("after 100 portals, the series lack %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, `portal="p3.example.org"`) {
		t.Errorf("a 4th other portal has series of its own past MaxPortals 3:\n%s", got)
	}
	now = now.Add(2 * time.Hour)
	request("p2.example.org") // used again: kept
	request("new.example.org")
	got = scrape()
	if strings.Contains(got, `portal="p0.example.org"`) || !strings.Contains(got, `portal="new.example.org"`) || !strings.Contains(got, `portal="p2.example.org"`) {
		t.Errorf("after 2 idle hours: want p0 forgotten, p2 kept, new.example.org counted on its own:\n%s", got)
	}
	if !strings.Contains(got, `portal="data.sf.gov"`) {
		t.Errorf("the configured portal's series went:\n%s", got)
	}
}
