//go:build e2e

package interop

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// xlsxRead prints every row of every sheet of an XLSX file (argv[1]) as
// JSON, each cell as [Python type, value]: openpyxl, Debian's
// python3-openpyxl, reads it independently of the writer.
const xlsxRead = `
import json, sys, openpyxl
wb = openpyxl.load_workbook(sys.argv[1], read_only=True)
out = {}
for ws in wb.worksheets:
    out[ws.title] = [[[type(v).__name__, v if isinstance(v, (int, float, bool, str)) or v is None else str(v)] for v in row] for row in ws.iter_rows(values_only=True)]
print(json.dumps(out))
`

// TestExportsReadBack exports a result with points as GeoJSON and XLSX,
// from the REST API and through the binary's fetch -o x.geojson|x.xlsx,
// and reads each file back with an independent reader: GDAL's ogr2ogr
// (Debian gdal-bin) for GeoJSON, openpyxl (python3-openpyxl) for XLSX.
// Every row must be there with its values, the points as geometries (the
// rows without one with none), the XLSX cells typed.
func TestExportsReadBack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs GDAL, Python and the binary")
	}
	ogr2ogr, err := exec.LookPath("ogr2ogr")
	if err != nil {
		need(t, "ogr2ogr (Debian package gdal-bin)", err)
	}
	// Debian's python3, where python3-openpyxl installs, before another on PATH.
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		if python, err = exec.LookPath("python3"); err != nil {
			need(t, "python3 (Debian package python3)", err)
		}
	}
	if out, err := exec.Command(python, "-c", "import openpyxl").CombinedOutput(); err != nil {
		need(t, "openpyxl (Debian package python3-openpyxl)", fmt.Errorf("%v: %s", err, out))
	}

	const n = 1500
	exec1 := &rowsExecutor{}
	for i := range n {
		row := map[string]any{
			"permit": fmt.Sprintf("P-%04d", i),
			"trucks": strconv.Itoa(i % 9),
			"opened": fmt.Sprintf("2019-%02d-%02dT00:00:00.000", i%12+1, i%28+1),
			"point":  map[string]any{"type": "Point", "coordinates": []float64{-122.5 + float64(i%100)/1000, 37.7 + float64(i/100)/1000}},
		}
		if i%10 == 3 {
			row["point"] = nil
		}
		exec1.rows = append(exec1.rows, row)
	}
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()
	results, err := dualresp.New(dualresp.Options{BaseURL: ts.URL, CleanupInterval: -1, Executors: map[string]dualresp.Executor{"t": exec1}})
	if err != nil {
		t.Fatal(err)
	}
	defer results.Close()
	mux.Handle("/resources/", results.Handler())
	resp, err := results.CreateResponse(t.Context(), dualresp.Spec{
		Name:  "Permits",
		Query: dualresp.Query{Kind: "t", Text: "SELECT permit, trucks, opened, point"},
		Columns: []dualresp.Column{{Name: "permit", Type: "text"}, {Name: "trucks", Type: "number"},
			{Name: "opened", Type: "floating_timestamp"}, {Name: "point", Type: "point"}},
	})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	files := map[string]string{}
	for _, format := range []string{"geojson", "xlsx"} {
		// The REST API's export.
		rest := filepath.Join(dir, "rest."+format)
		r, err := http.Get(resp.URL() + "/export?format=" + format)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 200 {
			t.Fatalf("export?format=%s: %d %s", format, r.StatusCode, b)
		}
		if err := os.WriteFile(rest, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files["rest "+format] = rest
		// fetch -o x.FORMAT.
		fetched := filepath.Join(dir, "fetched."+format)
		if out, err := exec.CommandContext(ctx, buildBinary(t), "fetch", resp.URL(), "-o", fetched).CombinedOutput(); err != nil {
			t.Fatalf("fetch -o %s: %v\n%s", fetched, err, out)
		}
		files["fetch "+format] = fetched
	}

	for _, which := range []string{"rest geojson", "fetch geojson"} {
		out, err := exec.CommandContext(ctx, ogr2ogr, "-f", "CSV", "/vsistdout/", files[which], "-lco", "GEOMETRY=AS_XY").Output()
		if err != nil {
			t.Fatalf("%s: ogr2ogr: %v", which, err)
		}
		recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
		if err != nil || len(recs) != n+1 {
			t.Fatalf("%s: ogr2ogr read %d records (%v); want a header and %d rows", which, len(recs), err, n)
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		for i, rec := range recs[1:] {
			want := exec1.rows[i]
			pointOK := rec[col["X"]] == "" && rec[col["Y"]] == ""
			if p, ok := want["point"].(map[string]any); ok {
				c := p["coordinates"].([]float64)
				pointOK = near(rec[col["X"]], c[0]) && near(rec[col["Y"]], c[1])
			}
			if rec[col["permit"]] != want["permit"] || rec[col["trucks"]] != want["trucks"] || !pointOK {
				t.Fatalf("%s: row %d read by GDAL as %v (header %v); want %v", which, i, rec, recs[0], want)
			}
		}
		t.Logf("%s: GDAL read %d features, their points and properties", which, len(recs)-1)
	}

	for _, which := range []string{"rest xlsx", "fetch xlsx"} {
		out, err := exec.CommandContext(ctx, python, "-c", xlsxRead, files[which]).Output()
		if err != nil {
			t.Fatalf("%s: openpyxl: %v", which, err)
		}
		var book map[string][][][2]any
		if err := json.Unmarshal(out, &book); err != nil {
			t.Fatal(err)
		}
		rows := book["Sheet"+"1"]
		if len(book) != 1 || len(rows) != n+1 {
			t.Fatalf("%s: openpyxl read sheets %d, %d rows; want 1 sheet of a header and %d rows", which, len(book), len(rows), n)
		}
		if fmt.Sprint(rows[0]) != "[[str permit] [str trucks] [str opened] [str point]]" {
			t.Errorf("%s: header %v", which, rows[0])
		}
		for i, row := range rows[1:] {
			want := exec1.rows[i]
			trucks, _ := strconv.Atoi(want["trucks"].(string))
			opened := want["opened"].(string)[:10] + " 00:00:00"
			if row[0] != [2]any{"str", want["permit"]} || row[1][0] == "str" || row[1][1] != float64(trucks) || row[2] != [2]any{"datetime", opened} {
				t.Fatalf("%s: row %d read by openpyxl as %v; want %v with trucks a number and opened a date", which, i, row, want)
			}
			if (want["point"] == nil) != (row[3][1] == nil) {
				t.Fatalf("%s: row %d's point read as %v; want %v", which, i, row[3], want["point"])
			}
		}
		t.Logf("%s: openpyxl read %d rows, typed", which, len(rows)-1)
	}
}

// near reports whether the coordinate s that GDAL wrote is f, to a
// nanodegree (GDAL writes 15 significant digits).
func near(s string, f float64) bool {
	g, err := strconv.ParseFloat(s, 64)
	return err == nil && math.Abs(g-f) < 1e-9
}
