package localportal

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
	"github.com/datasf-mcp/datasf-mcp/internal/soqlsqlite"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// These tests load the fixtures as a user has them: the JSON fixtures
// written out as the portal's CSV export writes them (display-name headers,
// "2019/11/12 10:53:00 PM" timestamps, "(lat, lon)" points, location cells),
// a GeoJSON export, the JSON and rows.json files as they are; then they
// compare query answers with the same figures computed here, in Go, from
// the JSON fixture.

// catalogPath is the shared catalog fixture.
func catalogPath(t *testing.T) string {
	t.Helper()
	return fixtures.Path(t, "catalog", "datasf-catalog-630-with-signals.jsonl")
}

// catalogColumns reads one dataset's columns from the catalog fixture.
func catalogColumns(t *testing.T, id string) (string, []socrata.Column) {
	t.Helper()
	p := New0(t)
	if err := p.LoadCatalog(t.Context(), catalogPath(t)); err != nil {
		t.Fatal(err)
	}
	sc, ok := p.Schema(id)
	if !ok {
		t.Fatalf("catalog has no %s", id)
	}
	return sc.Name, sc.Columns
}

// New0 is an unstarted portal closed when t ends.
func New0(t *testing.T) *Emulator {
	t.Helper()
	p, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// portalTimestamp writes an ISO floating timestamp as the CSV export does:
// "2019/11/12 10:53:00 PM".
func portalTimestamp(t *testing.T, iso string) string {
	t.Helper()
	ts, err := time.Parse("2006-01-02T15:04:05.000", iso)
	if err != nil {
		t.Fatalf("fixture timestamp %q: %v", iso, err)
	}
	return ts.Format("2006/01/02 03:04:05 PM")
}

// writeCSV writes header and records to dir/name.
func writeCSV(t *testing.T, dir, name string, header []string, records [][]string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	if err := w.Write(header); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteAll(records); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// incidentsCSV writes the wg3w-h783 fixture as the portal's CSV export,
// under the portal's download name, and returns its path.
func incidentsCSV(t *testing.T, dir string) string {
	t.Helper()
	rows := readResourceRows(t, "wg3w-h783")
	_, cols := catalogColumns(t, "wg3w-h783")
	var header []string
	var fields []socrata.Column
	for _, c := range cols {
		if strings.HasPrefix(c.FieldName, ":") {
			continue // the fixture has no computed regions
		}
		header = append(header, c.Name)
		fields = append(fields, c)
	}
	var records [][]string
	for _, r := range rows {
		rec := make([]string, len(fields))
		for i, c := range fields {
			v, ok := r[c.FieldName]
			if !ok {
				continue
			}
			switch c.DataType {
			case "calendar_date":
				rec[i] = portalTimestamp(t, v.(string))
			case "point":
				coords := v.(map[string]any)["coordinates"].([]any)
				rec[i] = fmt.Sprintf("(%v, %v)", coords[1], coords[0]) // latitude first
			case "checkbox":
				rec[i] = strconv.FormatBool(v.(bool))
			default:
				rec[i] = v.(string)
			}
		}
		records = append(records, rec)
	}
	return writeCSV(t, dir, "Police_Department_Incident_Reports__2018_to_Present.csv", header, records)
}

// haversineMeters is the great-circle distance, written independently of
// the portal's.
func haversineMeters(lat1, lon1, lat2, lon2 float64) float64 {
	const r = 6371008.8
	p1, p2 := lat1*math.Pi/180, lat2*math.Pi/180
	dp, dl := p2-p1, (lon2-lon1)*math.Pi/180
	h := math.Pow(math.Sin(dp/2), 2) + math.Cos(p1)*math.Cos(p2)*math.Pow(math.Sin(dl/2), 2)
	return 2 * r * math.Asin(math.Sqrt(h))
}

func pointOf(r map[string]any) (lat, lon float64, ok bool) {
	p, ok := r["point"].(map[string]any)
	if !ok {
		return 0, 0, false
	}
	c := p["coordinates"].([]any)
	return c[1].(float64), c[0].(float64), true
}

func count(t *testing.T, p *Emulator, id, soqlText string) int {
	t.Helper()
	rows := query(t, p, id, soqlText)
	n, err := strconv.Atoi(fmt.Sprint(rows[0]["n"]))
	if err != nil {
		t.Fatalf("%s: count %v: %v", soqlText, rows[0]["n"], err)
	}
	return n
}

// TestLoadIncidentsCSVAsExported loads the police export as the portal gives it: download
// name, display-name headers, "(lat, lon)" points, 12-hour timestamps.
func TestLoadIncidentsCSVAsExported(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := incidentsCSV(t, dir)
	p := newPortal(t)
	reports, err := p.LoadFiles(t.Context(), []string{catalogPath(t), path}, LoadOptions{Strict: true})
	if err != nil {
		t.Fatalf("LoadFiles: %v", err)
	}
	rep := reports[len(reports)-1]
	if rep.ID != "wg3w-h783" || rep.MatchedBy != "catalog name" || rep.Rows != 1000 || rep.BadValues != 0 {
		t.Fatalf("report = id %s matched by %q, %d rows, %d bad values; want wg3w-h783, catalog name, 1000, 0",
			rep.ID, rep.MatchedBy, rep.Rows, rep.BadValues)
	}
	rows := readResourceRows(t, "wg3w-h783")

	// Timestamps compare as timestamps.
	lo, hi := "2019-11-05T00:00:00.000", "2019-11-09T23:59:59.000"
	want := 0
	minTS := ""
	days := map[string]int{}
	for _, r := range rows {
		ts := r["incident_datetime"].(string)
		if ts >= lo && ts <= hi {
			want++
		}
		if minTS == "" || ts < minTS {
			minTS = ts
		}
		days[ts[:10]+"T00:00:00.000"]++
	}
	got := count(t, p, "wg3w-h783", "SELECT count(*) AS n WHERE incident_datetime BETWEEN '2019-11-05T00:00:00' AND '2019-11-09T23:59:59'")
	t.Logf("incident_datetime BETWEEN 2019-11-05 and 2019-11-09: %d rows (independent: %d)", got, want)
	if got != want || want == 0 {
		t.Errorf("BETWEEN count = %d; want %d", got, want)
	}
	if got := query(t, p, "wg3w-h783", "SELECT min(incident_datetime) AS m")[0]["m"]; got != minTS {
		t.Errorf("min(incident_datetime) = %v; want %s", got, minTS)
	}
	gotDays := map[string]int{}
	for _, r := range query(t, p, "wg3w-h783", "SELECT date_trunc_ymd(incident_datetime) AS d, count(*) AS n GROUP BY d LIMIT 5000") {
		n, _ := strconv.Atoi(r["n"].(string))
		gotDays[r["d"].(string)] = n
	}
	if diff := cmp.Diff(days, gotDays); diff != "" {
		t.Errorf("counts by date_trunc_ymd (-want +got):\n%s", diff)
	}

	// Points: within_circle against a haversine computed here.
	const lat, lon, radius = 37.7858, -122.4197, 800.0
	want = 0
	for _, r := range rows {
		if la, lo, ok := pointOf(r); ok && haversineMeters(lat, lon, la, lo) <= radius {
			want++
		}
	}
	got = count(t, p, "wg3w-h783", fmt.Sprintf("SELECT count(*) AS n WHERE within_circle(point, %v, %v, %v)", lat, lon, radius))
	t.Logf("within_circle(point, %v, %v, %v): %d rows (independent: %d)", lat, lon, radius, got, want)
	if got != want || want == 0 {
		t.Errorf("within_circle count = %d; want %d", got, want)
	}

	// Checkboxes and numbers.
	want = 0
	sum := 0
	for _, r := range rows {
		if b, _ := r["filed_online"].(bool); b {
			want++
		}
		if d, ok := r["supervisor_district"].(string); ok {
			n, _ := strconv.Atoi(d)
			sum += n
		}
	}
	if got := count(t, p, "wg3w-h783", "SELECT count(*) AS n WHERE filed_online = true"); got != want {
		t.Errorf("filed_online = true: %d rows; want %d", got, want)
	}
	if got := query(t, p, "wg3w-h783", "SELECT sum(supervisor_district) AS s")[0]["s"]; got != strconv.Itoa(sum) {
		t.Errorf("sum(supervisor_district) = %v; want %d", got, sum)
	}
	t.Logf("filed_online = true: %d rows; sum(supervisor_district) = %d", want, sum)
}

// locationCell writes a location as the CSV export does: address lines,
// then "(lat, lon)".
func locationCell(address string, lat, lon string) string {
	if address == "" {
		return fmt.Sprintf("(%s, %s)", lat, lon)
	}
	return fmt.Sprintf("%s\nSAN FRANCISCO, CA\n(%s, %s)", address, lat, lon)
}

// TestLoad311CSVLocationColumn loads 311 cases from a CSV whose "Point"
// column is a location (catalog type location, field "point") written with
// an address and "(lat, lon)", and whose timestamps are "MM/DD/YYYY hh:mm:ss AM".
func TestLoad311CSVLocationColumn(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(fixtureFile(t, "vw6y-z8j6", ".rows.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Meta struct {
			View struct {
				Columns []struct {
					FieldName string `json:"fieldName"`
				} `json:"columns"`
			} `json:"view"`
		} `json:"meta"`
		Data [][]any `json:"data"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	idx := map[string]int{}
	for i, c := range doc.Meta.View.Columns {
		idx[c.FieldName] = i
	}
	header := []string{"CaseID", "Opened", "Status", "Address", "Point", "Media URL"}
	var records [][]string
	type cs struct {
		opened   string
		lat, lon float64
		hasPoint bool
		status   string
	}
	var cases []cs
	for _, row := range doc.Data {
		str := func(f string) string {
			if v, ok := row[idx[f]].(string); ok {
				return v
			}
			return ""
		}
		opened, _ := time.Parse("2006-01-02T15:04:05", str("requested_datetime"))
		c := cs{opened: opened.Format("2006-01-02T15:04:05.000"), status: str("status_description")}
		loc, _ := row[idx["point"]].([]any)
		cell := ""
		if len(loc) > 2 && loc[1] != nil {
			c.lat, _ = strconv.ParseFloat(loc[1].(string), 64)
			c.lon, _ = strconv.ParseFloat(loc[2].(string), 64)
			c.hasPoint = true
			cell = locationCell(str("address"), loc[1].(string), loc[2].(string))
		}
		media := ""
		if u, ok := row[idx["media_url"]].([]any); ok && len(u) > 0 && u[0] != nil {
			media = u[0].(string)
		}
		cases = append(cases, c)
		records = append(records, []string{str("service_request_id"), opened.Format("01/02/2006 03:04:05 PM"), c.status,
			str("address"), cell, media})
	}
	dir := t.TempDir()
	path := writeCSV(t, dir, "311_Cases.csv", header, records)
	p := newPortal(t)
	reports, err := p.LoadFiles(t.Context(), []string{catalogPath(t), path}, LoadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	rep := reports[len(reports)-1]
	if rep.ID != "vw6y-z8j6" || rep.Rows != int64(len(cases)) || len(rep.Inferred) != 0 {
		t.Fatalf("report: id %s, %d rows, inferred %v; want vw6y-z8j6, %d rows, none", rep.ID, rep.Rows, rep.Inferred, len(cases))
	}
	const lat, lon, radius = 37.7749, -122.4194, 1500.0
	want, open := 0, 0
	for _, c := range cases {
		if c.hasPoint && haversineMeters(lat, lon, c.lat, c.lon) <= radius {
			want++
		}
		if c.opened >= "2020-02-01T00:00:00.000" && c.status == "Open" {
			open++
		}
	}
	got := count(t, p, "vw6y-z8j6", fmt.Sprintf("SELECT count(*) AS n WHERE within_circle(point, %v, %v, %v)", lat, lon, radius))
	t.Logf("311 within_circle(point (a location), %v, %v, %v): %d (independent: %d)", lat, lon, radius, got, want)
	if got != want || want == 0 {
		t.Errorf("within_circle on the location column = %d; want %d", got, want)
	}
	got = count(t, p, "vw6y-z8j6", "SELECT count(*) AS n WHERE requested_datetime >= '2020-02-01' AND status_description = 'Open'")
	t.Logf("311 opened since 2020-02-01 and Open: %d (independent: %d)", got, open)
	if got != open {
		t.Errorf("requested_datetime >= '2020-02-01' AND Open = %d; want %d", got, open)
	}
	// The location keeps its address.
	r := query(t, p, "vw6y-z8j6", "SELECT point WHERE point IS NOT NULL AND address IS NOT NULL ORDER BY :id LIMIT 1")
	loc, _ := r[0]["point"].(map[string]any)
	if loc["latitude"] == nil || !strings.Contains(fmt.Sprint(loc["human_address"]), "SAN FRANCISCO") {
		t.Errorf("first location = %v; want latitude, longitude and the address", r[0]["point"])
	}
}

// TestLoadWithoutCatalogInfersTypes loads the food truck fixture as a CSV
// with no catalog: numbers must be numbers, dates dates, codes text.
func TestLoadWithoutCatalogInfersTypes(t *testing.T) {
	t.Parallel()
	rows := readResourceRows(t, "rqzj-sfat")
	header := []string{"Applicant", "cnn", "blocklot", "lot", "Latitude", "Approved", "Location", "PriorPermit"}
	fields := []string{"applicant", "cnn", "blocklot", "lot", "latitude", "approved", "location", "priorpermit"}
	var records [][]string
	maxCNN, big := 0.0, 0
	for _, r := range rows {
		rec := make([]string, len(fields))
		for i, f := range fields {
			switch v := r[f].(type) {
			case string:
				if f == "approved" {
					v = portalTimestamp(t, v)
				}
				rec[i] = v
			case map[string]any:
				if v["latitude"] != nil {
					rec[i] = fmt.Sprintf("(%v, %v)", v["latitude"], v["longitude"])
				}
			}
		}
		if c, err := strconv.ParseFloat(rec[1], 64); err == nil {
			maxCNN = max(maxCNN, c)
			if c > 9_000_000 {
				big++
			}
		}
		records = append(records, rec)
	}
	dir := t.TempDir()
	path := writeCSV(t, dir, "food_trucks_2022.csv", header, records)
	p := newPortal(t)
	reports, err := p.LoadFiles(t.Context(), []string{path}, LoadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	rep := reports[0]
	if rep.MatchedBy != "new dataset" || rep.Name != "food trucks 2022" || !isDatasetID(rep.ID) {
		t.Fatalf("report = %+v; want a new dataset named after the file", rep)
	}
	types := map[string]string{}
	for _, c := range rep.Columns {
		types[c.FieldName] = c.DataType
	}
	wantTypes := map[string]string{"applicant": "text", "cnn": "number", "blocklot": "text", "lot": "text",
		"latitude": "number", "approved": "calendar_date", "location": "point", "priorpermit": "number"}
	if diff := cmp.Diff(wantTypes, types); diff != "" {
		t.Errorf("inferred types (-want +got):\n%s", diff)
	}
	sc, _ := p.Schema(rep.ID)
	if sc.Name != "food trucks 2022" {
		t.Errorf("schema name = %q; want the file's name", sc.Name)
	}
	if got := query(t, p, rep.ID, "SELECT max(cnn) AS m")[0]["m"]; got != soqlsqlite.FormatFloat(maxCNN) {
		t.Errorf("max(cnn) = %v; want %v", got, soqlsqlite.FormatFloat(maxCNN))
	}
	if got := count(t, p, rep.ID, "SELECT count(*) AS n WHERE cnn > 9000000"); got != big {
		t.Errorf("cnn > 9000000: %d; want %d", got, big)
	}
	t.Logf("no catalog: max(cnn) = %v, cnn > 9,000,000: %d rows", soqlsqlite.FormatFloat(maxCNN), big)
}

// TestLoadFormatsAsDownloaded loads the JSON, rows.json+view.json fixtures
// as they are and a GeoJSON export built from the incidents, matched by id,
// and an explicit ID=FILE.
func TestLoadFormatsAsDownloaded(t *testing.T) {
	t.Parallel()
	rows := readResourceRows(t, "wg3w-h783")
	var features []map[string]any
	for _, r := range rows {
		props := map[string]any{}
		for k, v := range r {
			if k != "point" {
				props[k] = v
			}
		}
		f := map[string]any{"type": "Feature", "properties": props, "geometry": nil}
		if pt, ok := r["point"]; ok {
			f["geometry"] = pt
		}
		features = append(features, f)
	}
	b, _ := json.Marshal(map[string]any{"type": "FeatureCollection", "features": features})
	dir := t.TempDir()
	geo := filepath.Join(dir, "wg3w-h783.geojson")
	if err := os.WriteFile(geo, b, 0o644); err != nil {
		t.Fatal(err)
	}
	p := newPortal(t)
	specs := []string{catalogPath(t), geo,
		fixtureFile(t, "yitu-d5am", ".rows.json"), fixtureFile(t, "yitu-d5am", ".view.json"),
		"abcd-1234=" + fixtureFile(t, "rqzj-sfat", ".json")}
	reports, err := p.LoadFiles(t.Context(), specs, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range reports {
		got[filepath.Base(r.Path)] = fmt.Sprintf("%s %s %s %d", r.Format, r.ID, r.MatchedBy, r.Rows)
	}
	var films struct {
		Data []json.RawMessage `json:"data"`
	}
	fb, err := os.ReadFile(fixtureFile(t, "yitu-d5am", ".rows.json"))
	if err != nil || json.Unmarshal(fb, &films) != nil {
		t.Fatalf("reading the films fixture: %v", err)
	}
	want := map[string]string{
		"wg3w-h783.geojson":                                    "geojson wg3w-h783 file name id 1000",
		"yitu-d5am__film-locations__2015-08.rows.json":         fmt.Sprintf("rows.json yitu-d5am file name id %d", len(films.Data)),
		"rqzj-sfat__mobile-food-facility-permit__2022-03.json": "json abcd-1234 explicit 487",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	const lat, lon, radius = 37.7858, -122.4197, 800.0
	n := 0
	for _, r := range rows {
		if la, lo, ok := pointOf(r); ok && haversineMeters(lat, lon, la, lo) <= radius {
			n++
		}
	}
	if got := count(t, p, "wg3w-h783", fmt.Sprintf("SELECT count(*) AS n WHERE within_circle(point, %v, %v, %v)", lat, lon, radius)); got != n {
		t.Errorf("GeoJSON within_circle = %d; want %d", got, n)
	}
	approved := 0
	for _, r := range readResourceRows(t, "rqzj-sfat") {
		if r["status"] == "APPROVED" {
			approved++
		}
	}
	if got := count(t, p, "abcd-1234", "SELECT count(*) AS n WHERE status = 'APPROVED'"); got != approved {
		t.Errorf("ID=FILE dataset: APPROVED = %d; want %d", got, approved)
	}
}

// TestLoadReportsBadValues: a bad value is stored as null and reported with
// its row, column and text; strict loading fails the file instead; a bad
// file does not stop the others.
func TestLoadReportsBadValues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := writeCSV(t, dir, "good-0001.csv", []string{"n"}, [][]string{{"1"}, {"2"}})
	badValues := writeCSV(t, dir, "vals-0001.csv", []string{"Opened", "Amount"},
		[][]string{{"2018/12/01 12:25:00 AM", "$1,234.50"}, {"yesterday", "12"}, {"2018/12/02 01:00:00 PM", "lots"}})
	broken := filepath.Join(dir, "brok-0001.json")
	if err := os.WriteFile(broken, []byte(`[{"a": 1},`), 0o644); err != nil {
		t.Fatal(err)
	}
	schema := `{"endpoint":"vals-0001","title":"Values","columns":[{"name":"Opened","fieldName":"opened","dataTypeName":"calendar_date","position":1},{"name":"Amount","fieldName":"amount","dataTypeName":"money","position":2}]}` + "\n"
	catalog := filepath.Join(dir, "catalog.jsonl")
	if err := os.WriteFile(catalog, []byte(schema), 0o644); err != nil {
		t.Fatal(err)
	}

	p := newPortal(t)
	reports, err := p.LoadFiles(t.Context(), []string{catalog, broken, badValues, good}, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "brok-0001.json") {
		t.Errorf("LoadFiles error = %v; want one naming the broken file", err)
	}
	byID := map[string]FileReport{}
	for _, r := range reports {
		byID[r.ID] = r
	}
	if r := byID["good-0001"]; r.Err != nil || r.Rows != 2 {
		t.Errorf("good file: %+v; want 2 rows loaded despite the broken one", r)
	}
	r := byID["vals-0001"]
	wantProblems := []ValueProblem{
		{Row: 2, Column: "opened", Value: "yesterday", Reason: `"yesterday" is not a calendar_date`},
		{Row: 3, Column: "amount", Value: "lots", Reason: `"lots" is not a money`},
	}
	if diff := cmp.Diff(wantProblems, r.Problems); diff != "" || r.BadValues != 2 || r.Rows != 3 {
		t.Errorf("bad values: %d of %d rows (-want +got):\n%s", r.BadValues, r.Rows, diff)
	}
	got := query(t, p, "vals-0001", "SELECT opened, amount ORDER BY :id")
	want := []map[string]any{{"opened": "2018-12-01T00:25:00.000", "amount": "1234.5"}, {"amount": "12"}, {"opened": "2018-12-02T13:00:00.000"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}

	p2 := newPortal(t)
	_, err = p2.LoadFiles(t.Context(), []string{catalog, badValues}, LoadOptions{Strict: true})
	if err == nil || !strings.Contains(err.Error(), "vals-0001.csv") || !strings.Contains(err.Error(), "row 2, column opened") ||
		!strings.Contains(err.Error(), "yesterday") {
		t.Errorf("strict LoadFiles error = %v; want the file, row 2, column opened and the value", err)
	}
}

// TestStartOfflineServesDownloadedExport: a CSV
// saved under the portal's download name replaces the sample dataset of
// that name, and is not silently skipped.
func TestStartOfflineServesDownloadedExport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := incidentsCSV(t, dir)
	for _, withCatalog := range []bool{true, false} {
		opts := OfflineOptions{Data: []string{path}, SampleScale: 0.001}
		if withCatalog {
			opts.Catalog = catalogPath(t)
		}
		p, err := StartOffline(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		if err := p.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := count(t, p, "wg3w-h783", "SELECT count(*) AS n"); got != 1000 {
			t.Errorf("catalog %v: count(*) = %d; want the file's 1000 rows", withCatalog, got)
		}
		reps := p.FileReports()
		if len(reps) != 1 || reps[0].ID != "wg3w-h783" {
			t.Errorf("catalog %v: FileReports = %+v", withCatalog, reps)
		}
		if !slices.Contains(p.Datasets(), "rqzj-sfat") {
			t.Errorf("catalog %v: the other sample datasets are gone: %v", withCatalog, p.Datasets())
		}
	}
}

// TestStartOfflineIsLazy: the sample datasets are listed and described at
// once and their rows made on the first query.
func TestStartOfflineIsLazy(t *testing.T) {
	t.Parallel()
	p, err := StartOffline(t.Context(), OfflineOptions{SampleScale: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	loaded := func(when string) {
		t.Helper()
		p.mu.RLock()
		n := len(p.datasets)
		p.mu.RUnlock()
		if n != 0 {
			t.Errorf("%s, %d datasets have rows; want 0 (made on first query)", when, n)
		}
	}
	loaded("after StartOffline")
	if r := get(t, p, "/api/views/wg3w-h783.json", nil); r.status != 200 {
		t.Errorf("views: %d", r.status)
	}
	if r := get(t, p, "/api/catalog/v1", nil); !strings.Contains(string(r.body), "wg3w-h783") {
		t.Errorf("catalog does not list wg3w-h783: %.200s", r.body)
	}
	loaded("after a Views and a Discovery request")
	if got := count(t, p, "wg3w-h783", "SELECT count(*) AS n"); got != 2500 {
		t.Errorf("count = %d; want 2500", got)
	}
}

// TestLoadFilesOneFilePerDataset: a second file for a dataset already
// given is reported and not loaded over the first (LoadFiles, as offline).
func TestLoadFilesOneFilePerDataset(t *testing.T) {
	t.Parallel()
	food := fixtureFile(t, "rqzj-sfat", ".json")
	p := newPortal(t)
	reports, err := p.LoadFiles(t.Context(), []string{"abcd-1234=" + food, "abcd-1234=" + fixtureFile(t, "wg3w-h783", ".json")}, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "already loaded from "+food) {
		t.Errorf("LoadFiles(two files for abcd-1234) error = %v; want one naming the first file", err)
	}
	var loaded, refused int
	for _, r := range reports {
		if r.Err == nil {
			loaded++
		} else {
			refused++
		}
	}
	if loaded != 1 || refused != 1 {
		t.Errorf("reports: %d loaded, %d refused; want 1 and 1", loaded, refused)
	}
	if got := count(t, p, "abcd-1234", "SELECT count(*) AS n"); got != 487 {
		t.Errorf("abcd-1234 has %d rows; want the first file's 487", got)
	}
}

// TestRowsJSONWithoutIDInName: a rows.json (and its view.json) saved
// under a name without the dataset id is matched by the id inside it.
func TestRowsJSONWithoutIDInName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, ext := range []string{".rows.json", ".view.json"} {
		b, err := os.ReadFile(fixtureFile(t, "yitu-d5am", ext))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "films"+ext), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := newPortal(t)
	reports, err := p.LoadFiles(t.Context(), []string{dir}, LoadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 1 || reports[0].ID != "yitu-d5am" {
		t.Fatalf("reports = %+v; want one for yitu-d5am", reports)
	}
	if got := count(t, p, "yitu-d5am", "SELECT count(*) AS n"); got != 1151 {
		t.Errorf("yitu-d5am has %d rows; want 1151", got)
	}
}
