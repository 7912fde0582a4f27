// Package viewer serves a result viewer page for dualresp results: the
// result's name, query and total, a sortable paginated table over the REST
// API, CSV/NDJSON download links, and a bar chart when the result is a
// grouped count or sum. The page is self-contained (no CDN), so it works
// offline.
//
// The page is the REST host of the one result viewer whose source is in
// src/: build.mjs bundles src/viewer.js with src/rest.js into view.html,
// and with an MCP Apps host into the datasf MCP App (see
// datasf/app/README.md).
//
// Wrap the dualresp REST handler with Wrap: GET /resources/{id}/view, and
// GET /resources/{id} from a browser (Accept: text/html, no paging
// parameters), get the page; everything else goes to the REST handler.
package viewer

import (
	_ "embed"
	"net/http"
	"strings"
)

//go:embed view.html
var page []byte

//go:embed src/sf_analysis_neighborhoods.geojson
var neighborhoods []byte

// Neighborhoods returns the boundaries the viewer's maps draw: San
// Francisco's 41 analysis neighborhoods (DataSF p5b7-5n3h, public domain;
// see testdata/SOURCES.md), simplified, as a GeoJSON FeatureCollection
// whose features have the property "name".
func Neighborhoods() []byte { return neighborhoods }

//go:embed src/sf_supervisor_districts.geojson
var supervisorDistricts []byte

// SupervisorDistricts returns the boundaries of San Francisco's 11
// supervisor districts of 2022 (DataSF f2zs-jevy, public domain; see
// testdata/SOURCES.md), clipped to the city's neighborhoods' box and
// simplified, as a GeoJSON FeatureCollection whose features' "name" is the
// district's number ("1" to "11").
func SupervisorDistricts() []byte { return supervisorDistricts }

//go:embed src/sf_police_districts.geojson
var policeDistricts []byte

// PoliceDistricts returns the boundaries of San Francisco's 10 police
// districts (DataSF's "Current Police Districts", public domain; see
// testdata/SOURCES.md), simplified, as a GeoJSON FeatureCollection whose
// features' "name" is the district's name as DataSF writes it
// ("BAYVIEW" to "TENDERLOIN").
func PoliceDistricts() []byte { return policeDistricts }

//go:embed src/sf_zip_codes.geojson
var zipCodes []byte

// ZIPCodes returns the boundaries of San Francisco's 27 ZIP codes
// (DataSF srq6-hmpi, "San Francisco ZIP Codes", public domain; see
// testdata/SOURCES.md), one feature a ZIP code, simplified, as a GeoJSON
// FeatureCollection whose features' "name" is the ZIP code ("94102").
func ZIPCodes() []byte { return zipCodes }

// Page returns the viewer page's HTML.
func Page() []byte { return page }

// Wrap returns a handler that serves the viewer page for result URLs asked
// for as HTML and passes every other request to next. prefix is where the
// results are mounted, normally "/resources/".
func Wrap(prefix string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wantsPage(prefix, r) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			_, _ = w.Write(page)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func wantsPage(prefix string, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	rest, ok := strings.CutPrefix(r.URL.Path, prefix)
	if !ok || rest == "" {
		return false
	}
	id, tail, _ := strings.Cut(rest, "/")
	if id == "" {
		return false
	}
	switch tail {
	case "view":
		return true
	case "":
		q := r.URL.Query()
		if q.Has("offset") || q.Has("skip") || q.Has("limit") {
			return false
		}
		return prefersHTML(r.Header.Get("Accept"))
	}
	return false
}

// prefersHTML reports whether an Accept header asks for HTML before JSON, as
// browsers' navigation requests do.
func prefersHTML(accept string) bool {
	html := strings.Index(accept, "text/html")
	if html < 0 {
		return false
	}
	js := strings.Index(accept, "application/json")
	return js < 0 || html < js
}
