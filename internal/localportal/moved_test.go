package localportal

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The old host of a moved portal, as the evidence describes data.sfgov.org
// (evidence moves-301, moves-ordered-count-403): 301 to the same path and
// query on the new host for plain reads, a bare nginx 403 page for
// anything with $select or $query; Discovery is not the portal's.
func TestSetMovedAnswers(t *testing.T) {
	t.Parallel()
	p, err := New(Options{Domain: "data.sf.gov"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.SetMoved("data.sfgov.org", "data.sf.gov"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		target   string
		status   int
		location string
		html     bool
	}{
		{"/api/views/pep9-66vw.json", http.StatusMovedPermanently, "https://data.sf.gov/api/views/pep9-66vw.json", true},
		{"/resource/pep9-66vw.json?$limit=1000", http.StatusMovedPermanently, "https://data.sf.gov/resource/pep9-66vw.json?$limit=1000", true},
		{"/resource/pep9-66vw.json?$select=sup_dist_num", http.StatusForbidden, "", true},
		{"/resource/pep9-66vw.json?$query=SELECT+count(*)", http.StatusForbidden, "", true},
		{"/api/catalog/v1?domains=data.sfgov.org", http.StatusOK, "", false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, "http://data.sfgov.org"+tt.target, nil)
		w := httptest.NewRecorder()
		p.Handler().ServeHTTP(w, r)
		html := strings.HasPrefix(w.Header().Get("Content-Type"), "text/html")
		if w.Code != tt.status || w.Header().Get("Location") != tt.location || html != tt.html {
			t.Errorf("GET %s on the old host: %d, Location %q, HTML %v; want %d, %q, %v", tt.target, w.Code, w.Header().Get("Location"), html, tt.status, tt.location, tt.html)
		}
		if tt.status == http.StatusForbidden && !strings.Contains(w.Body.String(), "<center>nginx</center>") {
			t.Errorf("GET %s: body %q; want the bare nginx page", tt.target, w.Body.String())
		}
	}
	// The new host is served as before.
	r := httptest.NewRequest(http.MethodGet, "http://data.sf.gov/api/views/nope-0000.json", nil)
	w := httptest.NewRecorder()
	p.Handler().ServeHTTP(w, r)
	if w.Code != http.StatusNotFound || strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
		t.Errorf("new host: %d %s; want Socrata's JSON 404", w.Code, w.Header().Get("Content-Type"))
	}
	// --data with the old name serves the new one.
	if d, rest := SplitDomainSpec("data.sfgov.org=wg3w-h783=incidents.csv"); d != "data.sf.gov" || rest != "wg3w-h783=incidents.csv" {
		t.Errorf("SplitDomainSpec(old name) = %q, %q; want data.sf.gov", d, rest)
	}
}
