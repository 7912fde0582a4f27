package socrata_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// These tests imitate the live portals as the evidence file describes them
// (testdata/evidence/live-portals-2026.jsonl); each names the claim.

const (
	oldSF = "data.sfgov.org"
	newSF = "data.sf.gov"
)

// hostClient is an HTTP client for srv whose requests name domain in
// their Host header, as the portal registry's are in --base-url mode.
func hostClient(srv *socratatest.Server, domain string) *http.Client {
	hc := *srv.Client()
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	hc.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Host = domain
		return next.RoundTrip(r)
	})
	return &hc
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// movedSF starts a fake that plays DataSF after its move: data.sf.gov
// serves a dataset of 37 rows, data.sfgov.org answers as the old host.
func movedSF(t *testing.T) *socratatest.Server {
	t.Helper()
	srv := socratatest.NewServer(t, socratatest.WithDomain(newSF))
	if err := srv.AddGenerated(t.Context(), socratatest.Schema{ID: "yhqp-riqs", Name: "Trees",
		Columns: []socratatest.Column{{Name: "Species", FieldName: "species", DataType: "text"}}}, 37,
		func(i int) map[string]any { return map[string]any{"species": []string{"oak", "elm"}[i%2]} }); err != nil {
		t.Fatal(err)
	}
	if err := srv.SetMoved(oldSF, newSF); err != nil {
		t.Fatal(err)
	}
	return srv
}

// sfClient is a client of srv for domain.
func sfClient(srv *socratatest.Server, domain string) *socrata.Client {
	return socrata.NewClient(socrata.Options{Domain: domain, BaseURL: srv.URL(), DiscoveryURL: srv.URL(), HTTPClient: hostClient(srv, domain), MaxRetries: -1})
}

// "data.sfgov.org answers HTTP 301 (not 302) to data.sf.gov for queries
// without $select" and "403 to any request whose query contains $select="
// (evidence moves-301, moves-select-403); "Ordered and count queries get 403
// on the legacy host; metadata and limit-only queries get 301" (evidence
// moves-ordered-count-403).
func TestMovedPortalWithoutFollowing(t *testing.T) {
	t.Parallel()
	srv := movedSF(t)
	c := sfClient(srv, oldSF)
	_, err := c.Schema(t.Context(), "yhqp-riqs")
	var mv *socrata.MovedError
	if !errors.As(err, &mv) || mv.To != newSF || mv.Domain != oldSF {
		t.Fatalf("Schema on the old host = %v; want a *MovedError to %s", err, newSF)
	}
	_, err = c.Query(t.Context(), "yhqp-riqs", "SELECT count(*) AS n")
	if !errors.As(err, &mv) || mv.StatusCode != http.StatusForbidden || mv.To != newSF {
		t.Fatalf("Query on the old host = %v; want the old host's 403 as a *MovedError to %s", err, newSF)
	}
	if !strings.Contains(err.Error(), "refused the query") || strings.Contains(strings.ToLower(err.Error()), "token") {
		t.Errorf("error %q; want it to say the old address refused the query, and nothing of tokens", err)
	}
	// The HTTP client followed nothing: no request reached the new host.
	for _, r := range srv.Requests() {
		if r.Host != oldSF {
			t.Errorf("a request went to %s %s; want none but to %s", r.Host, r.Path, oldSF)
		}
	}
}

// A move is reported, never followed: a client of a host that redirects
// sends requests to it alone; and no HTTP client follows a redirect by
// itself. (Following a move, and a loop of moves, is the portal
// registry's: internal/portal's TestRunFollowsMoves.)
func TestRedirectReportedAndNoClientRedirects(t *testing.T) {
	t.Parallel()
	var hits sync.Map
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := hits.LoadOrStore(r.Host, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		other := map[string]string{"a.example.org": "b.example.org", "b.example.org": "a.example.org"}[r.Host]
		http.Redirect(w, r, "https://"+other+r.URL.RequestURI(), http.StatusMovedPermanently)
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	var clients sync.Map
	var mk func(d string) *socrata.Client
	mk = func(d string) *socrata.Client {
		if c, ok := clients.Load(d); ok {
			return c.(*socrata.Client)
		}
		hc := *ts.Client()
		hc.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.Host = d
			return http.DefaultTransport.RoundTrip(r)
		})
		c := socrata.NewClient(socrata.Options{Domain: d, BaseURL: ts.URL, HTTPClient: &hc, MaxRetries: -1})
		kept, _ := clients.LoadOrStore(d, c)
		return kept.(*socrata.Client)
	}
	_, err := mk("a.example.org").Schema(t.Context(), "abcd-1234")
	var mv *socrata.MovedError
	if !errors.As(err, &mv) || mv.Domain != "a.example.org" || mv.To != "b.example.org" {
		t.Fatalf("Schema = %v; want a *MovedError from a.example.org to b.example.org", err)
	}
	total := 0
	hits.Range(func(host, v any) bool {
		if host != "a.example.org" {
			t.Errorf("a request went to %v; want none but to a.example.org", host)
		}
		total += int(v.(*atomic.Int32).Load())
		return true
	})
	if total > 2 { // the Views read and the row count, at once
		t.Errorf("%d requests to a host that redirects; want at most 2", total)
	}
	// The plain HTTP client: a redirect to a server that counts its hits.
	var reached atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	t.Cleanup(target.Close)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.RequestURI(), http.StatusFound)
	}))
	t.Cleanup(redirector.Close)
	c := socrata.NewClient(socrata.Options{BaseURL: redirector.URL, HTTPClient: &http.Client{}, MaxRetries: -1})
	_, err = c.Schema(t.Context(), "abcd-1234")
	if err == nil {
		t.Fatal("Schema through a redirect succeeded; want an error")
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the redirect's target was reached %d times; want the HTTP client to follow no redirect", n)
	}
}

// "DataSF answers empty-body HTTP 425 under bursts, even with an app
// token" (evidence burst-425): retried with back-off;
// when it lasts, a *RateLimitError with status 425.
func TestBurst425(t *testing.T) {
	t.Parallel()
	srv := movedSF(t)
	srv.SetBurst(2, 1)
	c := socrata.NewClient(socrata.Options{Domain: newSF, BaseURL: srv.URL(), HTTPClient: hostClient(srv, newSF), MaxRetries: 3, AppToken: "tok-425"})
	waits := socrata.RecordWaits(c)
	for i := range 6 {
		if _, err := c.Query(t.Context(), "yhqp-riqs", fmt.Sprintf("SELECT species LIMIT %d", i+1)); err != nil {
			t.Fatalf("query %d under bursts: %v", i, err)
		}
	}
	if n := len(waits()); n == 0 {
		t.Errorf("no retry waits under 425 bursts; want retries")
	}
	srv.SetBurst(0, 1) // every request: 425
	_, err := c.Query(t.Context(), "yhqp-riqs", "SELECT species LIMIT 1")
	var rl *socrata.RateLimitError
	if !errors.As(err, &rl) || rl.StatusCode != http.StatusTooEarly {
		t.Fatalf("Query under lasting 425s = %v; want a *RateLimitError with status 425", err)
	}
}

// "Anonymous throttling on NYC comes back as 403 authentication_required,
// not 429 ... the 403 clears on its own" (evidence anon-throttle-403):
// retried without a token; with one it is a refusal.
func TestAnonymousThrottle403(t *testing.T) {
	t.Parallel()
	srv := movedSF(t)
	c := socrata.NewClient(socrata.Options{Domain: newSF, BaseURL: srv.URL(), HTTPClient: hostClient(srv, newSF)})
	socrata.RecordWaits(c)
	srv.Fail(1, socratatest.Fault{Status: http.StatusForbidden, Body: socratatest.BodyAuthRequired})
	if _, err := c.Query(t.Context(), "yhqp-riqs", "SELECT species LIMIT 1"); err != nil {
		t.Fatalf("anonymous query after one authentication_required 403: %v; want it retried", err)
	}
	srv.Fail(10, socratatest.Fault{Status: http.StatusForbidden, Body: socratatest.BodyAuthRequired})
	_, err := c.Query(t.Context(), "yhqp-riqs", "SELECT species LIMIT 1")
	var api *socrata.APIError
	if !errors.As(err, &api) || api.Code != socrata.CodeAuthenticationRequired {
		t.Fatalf("lasting throttle = %v; want an *APIError authentication_required", err)
	}
}

// Answers that are not Socrata's are named for what they are: an empty
// body, an nginx page, a FortiWeb page (evidence gateway-403-fortiweb).
func TestNotSocrataAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fault socratatest.Fault
		code  string
		words string
	}{
		{"empty 503", socratatest.Fault{Status: http.StatusServiceUnavailable, Body: socratatest.BodyEmpty}, "empty_response", "empty body, not Socrata's API"},
		{"nginx 403", socratatest.Fault{Status: http.StatusForbidden, Body: socratatest.BodyNginxHTML}, "html_response", "HTML page, not Socrata's API (\"403 Forbidden\")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := movedSF(t)
			c := socrata.NewClient(socrata.Options{Domain: newSF, BaseURL: srv.URL(), HTTPClient: hostClient(srv, newSF), MaxRetries: -1})
			srv.Fail(1, tt.fault)
			_, err := c.Query(t.Context(), "yhqp-riqs", "SELECT species")
			var api *socrata.APIError
			if !errors.As(err, &api) || api.Code != tt.code || !strings.Contains(api.Message, tt.words) {
				t.Fatalf("Query = %v; want code %s saying %q", err, tt.code, tt.words)
			}
			if strings.Contains(strings.ToLower(err.Error()), "token") {
				t.Errorf("error %q speaks of tokens; the body says nothing of them", err)
			}
		})
	}
}

// "Stale replicas send the X-SODA2-Data-Out-Of-Date: true header"
// (evidence stale-replica-header).
func TestStaleReplica(t *testing.T) {
	t.Parallel()
	srv := movedSF(t)
	c := socrata.NewClient(socrata.Options{Domain: newSF, BaseURL: srv.URL(), HTTPClient: hostClient(srv, newSF)})
	res, err := c.Query(t.Context(), "yhqp-riqs", "SELECT species LIMIT 1")
	if err != nil || res.Stale {
		t.Fatalf("fresh query = %+v, %v; want not stale", res, err)
	}
	srv.SetStale(true)
	if res, err = c.Query(t.Context(), "yhqp-riqs", "SELECT species LIMIT 1"); err != nil || !res.Stale {
		t.Fatalf("stale replica's query = %+v, %v; want Stale", res, err)
	}
}

// "Berkeley's gateway returns a 403 that is not a Socrata error body": a
// FortiWeb page, malformed JSON served as text/html (evidence
// gateway-403-fortiweb). It is named as a page, not read as Socrata's error.
func TestGatewayPageIsNotSocrata(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"error": "Web Page Blocked!", "attack_id": "20000051",}`)
	}))
	t.Cleanup(srv.Close)
	c := socrata.NewClient(socrata.Options{Domain: "data.cityofberkeley.info", BaseURL: srv.URL, MaxRetries: -1})
	_, err := c.Schema(t.Context(), "abcd-1234")
	var api *socrata.APIError
	if !errors.As(err, &api) || api.Code != "html_response" || errors.Is(err, socrata.ErrNotFound) {
		t.Fatalf("Schema = %v; want an html_response APIError", err)
	}
}
