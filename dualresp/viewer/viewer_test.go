package viewer

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
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

// TestBoundaries checks the bundled boundaries: each file's areas (their
// number and names) and that every vertex lies in San Francisco's box.
func TestBoundaries(t *testing.T) {
	t.Parallel()
	police := []string{"BAYVIEW", "CENTRAL", "INGLESIDE", "MISSION", "NORTHERN", "PARK", "RICHMOND", "SOUTHERN", "TARAVAL", "TENDERLOIN"}
	zip := regexp.MustCompile(`^941\d\d$`)
	tests := []struct {
		name  string
		b     []byte
		n     int
		names []string               // when given, exactly these
		valid func(name string) bool // when given, every name passes
	}{
		{"neighborhoods", Neighborhoods(), 41, nil, nil},
		{"supervisor districts", SupervisorDistricts(), 11, []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}, nil},
		{"police districts", PoliceDistricts(), 10, police, nil},
		{"ZIP codes", ZIPCodes(), 27, nil, zip.MatchString},
	}
	for _, tt := range tests {
		var fc struct {
			Features []struct {
				Properties struct {
					Name string `json:"name"`
				} `json:"properties"`
				Geometry struct {
					Type        string          `json:"type"`
					Coordinates json.RawMessage `json:"coordinates"`
				} `json:"geometry"`
			} `json:"features"`
		}
		if err := json.Unmarshal(tt.b, &fc); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var names []string
		vertices := 0
		for _, f := range fc.Features {
			names = append(names, f.Properties.Name)
			var polys [][][][2]float64
			if f.Geometry.Type == "Polygon" {
				var rings [][][2]float64
				if err := json.Unmarshal(f.Geometry.Coordinates, &rings); err != nil {
					t.Fatalf("%s %s: %v", tt.name, f.Properties.Name, err)
				}
				polys = [][][][2]float64{rings}
			} else if err := json.Unmarshal(f.Geometry.Coordinates, &polys); err != nil {
				t.Fatalf("%s %s (%s): %v", tt.name, f.Properties.Name, f.Geometry.Type, err)
			}
			for _, rings := range polys {
				for _, ring := range rings {
					for _, c := range ring {
						vertices++
						if c[0] < -122.52 || c[0] > -122.35 || c[1] < 37.70 || c[1] > 37.84 {
							t.Errorf("%s %s: vertex %v outside San Francisco's box", tt.name, f.Properties.Name, c)
						}
					}
				}
			}
		}
		if len(names) != tt.n || len(slices.Compact(slices.Sorted(slices.Values(names)))) != tt.n {
			t.Errorf("%s: %d areas (%d distinct names); want %d", tt.name, len(names), len(slices.Compact(slices.Sorted(slices.Values(names)))), tt.n)
		}
		if tt.names != nil && !slices.Equal(names, tt.names) {
			t.Errorf("%s: names %v; want %v", tt.name, names, tt.names)
		}
		for _, n := range names {
			if tt.valid != nil && !tt.valid(n) {
				t.Errorf("%s: name %q", tt.name, n)
			}
		}
		if vertices == 0 || len(tt.b) > 32<<10 {
			t.Errorf("%s: %d vertices, %d bytes; want a simplified file within 32 KiB", tt.name, vertices, len(tt.b))
		}
	}
}
