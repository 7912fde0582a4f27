package dualresp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xuri/excelize/v2"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// fixedExecutor serves the same rows for every query, in their order.
type fixedExecutor struct{ rows []json.RawMessage }

func (f *fixedExecutor) Prepare(context.Context, dualresp.Query) (dualresp.Plan, error) {
	return f, nil
}

func (f *fixedExecutor) Count(context.Context) (int64, error) { return int64(len(f.rows)), nil }

func (f *fixedExecutor) Page(_ context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	lo := min(req.Offset, int64(len(f.rows)))
	hi := min(req.Offset+req.Limit, int64(len(f.rows)))
	return dualresp.PageResult{Rows: f.rows[lo:hi]}, nil
}

// export creates a result of rows with cols and returns the answer of its
// export in format.
func export(t *testing.T, rows []string, cols []dualresp.Column, format string) *http.Response {
	t.Helper()
	exec := &fixedExecutor{}
	for _, r := range rows {
		exec.rows = append(exec.rows, json.RawMessage(r))
	}
	srv, _ := newServer(t, exec, dualresp.Options{})
	resp, err := srv.CreateResponse(t.Context(), dualresp.Spec{Query: dualresp.Query{Kind: "gen", Text: "q"}, Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/resources/"+resp.ID()+"/export?format="+format, nil))
	return w.Result()
}

var geoRows = []string{
	`{"name":"Taco Truck","permit":"17MFF-0001","point":{"type":"Point","coordinates":[-122.41,37.78]},"trucks":"2","open":true}`,
	`{"name":"No Place","permit":"17MFF-0002","point":null,"trucks":"1","open":false}`,
	`{"name":"Legacy","permit":"17MFF-0003","point":{"latitude":"37.75","longitude":"-122.42","human_address":"{}"},"trucks":"3","open":null}`,
	`{"name":"Missing Key","permit":"17MFF-0004","trucks":"4"}`,
}

var geoColumns = []dualresp.Column{
	{Name: "name", Type: "text"}, {Name: "permit", Type: "text"}, {Name: "point", Type: "point"},
	{Name: "trucks", Type: "number"}, {Name: "open", Type: "checkbox"},
}

func TestExportGeoJSON(t *testing.T) {
	t.Parallel()
	res := export(t, geoRows, geoColumns, "geojson")
	body := new(bytes.Buffer)
	if _, err := body.ReadFrom(res.Body); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/geo+json" {
		t.Fatalf("export?format=geojson: %d %s: %s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	var fc struct {
		Type     string `json:"type"`
		Features []struct {
			Type       string          `json:"type"`
			Geometry   json.RawMessage `json:"geometry"`
			Properties map[string]any  `json:"properties"`
		} `json:"features"`
		RowsWithoutLocation int    `json:"rows_without_location"`
		GeometryColumn      string `json:"geometry_column"`
	}
	if err := json.Unmarshal(body.Bytes(), &fc); err != nil {
		t.Fatalf("geojson export is not JSON: %v\n%s", err, body)
	}
	if fc.Type != "FeatureCollection" || len(fc.Features) != len(geoRows) {
		t.Fatalf("geojson export: type %q with %d features; want a FeatureCollection of %d", fc.Type, len(fc.Features), len(geoRows))
	}
	var geoms []string
	for _, f := range fc.Features {
		var b bytes.Buffer
		_ = json.Compact(&b, f.Geometry)
		geoms = append(geoms, b.String())
	}
	wantGeoms := []string{`{"type":"Point","coordinates":[-122.41,37.78]}`, "null", `{"type":"Point","coordinates":[-122.42,37.75]}`, "null"}
	if diff := cmp.Diff(wantGeoms, geoms); diff != "" {
		t.Errorf("geometries (-want +got):\n%s", diff)
	}
	wantProps := map[string]any{"name": "Taco Truck", "permit": "17MFF-0001", "trucks": 2.0, "open": true}
	if diff := cmp.Diff(wantProps, fc.Features[0].Properties); diff != "" {
		t.Errorf("first feature's properties (-want +got):\n%s", diff)
	}
	if fc.RowsWithoutLocation != 2 || fc.GeometryColumn != "point" {
		t.Errorf("rows_without_location %d, geometry_column %q; want 2, point", fc.RowsWithoutLocation, fc.GeometryColumn)
	}
	if got := res.Trailer.Get(dualresp.TrailerRowsWithoutLocation); got != "2" {
		t.Errorf("trailer %s = %q; want 2", dualresp.TrailerRowsWithoutLocation, got)
	}
}

func TestExportGeoJSONNeedsALocation(t *testing.T) {
	t.Parallel()
	res := export(t, []string{`{"district":"Mission","n":"3"}`}, []dualresp.Column{{Name: "district", Type: "text"}, {Name: "n", Type: "number"}}, "geojson")
	var e struct{ Error, Message string }
	_ = json.NewDecoder(res.Body).Decode(&e)
	if res.StatusCode != 400 || !strings.Contains(e.Message, "needs a column of locations") || !strings.Contains(e.Message, "district, n") {
		t.Errorf("geojson export without a location column: %d %+v; want 400 naming the columns", res.StatusCode, e)
	}
}

func TestExportXLSX(t *testing.T) {
	t.Parallel()
	rows := append([]string{}, geoRows...)
	rows = append(rows, `{"name":"=HYPERLINK(\"http://x\")","permit":"p","point":null,"trucks":"n/a","open":true}`)
	cols := append([]dualresp.Column{}, geoColumns...)
	cols = append(cols, dualresp.Column{Name: "since", Type: "floating_timestamp"})
	rows[0] = strings.Replace(rows[0], `"open":true`, `"open":true,"since":"2018-03-04T00:00:00.000"`, 1)
	rows[1] = strings.Replace(rows[1], `"open":false`, `"open":false,"since":"2019-05-06T07:08:09.000"`, 1)
	res := export(t, rows, cols, "xlsx")
	body := new(bytes.Buffer)
	if _, err := body.ReadFrom(res.Body); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Disposition"), ".xlsx") {
		t.Fatalf("export?format=xlsx: %d %v: %.200s", res.StatusCode, res.Header, body)
	}
	f, err := excelize.OpenReader(body)
	if err != nil {
		t.Fatalf("xlsx export does not open: %v", err)
	}
	defer f.Close()
	got, err := f.GetRows("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"name", "permit", "point", "trucks", "open", "since"},
		{"Taco Truck", "17MFF-0001", `{"type":"Point","coordinates":[-122.41,37.78]}`, "2", "TRUE", "2018-03-04"},
		{"No Place", "17MFF-0002", "", "1", "FALSE", "2019-05-06 07:08:09"},
		{"Legacy", "17MFF-0003", `{"latitude":"37.75","longitude":"-122.42","human_address":"{}"}`, "3"},
		{"Missing Key", "17MFF-0004", "", "4"},
		{`=HYPERLINK("http://x")`, "p", "", "n/a", "TRUE"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("xlsx rows (-want +got):\n%s", diff)
	}
	// Typed cells: a number is a number (a cell without a t attribute,
	// CellTypeUnset), a boolean a boolean, a formula text.
	for cell, typ := range map[string]excelize.CellType{"D2": excelize.CellTypeUnset, "D6": excelize.CellTypeInlineString, "E2": excelize.CellTypeBool, "A6": excelize.CellTypeInlineString} {
		if ct, err := f.GetCellType("Sheet1", cell); err != nil || ct != typ {
			t.Errorf("cell %s type %v (%v); want %v", cell, ct, err, typ)
		}
	}
	if formula, _ := f.GetCellFormula("Sheet1", "A6"); formula != "" {
		t.Errorf("cell A6 holds the formula %q; want text", formula)
	}
	if v, _ := f.GetCellValue("Sheet1", "F2", excelize.Options{RawCellValue: true}); v != "43163" {
		t.Errorf("F2 raw value %q; want the date serial 43163 (2018-03-04)", v)
	}
}

// TestXLSXWriterSheets fills sheets of a few rows (in place of 1,048,576):
// the rows go on in the next sheet, each with its header, and past the
// last sheet the writer says so.
func TestXLSXWriterSheets(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	x, err := dualresp.NewXLSXWriter(&out, []dualresp.Column{{Name: "i", Type: "number"}})
	if err != nil {
		t.Fatal(err)
	}
	dualresp.SetXLSXSheetRows(x, 4) // a header and 3 rows a sheet
	x.SetRows(3 * dualresp.XLSXMaxSheets)
	for i := range 3*dualresp.XLSXMaxSheets + 1 {
		err = x.WriteRow(json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)))
		if i < 3*dualresp.XLSXMaxSheets && err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	if !errors.Is(err, dualresp.ErrXLSXTooManyRows) {
		t.Errorf("row past %d sheets: %v; want ErrXLSXTooManyRows", dualresp.XLSXMaxSheets, err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenReader(&out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.GetSheetList(); len(got) != dualresp.XLSXMaxSheets {
		t.Fatalf("sheets %v; want %d", got, dualresp.XLSXMaxSheets)
	}
	for s := range dualresp.XLSXMaxSheets {
		rows, err := f.GetRows("Sheet" + strconv.Itoa(s+1))
		if err != nil {
			t.Fatal(err)
		}
		if dim, err := f.GetSheetDimension("Sheet" + strconv.Itoa(s+1)); err != nil || dim != "A1:A4" {
			t.Errorf("Sheet%d's dimension %q (%v); want A1:A4", s+1, dim, err)
		}
		want := [][]string{{"i"}, {strconv.Itoa(3 * s)}, {strconv.Itoa(3*s + 1)}, {strconv.Itoa(3*s + 2)}}
		if diff := cmp.Diff(want, rows); diff != "" {
			t.Errorf("Sheet%d (-want +got):\n%s", s+1, diff)
		}
	}
}

func TestExportXLSXTooLarge(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, &genExecutor{}, dualresp.Options{})
	resp, err := srv.CreateResponse(t.Context(), dualresp.Spec{Query: dualresp.Query{Kind: "gen", Text: "q",
		Params: map[string]string{"total": strconv.Itoa(dualresp.XLSXMaxRows + 1)}}, Columns: genColumns})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, httptest.NewRequestWithContext(ctx, "GET", "/resources/"+resp.ID()+"/export?format=xlsx", nil))
	if w.Code != 400 || !strings.Contains(w.Body.String(), "at most 4194300 rows") {
		t.Errorf("xlsx export of %d rows: %d %s; want 400 naming the bound", dualresp.XLSXMaxRows+1, w.Code, w.Body)
	}
}
