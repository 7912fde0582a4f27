package viewer

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestWrapRoutesBrowsersToThePage(t *testing.T) {
	t.Parallel()
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"api":true}`))
	})
	h := Wrap("/resources/", next)
	tests := []struct {
		method, target, accept string
		wantPage               bool
	}{
		{"GET", "/resources/abc/view", "", true},
		{"GET", "/resources/abc", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true},
		{"GET", "/resources/abc", "application/json", false},
		{"GET", "/resources/abc", "", false},
		{"GET", "/resources/abc", "application/json, text/html", false},
		{"GET", "/resources/abc?offset=0&limit=10", "text/html", false},
		{"GET", "/resources/abc/export?format=csv", "text/html", false},
		{"POST", "/resources/abc/view", "text/html", false},
		{"GET", "/resources/", "text/html", false},
		{"GET", "/other/abc/view", "text/html", false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.target, nil)
		if tt.accept != "" {
			r.Header.Set("Accept", tt.accept)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		gotPage := strings.HasPrefix(w.Header().Get("Content-Type"), "text/html")
		if gotPage != tt.wantPage {
			t.Errorf("%s %s (Accept %q): page = %v; want %v", tt.method, tt.target, tt.accept, gotPage, tt.wantPage)
		}
		if gotPage && !strings.Contains(w.Body.String(), "<table id=\"rows\">") {
			t.Errorf("%s %s: body is not the viewer page", tt.method, tt.target)
		}
	}
}

func TestPageIsSelfContained(t *testing.T) {
	t.Parallel()
	// The SVG namespace is an identifier, not a resource the page loads.
	html := strings.ReplaceAll(string(Page()), `"http://www.w3.org/2000/svg"`, "")
	if !strings.Contains(html, "<!-- Built by dualresp/viewer/build.mjs") || strings.Count(html, "<script>") != 1 {
		t.Errorf("viewer page is not the one build.mjs makes (its notice and one inline script)")
	}
	for _, bad := range []string{"<script src=", "<link rel=\"stylesheet\"", "https://", "http://"} {
		if strings.Contains(html, bad) {
			t.Errorf("viewer page contains %q; it must work offline with no external resources", bad)
		}
	}
}
