package socrata_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// writeCatalog writes a catalog JSONL of n datasets (ids aaaa-000i) and
// returns its path.
func writeCatalog(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"endpoint":"aaaa-%04d","title":"Dataset %d","description":"about thing %d","category":"Test","columns":[{"name":"Thing Name","fieldName":"thing_name","dataTypeName":"text","description":"the thing","position":1}]}`+"\n", i, i, i)
	}
	p := filepath.Join(t.TempDir(), "catalog.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// AllDatasets pages through the whole catalog with search_context, each
// dataset once, and stops fetching when the caller stops.
func TestAllDatasets(t *testing.T) {
	t.Parallel()
	srv := socratatest.NewServer(t)
	if err := srv.LoadCatalog(t.Context(), writeCatalog(t, 5)); err != nil {
		t.Fatal(err)
	}
	c := srv.SocrataClient(socrata.Options{})

	seen := map[string]int{}
	for d, err := range c.AllDatasets(t.Context(), socrata.AllDatasetsOptions{PageSize: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		seen[d.ID]++
		if len(d.ColumnNames) != 1 || d.ColumnNames[0] != "Thing Name" || d.Columns[0] != "thing_name" || d.ColumnDescriptions[0] != "the thing" {
			t.Errorf("AllDatasets: %s columns = %q %q %q; want the catalog's", d.ID, d.ColumnNames, d.Columns, d.ColumnDescriptions)
		}
	}
	if len(seen) != 5 {
		t.Errorf("AllDatasets: %d distinct datasets (%v); want 5", len(seen), seen)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("AllDatasets: %s seen %d times; want once", id, n)
		}
	}
	reqs := srv.Requests()
	if got := srv.RequestCount("catalog"); got != 3 {
		t.Errorf("AllDatasets over 5 datasets, pages of 2: %d requests; want 3", got)
	}
	for _, r := range reqs {
		if r.Query.Get("search_context") == "" || r.Query.Get("domains") == "" || r.Query.Get("only") != "dataset" {
			t.Errorf("AllDatasets request %s?%s: want domains, search_context and only=dataset", r.Path, r.Query.Encode())
		}
	}

	srv.Reset()
	n := 0
	for _, err := range c.AllDatasets(t.Context(), socrata.AllDatasetsOptions{PageSize: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 1 {
			break
		}
	}
	if got := srv.RequestCount("catalog"); got != 1 {
		t.Errorf("AllDatasets stopped after the first dataset: %d requests; want 1", got)
	}

	// Max bounds what is read.
	srv.Reset()
	n = 0
	for _, err := range c.AllDatasets(t.Context(), socrata.AllDatasetsOptions{PageSize: 2, Max: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3 {
		t.Errorf("AllDatasets with Max 3: %d datasets; want 3", n)
	}

	// With FailPastMax, the first page's resultSetSize says the portal
	// is larger: the error, after one request.
	srv.Reset()
	var got error
	n = 0
	for _, err := range c.AllDatasets(t.Context(), socrata.AllDatasetsOptions{PageSize: 2, Max: 3, FailPastMax: true}) {
		if err != nil {
			got = err
			continue
		}
		n++
	}
	if !errors.Is(got, socrata.ErrTooManyDatasets) || n != 0 || srv.RequestCount("catalog") != 1 {
		t.Errorf("AllDatasets over 5 datasets with Max 3, FailPastMax: %d datasets, error %v, %d requests; want none, ErrTooManyDatasets, 1", n, got, srv.RequestCount("catalog"))
	}

	// A cancelled context: the error once, no request.
	srv.Reset()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	errs := 0
	for _, err := range c.AllDatasets(ctx, socrata.AllDatasetsOptions{}) {
		if err == nil {
			t.Fatal("AllDatasets with a cancelled context yielded a dataset")
		}
		errs++
	}
	if errs != 1 || srv.RequestCount("catalog") != 0 {
		t.Errorf("AllDatasets with a cancelled context: %d errors, %d requests; want 1 and 0", errs, srv.RequestCount("catalog"))
	}
}
