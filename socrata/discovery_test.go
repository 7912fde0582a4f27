package socrata

import (
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
)

// rawDiscovery is the Discovery response read independently of the client.
type rawDiscovery struct {
	Results []map[string]any `json:"results"`
}

// wantDatasets builds the expected datasets from the raw JSON maps.
func wantDatasets(t *testing.T, raw rawDiscovery) []Dataset {
	t.Helper()
	var out []Dataset
	for _, r := range raw.Results {
		res := r["resource"].(map[string]any)
		cls := r["classification"].(map[string]any)
		d := Dataset{
			ID: res["id"].(string), Name: res["name"].(string), Type: res["type"].(string),
		}
		d.Description, _ = res["description"].(string)
		d.Permalink, _ = r["permalink"].(string)
		d.Link, _ = r["link"].(string)
		if md, ok := r["metadata"].(map[string]any); ok {
			d.Domain, _ = md["domain"].(string)
		}
		d.Category, _ = cls["domain_category"].(string)
		if cats, _ := cls["categories"].([]any); d.Category == "" && len(cats) > 0 {
			d.Category = cats[0].(string)
		}
		for _, c := range res["columns_field_name"].([]any) {
			d.Columns = append(d.Columns, c.(string))
		}
		u, err := time.Parse("2006-01-02T15:04:05.000Z", res["updatedAt"].(string))
		if err != nil {
			t.Fatal(err)
		}
		d.UpdatedAt = u
		out = append(out, d)
	}
	return out
}

func TestDiscoveryFixtures(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(fixtures.Path(t, "discovery"), "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no discovery fixtures: %v", err)
	}
	total := 0
	for _, file := range files {
		for _, call := range []string{"search", "list"} {
			t.Run(filepath.Base(file)+"/"+call, func(t *testing.T) {
				t.Parallel()
				body := readFile(t, file)
				var raw rawDiscovery
				readJSON(t, file, &raw)
				var got url.Values
				var path string
				h := func(w http.ResponseWriter, r *http.Request) {
					got, path = r.URL.Query(), r.URL.Path
					serveJSON(200, body)(w, r)
				}
				c, _, _ := newTestClient(t, http.HandlerFunc(h), Options{Domain: "data.example.org"})
				want := wantDatasets(t, raw)
				var ds []Dataset
				var err error
				wantParams := url.Values{
					"domains": {"data.example.org"}, "search_context": {"data.example.org"}, "only": {"dataset"},
				}
				if call == "search" {
					ds, err = c.Search(t.Context(), "food trucks", 7)
					wantParams["q"] = []string{"food trucks"}
					wantParams["limit"] = []string{"7"}
				} else {
					ds, err = c.List(t.Context(), "Public Safety", 0)
					wantParams["categories"] = []string{"Public Safety"}
					wantParams["order"] = []string{"updatedAt"}
					wantParams["limit"] = []string{"10"}
					slices.SortStableFunc(want, func(a, b Dataset) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
				}
				if err != nil {
					t.Fatal(err)
				}
				if path != "/api/catalog/v1" {
					t.Errorf("path = %q; want /api/catalog/v1", path)
				}
				if diff := cmp.Diff(wantParams, got); diff != "" {
					t.Errorf("parameters (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(want, ds); diff != "" {
					t.Errorf("datasets (-want +got):\n%s", diff)
				}
				if call == "list" {
					for i := 1; i < len(ds); i++ {
						if ds[i].UpdatedAt.After(ds[i-1].UpdatedAt) {
							t.Errorf("List not newest first at %d: %v after %v", i, ds[i].UpdatedAt, ds[i-1].UpdatedAt)
						}
					}
				}
			})
		}
		var raw rawDiscovery
		readJSON(t, file, &raw)
		total += len(raw.Results)
	}
	t.Logf("discovery fixtures: %d files, %d results parsed", len(files), total)
}

func TestListWithoutCategory(t *testing.T) {
	t.Parallel()
	var got url.Values
	h := func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Query()
		w.Write([]byte(`{"results":[],"resultSetSize":0}`))
	}
	c, _, _ := newTestClient(t, http.HandlerFunc(h), Options{})
	ds, err := c.List(t.Context(), "", 3)
	if err != nil || len(ds) != 0 {
		t.Fatalf("List = %v, %v; want no datasets", ds, err)
	}
	if _, ok := got["categories"]; ok || got.Get("domains") != "data.sf.gov" || got.Get("search_context") != "data.sf.gov" || got.Get("limit") != "3" {
		t.Errorf("parameters = %v; want the default domain, limit 3 and no categories", got)
	}
}
