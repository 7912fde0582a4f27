package socrata_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
	"github.com/datasf-mcp/datasf-mcp/internal/fixtures/fixtureportal"
	"github.com/datasf-mcp/datasf-mcp/internal/localportal"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// fakePortal returns a socratatest server of the test's own (its faults,
// latency and request log are the test's) over the catalog and every
// fixture dataset (fixtureportal), and a client for it whose retry waits
// are recorded, not slept.
func fakePortal(t *testing.T) (*socratatest.Server, *socrata.Client) {
	t.Helper()
	srv := fixtureportal.New(t)
	c := srv.SocrataClient(socrata.Options{})
	socrata.RecordWaits(c)
	return srv, c
}

func TestFakePortalLoaded(t *testing.T) {
	t.Parallel()
	srv, _ := fakePortal(t)
	want := []string{"rqzj-sfat", "vw6y-z8j6", "wg3w-h783", "yitu-d5am"}
	if diff := cmp.Diff(want, srv.Datasets()); diff != "" {
		t.Errorf("Datasets() (-want +got):\n%s", diff)
	}
}

func TestSearchFake(t *testing.T) {
	t.Parallel()
	srv, c := fakePortal(t)
	ds, err := c.Search(t.Context(), "mobile food", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) == 0 || len(ds) > 5 {
		t.Fatalf("Search(mobile food, 5) = %d results; want 1..5", len(ds))
	}
	found := false
	for _, d := range ds {
		found = found || d.ID == "rqzj-sfat"
		if d.Name == "" {
			t.Errorf("result %s has no name", d.ID)
		}
	}
	if !found {
		t.Errorf("Search(mobile food) did not return rqzj-sfat: %+v", ds)
	}
	r, ok := srv.LastRequest()
	if !ok || r.Endpoint != "catalog" || r.Path != "/api/catalog/v1" {
		t.Fatalf("last request = %+v; want the catalog endpoint", r)
	}
	for k, v := range map[string]string{"domains": "data.sf.gov", "search_context": "data.sf.gov", "only": "dataset", "q": "mobile food", "limit": "5"} {
		if got := r.Query[k]; len(got) != 1 || got[0] != v {
			t.Errorf("catalog param %s = %q; want [%q]", k, got, v)
		}
	}
}

func TestListFake(t *testing.T) {
	t.Parallel()
	srv, c := fakePortal(t)
	ds, err := c.List(t.Context(), "", 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 20 {
		t.Fatalf("List(\"\", 20) = %d results; want 20", len(ds))
	}
	for i := 1; i < len(ds); i++ {
		if ds[i].UpdatedAt.After(ds[i-1].UpdatedAt) {
			t.Errorf("List: result %d (%s, %v) is newer than result %d (%v)", i, ds[i].ID, ds[i].UpdatedAt, i-1, ds[i-1].UpdatedAt)
		}
	}
	// Newest first over the whole catalog: the first result is at least as
	// new as any dataset of the fake.
	all, err := c.List(t.Context(), "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range all {
		if d.UpdatedAt.After(ds[0].UpdatedAt) {
			t.Errorf("List: %s (%v) is newer than the first result %s (%v)", d.ID, d.UpdatedAt, ds[0].ID, ds[0].UpdatedAt)
			break
		}
	}
	cat := ds[0].Category
	if cat == "" {
		t.Fatalf("first result %s has no category", ds[0].ID)
	}
	byCat, err := c.List(t.Context(), cat, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(byCat) == 0 {
		t.Fatalf("List(%q) = no results", cat)
	}
	want := 0
	for _, d := range all {
		if d.Category == cat {
			want++
		}
	}
	if len(byCat) != want {
		t.Errorf("List(%q) = %d results; want %d (those of the category in the whole list of %d)", cat, len(byCat), want, len(all))
	}
	for _, d := range byCat {
		if d.Category != cat {
			t.Errorf("List(%q) returned %s of category %q", cat, d.ID, d.Category)
		}
	}
	r, _ := srv.LastRequest()
	if got := r.Query.Get("categories"); got != cat {
		t.Errorf("categories param = %q; want %q", got, cat)
	}
	t.Logf("List: %d datasets in the catalog, %d in category %q", len(all), len(byCat), cat)
}

// countRows counts the rows of a fixture file: a JSON array, or rows.json's data.
func countRows(t *testing.T, path string) int64 {
	t.Helper()
	b := socrata.ReadFile(t, path)
	if strings.HasSuffix(path, ".rows.json") {
		var doc struct {
			Data []json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		return int64(len(doc.Data))
	}
	var rows []json.RawMessage
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	return int64(len(rows))
}

func TestSchemaFake(t *testing.T) {
	t.Parallel()
	srv, c := fakePortal(t)
	dir := fixtures.Path(t, "datasets")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".view.json") {
			continue
		}
		id := filepath.Base(f)[:9]
		t.Run(id, func(t *testing.T) {
			before := srv.RequestCount("resource")
			s, err := c.Schema(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if want := countRows(t, f); s.RowCount != want {
				t.Errorf("Schema(%s).RowCount = %d; want %d (rows in %s)", id, s.RowCount, want, filepath.Base(f))
			}
			if got := srv.RequestCount("resource") - before; got != 1 {
				t.Errorf("Schema(%s) made %d resource requests; want 1 count(*) query", id, got)
			}
			// The count is asked for beside the Views document, in either
			// order: the newest resource request is the count.
			var r socratatest.Request
			for _, req := range srv.Requests() {
				if req.Endpoint == "resource" {
					r = req
				}
			}
			if q := strings.ToLower(r.Query.Get("$query")); !strings.Contains(q, "count(*)") {
				t.Errorf("resource request = %v; want a count(*) query", r.Query)
			}
			fake, ok := srv.Schema(id)
			if !ok {
				t.Fatalf("the fake has no schema for %s", id)
			}
			var want []socrata.Column
			for _, col := range fake.Columns {
				if strings.HasPrefix(col.FieldName, ":") {
					continue
				}
				want = append(want, socrata.Column{Name: col.Name, FieldName: col.FieldName, DataType: col.DataType, Description: col.Description})
			}
			// The fake fills cachedContents as the real Views API does:
			// every column of a dataset with data has statistics
			// (TestSchemaColumnStats reads them).
			if diff := cmp.Diff(want, s.Columns, cmpopts.IgnoreFields(socrata.Column{}, "Stats")); diff != "" {
				t.Errorf("Schema(%s).Columns (-want +got):\n%s", id, diff)
			}
			for _, c := range s.Columns {
				if c.Stats == nil || c.Stats.NonNull+c.Stats.Null != s.RowCount {
					t.Errorf("Schema(%s).%s stats = %+v; want non-null and null counts adding up to %d rows", id, c.FieldName, c.Stats, s.RowCount)
				}
			}
			if s.Name != fake.Name || s.Name == "" {
				t.Errorf("Schema(%s).Name = %q; want %q", id, s.Name, fake.Name)
			}
			t.Logf("%s: %d columns, %d rows", id, len(s.Columns), s.RowCount)
		})
		checked++
	}
	if checked != 4 {
		t.Errorf("checked %d datasets; want 4", checked)
	}
}

func TestQueryFake(t *testing.T) {
	t.Parallel()
	srv, c := fakePortal(t)
	const q = "SELECT applicant, facilitytype, status WHERE status = 'APPROVED' ORDER BY applicant, :id LIMIT 7 OFFSET 2"
	res, err := c.Query(t.Context(), "rqzj-sfat", q)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"applicant", "facilitytype", "status"}, res.Fields); diff != "" {
		t.Errorf("Fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"text", "text", "text"}, res.Types); diff != "" {
		t.Errorf("Types (-want +got):\n%s", diff)
	}
	if len(res.Rows) != 7 {
		t.Fatalf("got %d rows; want 7", len(res.Rows))
	}
	for i, r := range res.Rows {
		if r["status"] != "APPROVED" {
			t.Errorf("row %d status = %v", i, r["status"])
		}
		if i > 0 && r["applicant"].(string) < res.Rows[i-1]["applicant"].(string) {
			t.Errorf("row %d out of order", i)
		}
	}
	req, _ := srv.LastRequest()
	if got := req.Query["$query"]; len(got) != 1 || got[0] != q {
		t.Errorf("$query = %q; want exactly [%q]", got, q)
	}
	for k := range req.Query {
		if k != "$query" {
			t.Errorf("unexpected parameter %s=%q", k, req.Query[k])
		}
	}

	// QueryStream returns the same rows; NextRaw slices are independent.
	s, err := c.QueryStream(t.Context(), "rqzj-sfat", q)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if diff := cmp.Diff(res.Fields, s.Fields); diff != "" {
		t.Errorf("stream Fields (-want +got):\n%s", diff)
	}
	var raws []json.RawMessage
	var copies [][]byte
	for {
		raw, err := s.NextRaw()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, raw)
		copies = append(copies, bytes.Clone(raw))
	}
	if len(raws) != len(res.Rows) {
		t.Fatalf("stream gave %d rows; want %d", len(raws), len(res.Rows))
	}
	for i := range raws {
		if !bytes.Equal(raws[i], copies[i]) {
			t.Errorf("NextRaw row %d changed after later reads: %s; was %s", i, raws[i], copies[i])
		}
		var row socrata.Row
		if err := json.Unmarshal(raws[i], &row); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(res.Rows[i], row); diff != "" {
			t.Errorf("stream row %d (-query +stream):\n%s", i, diff)
		}
	}
	// Types of a typed dataset.
	res, err = c.Query(t.Context(), "wg3w-h783", "SELECT incident_datetime, filed_online, point, incident_id LIMIT 3")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("wg3w-h783 fields %v types %v", res.Fields, res.Types)
	fake, _ := srv.Schema("wg3w-h783")
	types := map[string]string{}
	for _, col := range fake.Columns {
		types[col.FieldName] = socrata.ColumnType(col.DataType)
	}
	wantTypes := []string{types["incident_datetime"], types["filed_online"], types["point"], types["incident_id"]}
	if diff := cmp.Diff([]string{"floating_timestamp", "boolean", "point", "text"}, wantTypes); diff != "" {
		t.Fatalf("catalog types of wg3w-h783 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantTypes, res.Types); diff != "" {
		t.Errorf("wg3w-h783 Types (-want +got):\n%s", diff)
	}
}

func TestFacilityTypeCounts(t *testing.T) {
	t.Parallel()
	_, c := fakePortal(t)
	var rows []map[string]any
	socrata.ReadJSON(t, fixtures.Path(t, "datasets", "rqzj-sfat__mobile-food-facility-permit__2022-03.json"), &rows)
	want := map[string]int64{}
	for _, r := range rows {
		ft, _ := r["facilitytype"].(string)
		want[ft]++ // "" stands for null
	}
	res, err := c.Query(t.Context(), "rqzj-sfat", "SELECT facilitytype, count(*) AS n GROUP BY facilitytype")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, r := range res.Rows {
		ft, _ := r["facilitytype"].(string)
		n, err := strconv.ParseInt(fmt.Sprint(r["n"]), 10, 64)
		if err != nil {
			t.Fatalf("count %v: %v", r["n"], err)
		}
		got[ft] = n
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("count per facilitytype (-scanned +queried):\n%s", diff)
	}
	t.Logf("rqzj-sfat count per facilitytype (scanned = queried): %v", want)
}

func TestCorpusQueriesFake(t *testing.T) {
	t.Parallel()
	srv, c := fakePortal(t)
	loaded := map[string]bool{}
	for _, id := range srv.Datasets() {
		loaded[id] = true
	}
	f, err := os.Open(fixtures.Path(t, "soql", "datasf-queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var total, run, failed int
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var q struct {
			Dataset string `json:"dataset"`
			SoQL    string `json:"soql"`
		}
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		total++
		if !loaded[q.Dataset] {
			continue
		}
		run++
		soql := strings.ReplaceAll(q.SoQL, "start_date", "'2024-01-01T00:00:00'")
		if _, err := c.Query(t.Context(), q.Dataset, soql); err != nil {
			failed++
			t.Errorf("Query(%s, %q): %v", q.Dataset, soql, err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("DataSF corpus queries: %d in the corpus, %d on loaded datasets ran, %d failed", total, run, failed)
	if run == 0 {
		t.Error("no query of the corpus is on a loaded dataset")
	}
}

func TestCutBodyFake(t *testing.T) {
	t.Parallel()
	srv, c := fakePortal(t)
	srv.CutBodyAfter(5000)
	res, err := c.Query(t.Context(), "rqzj-sfat", "SELECT * LIMIT 500")
	var api *socrata.APIError
	if !errors.As(err, &api) || api.Code != "truncated_response" {
		t.Fatalf("Query with body cut = %v rows, %v; want socrata.APIError truncated_response", res, err)
	}
	t.Logf("cut body: %v", err)
}

func TestClientTimeoutFake(t *testing.T) {
	t.Parallel()
	srv, _ := fakePortal(t)
	srv.SetLatency(2 * time.Second)
	c := socrata.NewClient(socrata.Options{BaseURL: srv.URL(), DiscoveryURL: srv.URL(), HTTPClient: srv.Client(), Timeout: 50 * time.Millisecond})
	_, err := c.Schema(t.Context(), "rqzj-sfat")
	var te *socrata.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("Schema with latency = %v; want *socrata.TimeoutError", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	c2 := socrata.NewClient(socrata.Options{BaseURL: srv.URL(), DiscoveryURL: srv.URL(), HTTPClient: srv.Client()})
	_, err = c2.Query(ctx, "rqzj-sfat", "SELECT * LIMIT 1")
	if !errors.As(err, &te) {
		t.Fatalf("Query past deadline = %v; want *socrata.TimeoutError", err)
	}
}

func TestRateLimitFake(t *testing.T) {
	t.Parallel()
	srv, c := fakePortal(t)
	waits := socrata.RecordWaits(c)
	srv.FailNext(2, 429, 3*time.Second)
	res, err := c.Query(t.Context(), "rqzj-sfat", "SELECT count(*)")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 {
		t.Errorf("rows = %d", len(res.Rows))
	}
	if diff := cmp.Diff([]time.Duration{3 * time.Second, 3 * time.Second}, waits()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	srv.FailNext(10, 429, time.Second)
	_, err = c.Query(t.Context(), "rqzj-sfat", "SELECT count(*)")
	var rl *socrata.RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter != time.Second {
		t.Errorf("after retries = %v; want socrata.RateLimitError with RetryAfter 1s", err)
	}
}

func ExampleNewClient_localPortal() {
	ctx := context.Background()
	portal, err := localportal.New(localportal.Options{})
	if err != nil {
		panic(err)
	}
	defer portal.Close()
	if err := portal.AddGenerated(ctx, localportal.Schema{ID: "abcd-1234", Name: "Street Trees", Description: "Trees on SF streets",
		Columns: []socrata.Column{{Name: "Species", FieldName: "species", DataType: "text"}}}, 3,
		func(i int) map[string]any { return map[string]any{"species": "oak"} }); err != nil {
		panic(err)
	}
	if err := portal.Start(); err != nil {
		panic(err)
	}
	c := socrata.NewClient(socrata.Options{BaseURL: portal.URL(), DiscoveryURL: portal.URL(), HTTPClient: portal.Client()})
	ds, err := c.Search(ctx, "trees", 5)
	if err != nil {
		panic(err)
	}
	for _, d := range ds {
		fmt.Println(d.ID, d.Name)
	}
	// Output: abcd-1234 Street Trees
}

func TestAppTokenFake(t *testing.T) {
	t.Parallel()
	const tok = "fake-portal-token-Zq7"
	srv, _ := fakePortal(t)
	srv.RequireAppToken(tok)
	var logs socrata.LogBuffer
	c := socrata.NewClient(socrata.Options{BaseURL: srv.URL(), DiscoveryURL: srv.URL(), HTTPClient: srv.Client(), AppToken: tok,
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if _, err := c.Search(t.Context(), "police", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := c.List(t.Context(), "", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Schema(t.Context(), "rqzj-sfat"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(t.Context(), "rqzj-sfat", "SELECT applicant LIMIT 2"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) < 5 {
		t.Fatalf("%d requests recorded; want at least 5", len(reqs))
	}
	for _, r := range reqs {
		if !r.AppTokenSent {
			t.Errorf("%s %s was sent without X-App-Token", r.Endpoint, r.Path)
		}
	}
	// A wrong token is a 403 whose error text does not carry either token.
	bad := socrata.NewClient(socrata.Options{BaseURL: srv.URL(), DiscoveryURL: srv.URL(), HTTPClient: srv.Client(), AppToken: "wrong-" + tok,
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	_, err := bad.Schema(t.Context(), "rqzj-sfat")
	var api *socrata.APIError
	if !errors.As(err, &api) || api.StatusCode != 403 {
		t.Fatalf("Schema with a wrong token = %v; want an socrata.APIError with status 403", err)
	}
	if strings.Contains(err.Error(), tok) {
		t.Errorf("token in error text: %v", err)
	}
	if logs.String() == "" || strings.Contains(logs.String(), tok) {
		t.Errorf("debug log is empty or holds the token (%d bytes)", len(logs.String()))
	}
	t.Logf("app token: %d requests to the fake, all with X-App-Token; wrong token -> %v", len(reqs), err)
}
