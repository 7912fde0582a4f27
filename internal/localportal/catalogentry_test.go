package localportal

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeCatalog writes catalog JSONL lines to a file of the test's own.
func writeCatalog(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "catalog.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	datedEntry   = `{"endpoint":"dtd0-0001","title":"Dated","rows_updated_at":"2024-03-04T05:06:07Z","columns":[{"name":"N","fieldName":"n","dataTypeName":"number","position":1},{"name":"Label","fieldName":"label","dataTypeName":"text","position":2},{"name":"On","fieldName":"on","dataTypeName":"checkbox","position":3}]}`
	undatedEntry = `{"endpoint":"und0-0001","title":"Undated","columns":[{"name":"Label","fieldName":"label","dataTypeName":"text","position":1}]}`
)

// A catalog entry without data answers queries as a dataset without rows,
// and its first query makes no table: a CREATE TABLE is a schema change,
// which waits for every running query and holds back new ones.
func TestCatalogEntryWithoutData(t *testing.T) {
	t.Parallel()
	p := newPortal(t)
	if err := p.LoadCatalog(t.Context(), writeCatalog(t, datedEntry, undatedEntry)); err != nil {
		t.Fatal(err)
	}
	tables := func() int {
		t.Helper()
		var n int
		if err := p.db.QueryRowContext(t.Context(), "SELECT count(*) FROM sqlite_master WHERE type = 'table'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := tables()
	// First queries at once, of an entry nobody queried yet.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			// Not get: t.Fatal may not be called from another goroutine.
			u := p.URL() + "/resource/und0-0001.json?" + url.Values{"$query": {"SELECT count(*) AS n"}}.Encode()
			resp, err := p.Client().Get(u)
			if err != nil {
				t.Errorf("concurrent first query of und0-0001: %v", err)
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != `[{"n":"0"}]` {
				t.Errorf("concurrent first query of und0-0001: status %d: %s (%v); want 200 [{\"n\":\"0\"}]", resp.StatusCode, body, err)
			}
		})
	}
	wg.Wait()
	for _, tt := range []struct {
		id, soql string
		want     []map[string]any
	}{
		{"dtd0-0001", "SELECT count(*) AS n", []map[string]any{{"n": "0"}}},
		{"dtd0-0001", "SELECT n, label, on, :id WHERE n > 1 AND on ORDER BY :id", []map[string]any{}},
		{"dtd0-0001", "SELECT label, sum(n) AS s GROUP BY label", []map[string]any{}},
		{"dtd0-0001", "SELECT max(n) AS m", []map[string]any{{}}},
		{"und0-0001", "SELECT count(*) AS n", []map[string]any{{"n": "0"}}},
	} {
		if diff := cmp.Diff(tt.want, query(t, p, tt.id, tt.soql)); diff != "" {
			t.Errorf("query %s %q (-want +got):\n%s", tt.id, tt.soql, diff)
		}
	}
	if r := get(t, p, "/resource/dtd0-0001.json", nil); r.status != http.StatusOK {
		t.Errorf("GET /resource/dtd0-0001.json: status %d: %s", r.status, r.body)
	}
	if r := get(t, p, "/resource/dtd0-0001.json", map[string][]string{"$select": {"nope"}}); r.status != http.StatusBadRequest {
		t.Errorf("a query of a column the entry lacks: status %d, want 400: %s", r.status, r.body)
	}
	if after := tables(); after != before {
		t.Errorf("queries of catalog entries made %d tables; want none", after-before)
	}
	if got := p.Datasets(); len(got) != 0 {
		t.Errorf("Datasets() = %v after queries of catalog entries; want none (they have no data)", got)
	}
}

// An undated catalog entry keeps no date when it is queried, and neither
// Discovery nor Views gives it one (Discovery's are null, not year 1):
// Discovery's order (newest first, the undated last) must not depend on
// which entry was queried first.
func TestUndatedCatalogEntryStaysUndated(t *testing.T) {
	t.Parallel()
	loadedAt := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var now atomic.Pointer[time.Time]
	now.Store(&loadedAt)
	p, err := New(Options{Now: func() time.Time { return *now.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if err := p.LoadCatalog(t.Context(), writeCatalog(t, undatedEntry, datedEntry)); err != nil {
		t.Fatal(err)
	}
	later := loadedAt.Add(time.Hour)
	now.Store(&later)

	// listing returns Discovery's ids in its default order, and the
	// dates of Discovery and Views.
	listing := func() (ids []string, dates map[string]string) {
		t.Helper()
		dates = map[string]string{}
		r := get(t, p, "/api/catalog/v1", nil)
		if r.status != http.StatusOK {
			t.Fatalf("Discovery: status %d: %s", r.status, r.body)
		}
		for _, res := range decodeObject(t, r.body)["results"].([]any) {
			rs := res.(map[string]any)["resource"].(map[string]any)
			id := rs["id"].(string)
			ids = append(ids, id)
			dates["discovery "+id] = "none"
			if d, ok := rs["updatedAt"].(string); ok {
				dates["discovery "+id] = d
			}
		}
		for _, id := range []string{"dtd0-0001", "und0-0001"} {
			r := get(t, p, "/api/views/"+id+".json", nil)
			if r.status != http.StatusOK {
				t.Fatalf("Views %s: status %d: %s", id, r.status, r.body)
			}
			sec, ok := decodeObject(t, r.body)["rowsUpdatedAt"].(float64)
			dates["views "+id] = "none"
			if ok {
				dates["views "+id] = rfc3339ms(time.Unix(int64(sec), 0))
			}
		}
		return ids, dates
	}
	wantIDs := []string{"dtd0-0001", "und0-0001"}
	wantDates := map[string]string{
		"discovery dtd0-0001": "2024-03-04T05:06:07.000Z", "views dtd0-0001": "2024-03-04T05:06:07.000Z",
		"discovery und0-0001": "none", "views und0-0001": "none",
	}
	for _, when := range []string{"before any query", "after a query of the undated entry"} {
		ids, dates := listing()
		if diff := cmp.Diff(wantIDs, ids); diff != "" {
			t.Errorf("Discovery's order %s (-want +got):\n%s", when, diff)
		}
		if diff := cmp.Diff(wantDates, dates); diff != "" {
			t.Errorf("dates %s (-want +got):\n%s", when, diff)
		}
		query(t, p, "und0-0001", "SELECT count(*)")
	}
}

// A catalog line's tags, category and use reach Discovery in Socrata's
// shape (classification.domain_tags and domain_category,
// resource.page_views.page_views_total, resource.download_count), and a
// line without them answers no tags and no views, as Discovery does for a
// dataset nobody opened; the ranker reads them (the tagged, viewed entry
// comes first for its tag).
func TestCatalogSignalsInDiscovery(t *testing.T) {
	t.Parallel()
	p := newPortal(t)
	signalled := `{"endpoint":"sig0-0001","title":"Incident Reports","domain_category":"Public Safety","tags":["crime","sfpd"],"page_views_total":134137,"download_count":19613,"columns":[]}`
	plain := `{"endpoint":"pln0-0001","title":"Crime Scene Cleanup Contracts","category":"City Management","columns":[]}`
	if err := p.LoadCatalog(t.Context(), writeCatalog(t, plain, signalled)); err != nil {
		t.Fatal(err)
	}
	r := get(t, p, "/api/catalog/v1", url.Values{"q": {"crime"}})
	if r.status != http.StatusOK {
		t.Fatalf("Discovery: status %d: %s", r.status, r.body)
	}
	type signals struct {
		Tags       []any
		Category   string
		Views      float64
		Downloads  float64
		HasViews   bool
		HasDomTags bool
	}
	got := map[string]signals{}
	var order []string
	for _, res := range decodeObject(t, r.body)["results"].([]any) {
		m := res.(map[string]any)
		rs := m["resource"].(map[string]any)
		cl := m["classification"].(map[string]any)
		pv, hasViews := rs["page_views"].(map[string]any)["page_views_total"].(float64)
		tags, hasTags := cl["domain_tags"].([]any)
		id := rs["id"].(string)
		order = append(order, id)
		got[id] = signals{Tags: tags, Category: cl["domain_category"].(string), Views: pv, Downloads: rs["download_count"].(float64), HasViews: hasViews, HasDomTags: hasTags}
	}
	want := map[string]signals{
		"sig0-0001": {Tags: []any{"crime", "sfpd"}, Category: "Public Safety", Views: 134137, Downloads: 19613, HasViews: true, HasDomTags: true},
		"pln0-0001": {Tags: []any{}, Category: "City Management", HasViews: true, HasDomTags: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Discovery's signals (-want +got):\n%s", diff)
	}
	if len(order) != 2 || order[0] != "sig0-0001" {
		t.Errorf("Discovery q=crime order = %v; want the tagged, viewed sig0-0001 first", order)
	}
}

// Discovery lists a dataset's computed region columns with the others, as
// the live API does, and leaves out only the system fields.
func TestDiscoveryListsComputedRegionColumns(t *testing.T) {
	t.Parallel()
	p := newPortal(t)
	line := `{"endpoint":"reg0-0001","title":"Street Trees","columns":[` +
		`{"name":"Species","fieldName":"species","dataTypeName":"text","position":1},` +
		`{"name":"SF Find Neighborhoods","fieldName":":@computed_region_6qbp_sg9q","dataTypeName":"number","position":2},` +
		`{"name":"Row Id","fieldName":":id","dataTypeName":"text","position":3}]}`
	if err := p.LoadCatalog(t.Context(), writeCatalog(t, line)); err != nil {
		t.Fatal(err)
	}
	r := get(t, p, "/api/catalog/v1", url.Values{"ids": {"reg0-0001"}})
	if r.status != http.StatusOK {
		t.Fatalf("Discovery: status %d: %s", r.status, r.body)
	}
	var got struct {
		Results []struct {
			Resource struct {
				Names  []string `json:"columns_name"`
				Fields []string `json:"columns_field_name"`
			} `json:"resource"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.body), &got); err != nil || len(got.Results) != 1 {
		t.Fatalf("Discovery ids=reg0-0001: %v %s", err, r.body)
	}
	res := got.Results[0].Resource
	if want := []string{"species", ":@computed_region_6qbp_sg9q"}; !slices.Equal(res.Fields, want) {
		t.Errorf("columns_field_name = %q; want %q", res.Fields, want)
	}
	if want := []string{"Species", "SF Find Neighborhoods"}; !slices.Equal(res.Names, want) {
		t.Errorf("columns_name = %q; want %q", res.Names, want)
	}
}
