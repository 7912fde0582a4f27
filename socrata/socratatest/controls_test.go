package socratatest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// smallServer returns a server with one small generated dataset.
func smallServer(t *testing.T) *Server {
	t.Helper()
	srv := NewServer(t)
	schema := Schema{ID: "abcd-1234", Name: "Small", Columns: []Column{
		{Name: "N", FieldName: "n", DataType: "number"},
		{Name: "Label", FieldName: "label", DataType: "text"},
	}}
	if err := srv.AddGenerated(schema, 200, func(i int) map[string]any {
		return map[string]any{"n": i, "label": fmt.Sprintf("row %03d", i)}
	}); err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestFailNext(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			t.Parallel()
			srv := smallServer(t)
			srv.FailNext(2, status, 1500*time.Millisecond)
			for i := 0; i < 2; i++ {
				r := get(t, srv, "/resource/abcd-1234.json", nil)
				if r.status != status {
					t.Fatalf("request %d: status %d, want %d", i, r.status, status)
				}
				ra := r.header.Get("Retry-After")
				if status == http.StatusTooManyRequests && ra != "2" {
					t.Errorf("Retry-After = %q, want \"2\"", ra)
				}
				if status != http.StatusTooManyRequests && ra != "" {
					t.Errorf("Retry-After on %d: %q", status, ra)
				}
			}
			if r := get(t, srv, "/resource/abcd-1234.json", nil); r.status != http.StatusOK {
				t.Errorf("third request: status %d, want 200", r.status)
			}
		})
	}
}

func TestLatency(t *testing.T) {
	t.Parallel()
	srv := smallServer(t)
	srv.SetLatency(time.Hour)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL()+"/resource/abcd-1234.json", nil)
	resp, err := srv.Client().Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("request returned before the latency elapsed")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v, want a deadline error", err)
	}
	srv.SetLatency(0)
	if r := get(t, srv, "/resource/abcd-1234.json", nil); r.status != http.StatusOK {
		t.Errorf("after SetLatency(0): status %d", r.status)
	}
}

func TestCutBodyAfter(t *testing.T) {
	t.Parallel()
	srv := smallServer(t)
	srv.CutBodyAfter(100)
	resp, err := srv.Client().Get(srv.URL() + "/resource/abcd-1234.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil {
		t.Fatalf("read %d bytes without error; want a cut-off body", len(b))
	}
	if len(b) != 100 {
		t.Errorf("got %d bytes before the cut, want 100", len(b))
	}
	// Only the next response is cut.
	r := get(t, srv, "/resource/abcd-1234.json", nil)
	if n := len(decodeRows(t, r.body)); n != 200 {
		t.Errorf("after the cut: %d rows, want 200", n)
	}
}

func TestRequireAppTokenAndRequestLog(t *testing.T) {
	t.Parallel()
	srv := smallServer(t)
	const token = "s3cret-token"
	srv.RequireAppToken(token)
	do := func(path, tok string) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL()+path, nil)
		if tok != "" {
			req.Header.Set("X-App-Token", tok)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := do("/resource/abcd-1234.json", ""); got != http.StatusForbidden {
		t.Errorf("without token: %d, want 403", got)
	}
	if got := do("/resource/abcd-1234.json", "wrong"); got != http.StatusForbidden {
		t.Errorf("wrong token: %d, want 403", got)
	}
	if got := do("/resource/abcd-1234.json", token); got != http.StatusOK {
		t.Errorf("with token: %d, want 200", got)
	}
	if got := do("/api/views/abcd-1234.json", token); got != http.StatusOK {
		t.Errorf("views with token: %d, want 200", got)
	}
	if got := do("/api/catalog/v1?q=small", token); got != http.StatusOK {
		t.Errorf("catalog with token: %d, want 200", got)
	}
	counts := map[string]int{}
	for _, e := range []string{"resource", "views", "catalog", "other", ""} {
		counts[e] = srv.RequestCount(e)
	}
	if diff := cmp.Diff(map[string]int{"resource": 3, "views": 1, "catalog": 1, "other": 0, "": 5}, counts); diff != "" {
		t.Errorf("RequestCount (-want +got):\n%s", diff)
	}
	for _, r := range srv.Requests() {
		if v := r.Header.Get("X-App-Token"); v != "" && v != "[redacted]" {
			t.Errorf("request log holds the app token: %q", v)
		}
	}
	last, ok := srv.LastRequest()
	if !ok || last.Endpoint != "catalog" || last.Query.Get("q") != "small" || !last.AppTokenSent {
		t.Errorf("LastRequest = %+v, %v", last, ok)
	}
	srv.Reset()
	if srv.RequestCount("") != 0 {
		t.Errorf("after Reset: %d requests logged", srv.RequestCount(""))
	}
	if got := do("/resource/abcd-1234.json", ""); got != http.StatusOK {
		t.Errorf("after Reset, without token: %d, want 200", got)
	}
}

func TestLoadCSV(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "test-0001.csv")
	// Headers mix a column name ("Facility Type"), a field name and an unknown header.
	data := "Facility Type,approved,Extra Notes,score,open\n" +
		"Truck,2022-01-28T00:00:00,a,1.5,true\n" +
		"Push Cart,03/15/2021,,2,false\n" +
		",,c,,\n"
	if err := os.WriteFile(csvPath, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	schema := Schema{Name: "CSV", Columns: []Column{
		{Name: "Facility Type", FieldName: "facilitytype", DataType: "text"},
		{Name: "Approved", FieldName: "approved", DataType: "calendar_date"},
		{Name: "Score", FieldName: "score", DataType: "number"},
		{Name: "Open", FieldName: "open", DataType: "checkbox"},
	}}
	if err := srv.LoadCSV("", csvPath, schema); err != nil {
		t.Fatal(err)
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
	srv := NewServer(t)
	schema := Schema{ID: "big1-0001", Name: "Generated", Columns: []Column{
		{FieldName: "n", DataType: "number"},
		{FieldName: "kind", DataType: "text"},
	}}
	kinds := []string{"alpha", "beta", "gamma"}
	if err := srv.AddGenerated(schema, total, func(i int) map[string]any {
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

func TestNewOutsideTests(t *testing.T) {
	t.Parallel()
	srv, err := New(Options{Domain: "data.example.org"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := srv.AddGenerated(Schema{ID: "abcd-0002", Name: "Offline", Category: "Test",
		Columns: []Column{{FieldName: "x", DataType: "text"}}}, 3, func(i int) map[string]any {
		return map[string]any{"x": strconv.Itoa(i)}
	}); err != nil {
		t.Fatal(err)
	}
	// Serve through Handler without Start, as a caller mounting it would.
	rec := &responseBuffer{header: http.Header{}, status: 200}
	req, _ := http.NewRequest(http.MethodGet, "/api/catalog/v1?q=offline&"+url.Values{"domains": {"data.example.org"}}.Encode(), nil)
	srv.Handler().ServeHTTP(rec, req)
	if rec.status != http.StatusOK {
		t.Fatalf("status %d: %s", rec.status, rec.body)
	}
	body := decodeObject(t, rec.body)
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
