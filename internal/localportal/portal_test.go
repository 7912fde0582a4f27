package localportal

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// TestLoadCSV: a CSV export whose headers mix a column name, a field name
// and a header the catalog does not know loads through LoadFiles with the
// catalog's schema; the unknown header becomes a column of its own.
func TestLoadCSV(t *testing.T) {
	t.Parallel()
	srv := newPortal(t)
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "test-0001.csv")
	data := "Facility Type,approved,Extra Notes,score,open\n" +
		"Truck,2022-01-28T00:00:00,a,1.5,true\n" +
		"Push Cart,03/15/2021,,2,false\n" +
		",,c,,\n"
	if err := os.WriteFile(csvPath, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	catalogPath := filepath.Join(dir, "catalog.jsonl")
	catalog := `{"endpoint":"test-0001","title":"CSV","columns":[` +
		`{"name":"Facility Type","fieldName":"facilitytype","dataTypeName":"text","position":1},` +
		`{"name":"Approved","fieldName":"approved","dataTypeName":"calendar_date","position":2},` +
		`{"name":"Score","fieldName":"score","dataTypeName":"number","position":3},` +
		`{"name":"Open","fieldName":"open","dataTypeName":"checkbox","position":4}]}` + "\n"
	if err := os.WriteFile(catalogPath, []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	reports, err := srv.LoadFiles(t.Context(), []string{catalogPath, csvPath}, LoadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 1 || reports[0].ID != "test-0001" || reports[0].Rows != 3 || reports[0].BadValues != 0 {
		t.Errorf("LoadFiles reports = %+v; want one for test-0001: 3 rows, no bad values", reports)
	}
	rows := query(t, srv, "test-0001", "SELECT facilitytype, approved, extra_notes, score, open ORDER BY :id")
	want := []map[string]any{
		{"facilitytype": "Truck", "approved": "2022-01-28T00:00:00.000", "extra_notes": "a", "score": "1.5", "open": true},
		{"facilitytype": "Push Cart", "approved": "2021-03-15T00:00:00.000", "score": "2", "open": false},
		{"extra_notes": "c"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("CSV rows (-want +got):\n%s", diff)
	}
	if got := query(t, srv, "test-0001", "SELECT sum(score) AS s")[0]["s"]; got != "3.5" {
		t.Errorf("sum(score) = %v, want 3.5", got)
	}
}

func TestHandlerWithoutStart(t *testing.T) {
	t.Parallel()
	srv, err := New(Options{Domain: "data.example.org"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := srv.AddGenerated(t.Context(), Schema{ID: "abcd-0002", Name: "Offline", Category: "Test",
		Columns: []socrata.Column{{FieldName: "x", DataType: "text"}}}, 3, func(i int) map[string]any {
		return map[string]any{"x": strconv.Itoa(i)}
	}); err != nil {
		t.Fatal(err)
	}
	// Serve through Handler without Start, as a caller mounting it would.
	rec := httptest.NewRecorder()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/api/catalog/v1?q=offline&"+url.Values{"domains": {"data.example.org"}}.Encode(), nil)
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	body := decodeObject(t, rec.Body.Bytes())
	if body["resultSetSize"] != 1.0 {
		t.Errorf("resultSetSize = %v, want 1", body["resultSetSize"])
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if r := get(t, srv, "/resource/abcd-0002.json", nil); len(decodeRows(t, r.body)) != 3 {
		t.Errorf("after Start: %s", r.body)
	}
}
