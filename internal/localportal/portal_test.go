package localportal

import (
	"fmt"
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

// TestPagingMillionRows pages through a generated 1,000,000-row dataset with
// ORDER BY :id LIMIT/OFFSET and checks that every row comes back exactly once.
func TestPagingMillionRows(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000,000-row paging skipped in -short mode")
	}
	t.Parallel()
	const total, page = 1_000_000, 50_000
	srv := newPortal(t)
	schema := Schema{ID: "big1-0001", Name: "Generated", Columns: []socrata.Column{
		{FieldName: "n", DataType: "number"},
		{FieldName: "kind", DataType: "text"},
	}}
	kinds := []string{"alpha", "beta", "gamma"}
	if err := srv.AddGenerated(t.Context(), schema, total, func(i int) map[string]any {
		// Insert in a scrambled order so that :id order is not n order.
		return map[string]any{"n": (i * 7919) % total, "kind": kinds[i%3]}
	}); err != nil {
		t.Fatal(err)
	}
	seen := make([]bool, total)
	count, pages := 0, 0
	lastID := ""
	for off := 0; ; off += page {
		rows := query(t, srv, "big1-0001", fmt.Sprintf("SELECT :id, n ORDER BY :id LIMIT %d OFFSET %d", page, off))
		pages++
		for _, r := range rows {
			id := r[":id"].(string)
			if id <= lastID {
				t.Fatalf(":id %s after %s: not increasing", id, lastID)
			}
			lastID = id
			n, err := strconv.Atoi(r["n"].(string))
			if err != nil || n < 0 || n >= total {
				t.Fatalf("bad n %v", r["n"])
			}
			if seen[n] {
				t.Fatalf("row n=%d returned twice", n)
			}
			seen[n] = true
			count++
		}
		if len(rows) < page {
			break
		}
	}
	if count != total {
		t.Errorf("paged %d rows, want %d", count, total)
	}
	t.Logf("paging: %d rows in %d pages of %d, each exactly once, :id strictly increasing", count, pages, page)
	// An aggregate over the whole generated set, checked against arithmetic.
	rows := query(t, srv, "big1-0001", "SELECT kind, count(*) AS c, sum(n) AS s GROUP BY kind ORDER BY kind")
	var c, s int64
	for _, r := range rows {
		ci, _ := strconv.ParseInt(r["c"].(string), 10, 64)
		si, _ := strconv.ParseInt(r["s"].(string), 10, 64)
		c += ci
		s += si
	}
	if c != total || s != int64(total)*(total-1)/2 {
		t.Errorf("count %d sum %d; want %d and %d", c, s, total, int64(total)*(total-1)/2)
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
