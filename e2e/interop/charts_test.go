//go:build e2e

package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/viewer"
	"github.com/datasf-mcp/datasf-mcp/e2e/harness"
)

// chartFigures is what charts.mjs reads back from a viewer page.
type chartFigures struct {
	Kind       string    `json:"kind"`
	Heading    string    `json:"heading"`
	Error      string    `json:"error"`
	Pinned     bool      `json:"pinned"`
	PinShown   bool      `json:"pin_shown"`
	Links      []string  `json:"links"`
	Role       string    `json:"role"`
	Label      string    `json:"label"`
	Note       string    `json:"note"`
	LineLabels []string  `json:"line_labels"`
	LineX      []float64 `json:"line_x"`
	LineValues []float64 `json:"line_values"`
	Polylines  int       `json:"polylines"`
	Gaps       int       `json:"gaps"`
	BarLabels  []string  `json:"bar_labels"`
	MapPoints  int       `json:"map_points"`
	MapSwapped int       `json:"map_swapped"`
	Areas      [][2]any  `json:"areas"`
	NullCells  int       `json:"null_cells"`
	Clicked    string    `json:"clicked"`
}

// analysisNeighborhoods are the 41 names of the viewer's bundled
// boundaries (dualresp/viewer/src/sf_analysis_neighborhoods.geojson).
func analysisNeighborhoods(t *testing.T) []string {
	t.Helper()
	return areaNames(t, "../dualresp/viewer/src/sf_analysis_neighborhoods.geojson")
}

// areaNames are the names of the features of a bundled boundaries' file.
func areaNames(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fc struct {
		Features []struct {
			Properties struct {
				Name string `json:"name"`
			} `json:"properties"`
		} `json:"features"`
	}
	if err := json.Unmarshal(b, &fc); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fc.Features {
		names = append(names, f.Properties.Name)
	}
	return names
}

// TestViewerChartsInChromium opens results of each kind in the viewer page
// in headless Chromium and checks the picture drawn: a monthly count
// stored largest first is a line in time order with its missing months
// shown as a gap; a grouped count with a null group is bars with a
// "(null)" bar; rows with points are a map whose points are the data's
// (outside and swapped ones counted); a count by analysis neighborhood is
// a choropleth of the data's areas and values, and so is a count by
// supervisor district (its 11 districts, given as DataSF's columns give
// them), by police district (its 10 districts, in either case) and by ZIP
// code (as text, numbers and ZIP+4). It also pins a result with
// the pin button, and opens an unknown result, whose page must say so
// rather than "Loading…". Screenshots go to $DATASF_SCREENSHOT_DIR.
func TestViewerChartsInChromium(t *testing.T) {
	node := needNode(t, "playwright-core")
	chromium := harness.Chromium(t)
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()
	kinds := map[string]*rowsExecutor{"monthly": {}, "bars": {}, "points": {}, "areas": {}, "districts": {}, "police": {}, "zips": {}}
	executors := map[string]dualresp.Executor{}
	for k, e := range kinds {
		executors[k] = e
	}
	results, err := dualresp.New(dualresp.Options{BaseURL: ts.URL, CleanupInterval: -1, Executors: executors})
	if err != nil {
		t.Fatal(err)
	}
	defer results.Close()
	mux.Handle("/resources/", viewer.Wrap("/resources/", results.Handler()))

	// A monthly count of 2018 without March and April, stored largest
	// first (ORDER BY n DESC), with a null month; its columns untyped, as
	// the MCP App gets them.
	var months []string
	for m := 1; m <= 12; m++ {
		if m == 3 || m == 4 {
			continue
		}
		months = append(months, fmt.Sprintf("2018-%02d", m))
		kinds["monthly"].rows = append(kinds["monthly"].rows, map[string]any{
			"month": fmt.Sprintf("2018-%02d-01T00:00:00.000", m), "n": fmt.Sprint(1000 + (m*373)%500)})
	}
	kinds["monthly"].rows = append(kinds["monthly"].rows, map[string]any{"month": nil, "n": "7"})
	slices.SortFunc(kinds["monthly"].rows, func(a, b map[string]any) int {
		return strings.Compare(b["n"].(string), a["n"].(string))
	})

	// Bars: a count by district, one district null; the districts are no
	// police districts' (a count by those is a map).
	for i, d := range []any{"Downtown", "Sunset", nil, "Richmond Annex"} {
		kinds["bars"].rows = append(kinds["bars"].rows, map[string]any{"district": d, "count": fmt.Sprint(900 - 200*i)})
	}

	// Points: 70 inside the city, 4 with latitude and longitude swapped,
	// 3 in Los Angeles, 2 without a point.
	const inside, swapped, outside, missing = 70, 4, 3, 2
	for i := range inside + swapped + outside + missing {
		lon, lat := -122.49+0.09*float64(i%10)/10, 37.73+0.06*float64(i/10)/8
		var pt any = map[string]any{"type": "Point", "coordinates": []float64{lon, lat}}
		switch {
		case i >= inside+swapped+outside:
			pt = nil
		case i >= inside+swapped:
			pt = map[string]any{"type": "Point", "coordinates": []float64{-118.24, 34.05}}
		case i >= inside:
			pt = map[string]any{"type": "Point", "coordinates": []float64{lat, lon}}
		}
		kinds["points"].rows = append(kinds["points"].rows, map[string]any{"truck": fmt.Sprintf("truck %d", i), "location": pt})
	}

	// Areas: a count for each analysis neighborhood, and two groups naming none.
	names := analysisNeighborhoods(t)
	wantAreas := map[string]float64{}
	for i, n := range names {
		wantAreas[n] = float64(10 + i*17)
		kinds["areas"].rows = append(kinds["areas"].rows, map[string]any{"analysis_neighborhood": n, "n": fmt.Sprint(wantAreas[n])})
	}
	kinds["areas"].rows = append(kinds["areas"].rows, map[string]any{"analysis_neighborhood": nil, "n": "5"},
		map[string]any{"analysis_neighborhood": "Atlantis", "n": "3"})

	// Districts: a count for each supervisor district, as text, numbers,
	// "03" and "District 5", and two groups naming none ("12", null).
	districts := areaNames(t, "../dualresp/viewer/src/sf_supervisor_districts.geojson")
	wantDistricts := map[string]float64{}
	for i, d := range []any{"1", 2, "03", "4.0", "District 5", "6", "7", "8", "9", "10", 11, "12", nil} {
		v := float64(100 + 37*i)
		if i < 11 {
			wantDistricts[districts[i]] = v
		}
		kinds["districts"].rows = append(kinds["districts"].rows, map[string]any{"supervisor_district": d, "n": fmt.Sprint(v)})
	}
	// Police districts: a count for each of the 10, as the incident data
	// write them (DataSF's boundaries say "TENDERLOIN", the 2018- incidents
	// "Tenderloin"), and one group naming none ("Out of SF").
	police := areaNames(t, "../dualresp/viewer/src/sf_police_districts.geojson")
	wantPolice := map[string]float64{}
	for i, d := range police {
		wantPolice[d] = float64(50 + 11*i)
		name := d
		if i%2 == 1 {
			name = strings.ToUpper(d[:1]) + strings.ToLower(d[1:])
		}
		kinds["police"].rows = append(kinds["police"].rows, map[string]any{"police_district": name, "n": fmt.Sprint(wantPolice[d])})
	}
	kinds["police"].rows = append(kinds["police"].rows, map[string]any{"police_district": "Out of SF", "n": "4"})

	// ZIP codes: a count for each of the city's, as text, numbers and
	// ZIP+4, and two groups naming none (Daly City's 94014, null).
	zips := areaNames(t, "../dualresp/viewer/src/sf_zip_codes.geojson")
	wantZips := map[string]float64{}
	for i, z := range zips {
		wantZips[z] = float64(200 + 3*i)
		var v any = z
		switch i % 3 {
		case 1:
			var n float64
			fmt.Sscan(z, &n)
			v = n
		case 2:
			v = z + "-0001"
		}
		kinds["zips"].rows = append(kinds["zips"].rows, map[string]any{"zip_code": v, "n": fmt.Sprint(wantZips[z])})
	}
	kinds["zips"].rows = append(kinds["zips"].rows, map[string]any{"zip_code": "94014", "n": "9"}, map[string]any{"zip_code": nil, "n": "2"})

	specs := map[string]dualresp.Spec{
		"monthly": {Name: "Incidents by month", Query: dualresp.Query{Kind: "monthly", Text: "SELECT date_trunc_ym(incident_date) AS month, count(*) AS n GROUP BY month ORDER BY n DESC"},
			Columns: []dualresp.Column{{Name: "month"}, {Name: "n"}}},
		"bars": {Name: "Incidents by district", Query: dualresp.Query{Kind: "bars", Text: "SELECT district, count(*) AS count GROUP BY district"},
			Columns: []dualresp.Column{{Name: "district", Type: "text"}, {Name: "count", Type: "number"}}},
		"points": {Name: "Food trucks", Query: dualresp.Query{Kind: "points", Text: "SELECT truck, location"},
			Columns: []dualresp.Column{{Name: "truck", Type: "text"}, {Name: "location", Type: "point"}}},
		"areas": {Name: "Incidents by neighborhood", Query: dualresp.Query{Kind: "areas", Text: "SELECT analysis_neighborhood, count(*) AS n GROUP BY analysis_neighborhood"},
			Columns: []dualresp.Column{{Name: "analysis_neighborhood", Type: "text"}, {Name: "n", Type: "number"}}},
		"districts": {Name: "Incidents by supervisor district", Query: dualresp.Query{Kind: "districts", Text: "SELECT supervisor_district, count(*) AS n GROUP BY supervisor_district"},
			Columns: []dualresp.Column{{Name: "supervisor_district"}, {Name: "n"}}},
		"police": {Name: "Incidents by police district", Query: dualresp.Query{Kind: "police", Text: "SELECT police_district, count(*) AS n GROUP BY police_district"},
			Columns: []dualresp.Column{{Name: "police_district", Type: "text"}, {Name: "n", Type: "number"}}},
		"zips": {Name: "Incidents by ZIP code", Query: dualresp.Query{Kind: "zips", Text: "SELECT zip_code, count(*) AS n GROUP BY zip_code"},
			Columns: []dualresp.Column{{Name: "zip_code"}, {Name: "n"}}},
	}
	args := []string{"charts.mjs", ""}
	for _, name := range []string{"monthly", "bars", "points", "areas", "districts", "police", "zips"} {
		resp, err := results.CreateResponse(t.Context(), specs[name])
		if err != nil {
			t.Fatal(err)
		}
		shot := map[string]string{"monthly": "chart-line", "bars": "chart-bars", "points": "map-points", "areas": "map-areas", "districts": "map-districts", "police": "map-police", "zips": "map-zips"}[name]
		args = append(args, shot+"="+resp.URL())
		if name == "bars" {
			args = append(args, "pin-bars="+resp.URL())
		}
	}
	args = append(args, "error="+ts.URL+"/resources/0123456789abcdef0123456789abcdef")

	shots := os.Getenv("DATASF_SCREENSHOT_DIR")
	if shots == "" {
		shots = t.TempDir()
	}
	args[1] = shots
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = append(os.Environ(), "CHROMIUM="+chromium)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node charts.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	var figs map[string]chartFigures
	if err := json.Unmarshal(out, &figs); err != nil {
		t.Fatalf("charts.mjs output %q: %v", out, err)
	}

	// The line: every month with rows, in time order, left to right.
	line := figs["chart-line"]
	if line.Kind != "line" || line.Role != "img" {
		t.Errorf("monthly count drawn as %q (role %q); want a line chart, role img", line.Kind, line.Role)
	}
	if !slices.Equal(line.LineLabels, months) {
		t.Errorf("line's points read %v; want the months in time order %v", line.LineLabels, months)
	}
	if !slices.IsSorted(line.LineX) || len(slices.Compact(slices.Clone(line.LineX))) != len(line.LineX) {
		t.Errorf("line's points' x %v; want strictly increasing (time order)", line.LineX)
	}
	if want := "line chart of n by month, 10 points from 2018-01 to 2018-12, 1 gap with no rows"; line.Label != want {
		t.Errorf("line's aria-label %q; want %q", line.Label, want)
	}
	if line.Gaps != 1 || line.Polylines != 2 {
		t.Errorf("line has %d gap bands and %d polylines; want the March–April gap as 1 band breaking the line in 2", line.Gaps, line.Polylines)
	}
	if !strings.Contains(line.Note, "1 row with no month") {
		t.Errorf("line's note %q; want the null month counted", line.Note)
	}

	// Bars: the null group is labelled (null).
	bars := figs["chart-bars"]
	if bars.Kind != "bars" || !slices.Equal(bars.BarLabels, []string{"Downtown", "Sunset", "(null)", "Richmond Annex"}) {
		t.Errorf("bars: kind %q, labels %v; want bars Downtown, Sunset, (null), Richmond Annex", bars.Kind, bars.BarLabels)
	}
	if bars.NullCells != 1 {
		t.Errorf("table shows %d (null) cells; want 1, the null district", bars.NullCells)
	}

	// Points: the data's, outside and swapped ones counted and said.
	pts := figs["map-points"]
	if pts.Kind != "points" || pts.MapPoints != inside+swapped || pts.MapSwapped != swapped {
		t.Errorf("points map: kind %q, %d points (%d swapped); want %d points, %d of them swapped", pts.Kind, pts.MapPoints, pts.MapSwapped, inside+swapped, swapped)
	}
	if want := fmt.Sprintf("map of %d points; %d points outside San Francisco not drawn; %d points with latitude and longitude swapped, drawn where they belong; %d rows with no location",
		inside+swapped, outside, swapped, missing); pts.Label != want {
		t.Errorf("points map's aria-label %q; want %q", pts.Label, want)
	}
	if !strings.Contains(pts.Clicked, "truck: truck 0") {
		t.Errorf("a click on the map's first point shows %q; want its row (truck: truck 0)", pts.Clicked)
	}
	if !slices.Contains(pts.Links, "geojson") {
		t.Errorf("download links %v of a result with points; want a geojson one", pts.Links)
	}

	// Areas: each neighborhood's value, the unmatched groups counted.
	areas := figs["map-areas"]
	if areas.Kind != "areas" || len(areas.Areas) != len(names) {
		t.Errorf("areas map: kind %q, %d areas; want %d", areas.Kind, len(areas.Areas), len(names))
	}
	for _, a := range areas.Areas {
		name, _ := a[0].(string)
		if v, _ := a[1].(float64); v != wantAreas[name] {
			t.Errorf("area %q drawn with %v; the data has %v", name, a[1], wantAreas[name])
		}
	}
	if want := fmt.Sprintf("%s: %v", names[0], wantAreas[names[0]]); areas.Clicked != want {
		t.Errorf("a click on the map's first area shows %q; want %q", areas.Clicked, want)
	}
	if want := fmt.Sprintf("map of n by analysis_neighborhood, %d areas; 2 groups naming no area", len(names)); areas.Label != want {
		t.Errorf("areas map's aria-label %q; want %q", areas.Label, want)
	}

	// Districts: the 11 supervisor districts, each with the data's value.
	dists := figs["map-districts"]
	if dists.Kind != "areas" || len(dists.Areas) != len(districts) || len(districts) != 11 {
		t.Errorf("districts map: kind %q, %d areas drawn of %d bundled; want the 11 supervisor districts", dists.Kind, len(dists.Areas), len(districts))
	}
	for _, a := range dists.Areas {
		name, _ := a[0].(string)
		if v, _ := a[1].(float64); v != wantDistricts[name] {
			t.Errorf("district %q drawn with %v; the data has %v", name, a[1], wantDistricts[name])
		}
	}
	if want := "map of n by supervisor_district, 11 areas; 2 groups naming no area"; dists.Label != want {
		t.Errorf("districts map's aria-label %q; want %q", dists.Label, want)
	}
	if !strings.Contains(dists.Note, "2 groups naming no supervisor district not drawn: ") || !strings.Contains(dists.Note, "12") || !strings.Contains(dists.Note, "(null)") {
		t.Errorf("districts map's note %q; want the groups naming no district said", dists.Note)
	}
	if dists.Clicked != "District 1: 100" {
		t.Errorf("a click on the map's first district shows %q; want %q", dists.Clicked, "District 1: 100")
	}
	// Police districts: the 10, each with the data's value whatever its case.
	pd := figs["map-police"]
	if pd.Kind != "areas" || len(pd.Areas) != len(police) || len(police) != 10 {
		t.Errorf("police districts map: kind %q, %d areas drawn of %d bundled; want the 10 police districts", pd.Kind, len(pd.Areas), len(police))
	}
	for _, a := range pd.Areas {
		name, _ := a[0].(string)
		if v, _ := a[1].(float64); v != wantPolice[name] {
			t.Errorf("police district %q drawn with %v; the data has %v", name, a[1], wantPolice[name])
		}
	}
	if want := "map of n by police_district, 10 areas; 1 group naming no area"; pd.Label != want {
		t.Errorf("police districts map's aria-label %q; want %q", pd.Label, want)
	}
	if !strings.Contains(pd.Note, "1 group naming no police district not drawn: Out of SF") {
		t.Errorf("police districts map's note %q; want the group naming no district said", pd.Note)
	}
	if want := fmt.Sprintf("Bayview: %v", wantPolice["BAYVIEW"]); pd.Clicked != want {
		t.Errorf("a click on the map's first police district shows %q; want %q", pd.Clicked, want)
	}

	// ZIP codes: the city's 27, each with the data's value.
	zm := figs["map-zips"]
	if zm.Kind != "areas" || len(zm.Areas) != len(zips) || len(zips) != 27 {
		t.Errorf("ZIP codes map: kind %q, %d areas drawn of %d bundled; want the 27 ZIP codes", zm.Kind, len(zm.Areas), len(zips))
	}
	for _, a := range zm.Areas {
		name, _ := a[0].(string)
		if v, _ := a[1].(float64); v != wantZips[name] {
			t.Errorf("ZIP code %q drawn with %v; the data has %v", name, a[1], wantZips[name])
		}
	}
	if want := "map of n by zip_code, 27 areas; 2 groups naming no area"; zm.Label != want {
		t.Errorf("ZIP codes map's aria-label %q; want %q", zm.Label, want)
	}
	if !strings.Contains(zm.Note, "2 groups naming no ZIP code not drawn: ") || !strings.Contains(zm.Note, "94014") || !strings.Contains(zm.Note, "(null)") {
		t.Errorf("ZIP codes map's note %q; want the groups naming no ZIP code said", zm.Note)
	}

	// The pin button pins the result.
	if pin := figs["pin-bars"]; !pin.PinShown || !pin.Pinned || pin.Error != "" {
		t.Errorf("pin button: shown %v, pinned %v, error %q; want shown and pinned", pin.PinShown, pin.Pinned, pin.Error)
	}
	var info struct {
		Pinned bool `json:"pinned"`
	}
	if err := getJSON(t, strings.TrimPrefix(args[4], "pin-bars="), &info); err != nil || !info.Pinned {
		t.Errorf("after the pin button, GET %s: pinned %v (%v); want pinned", args[4], info.Pinned, err)
	}

	// An unknown result: the page says so.
	if e := figs["error"]; e.Heading != "Result not found" || !strings.Contains(e.Error, "Could not load this result") {
		t.Errorf("unknown result's page: heading %q, error %q; want \"Result not found\" and the reason", e.Heading, e.Error)
	}
	t.Logf("charts in Chromium: screenshots in %s: %s", shots, out)
}

func getJSON(t *testing.T, url string, v any) error {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
