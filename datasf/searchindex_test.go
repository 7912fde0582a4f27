package datasf

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func loadCatalogLines(t *testing.T, srv *socratatest.Server, lines ...string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "catalog.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := srv.LoadCatalog(t.Context(), p); err != nil {
		t.Fatal(err)
	}
}

func catalogLine(id, title, desc string) string {
	return fmt.Sprintf(`{"endpoint":%q,"title":%q,"description":%q,"category":"Transportation","columns":[]}`, id, title, desc)
}

func ids(found rankedHits) []string {
	out := make([]string, len(found.hits))
	for i, h := range found.hits {
		out[i] = h.ID
	}
	return out
}

// The portal's catalog is read once and ranked from memory; older than the
// TTL it is still served while a background refresh reads it again, and
// the next search sees the new catalog.
func TestCatalogIndexTTLAndRefresh(t *testing.T) {
	t.Parallel()
	srv := socratatest.NewServer(t)
	loadCatalogLines(t, srv, catalogLine("park-0001", "Parking Meters", "meters on streets"),
		catalogLine("tree-0001", "Street Trees", "trees on sidewalks"))
	client := srv.SocrataClient(socrata.Options{})
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := newCatalogIndexes(slog.New(slog.DiscardHandler))
	c.now = clock.now

	search := func(q string) []string {
		t.Helper()
		hits, err := c.search(t.Context(), client, "data.sfgov.org", q, 5)
		if err != nil {
			t.Fatal(err)
		}
		return ids(hits)
	}
	if got := search("parking"); strings.Join(got, ",") != "park-0001" {
		t.Fatalf("search(parking) = %v; want [park-0001]", got)
	}
	first := srv.RequestCount("catalog")
	if first == 0 {
		t.Fatal("no catalog request")
	}
	loadCatalogLines(t, srv, catalogLine("park-0002", "Parking Garages", "garages"))
	if got := search("parking"); len(got) != 1 || srv.RequestCount("catalog") != first {
		t.Errorf("within the TTL: search(parking) = %v after %d catalog requests; want [park-0001] from memory (%d requests)", got, srv.RequestCount("catalog"), first)
	}

	clock.add(catalogTTL + time.Minute)
	if got := search("parking"); len(got) != 1 {
		t.Errorf("past the TTL, first search: %v; want the older catalog served at once", got)
	}
	c.bg.Wait()
	if got := search("parking"); len(got) != 2 {
		t.Errorf("after the background refresh: search(parking) = %v; want both parking datasets", got)
	}
	if srv.RequestCount("catalog") <= first {
		t.Error("the background refresh made no catalog request")
	}
}

// At most max portals' catalogs are kept: the least recently used goes.
func TestCatalogIndexBound(t *testing.T) {
	t.Parallel()
	srv := socratatest.NewServer(t)
	loadCatalogLines(t, srv, catalogLine("park-0001", "Parking Meters", "meters"))
	client := srv.SocrataClient(socrata.Options{})
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := newCatalogIndexes(slog.New(slog.DiscardHandler))
	c.now, c.max = clock.now, 2
	for _, d := range []string{"a.example", "b.example", "a.example", "c.example"} {
		clock.add(time.Second)
		if _, err := c.search(t.Context(), client, d, "parking", 5); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.byDomain) != 2 || c.byDomain["b.example"] != nil {
		var kept []string
		for k := range c.byDomain {
			kept = append(kept, k)
		}
		t.Errorf("kept %v; want 2 portals, b.example (least recently used) gone", kept)
	}
}

// Over several portals, Discovery's candidates are put in our ranker's
// order; a candidate no query word matches keeps its place after them.
func TestRerankDiscoveryCandidates(t *testing.T) {
	t.Parallel()
	ds := []socrata.Dataset{
		{ID: "desc-0001", Name: "Street Inventory", Description: "includes some parking details", Domain: "a.example"},
		{ID: "none-0001", Name: "Something Else", Description: "matched by Discovery for its own reasons", Domain: "b.example"},
		{ID: "name-0001", Name: "Parking Citations", Description: "citations", Domain: "b.example"},
	}
	got := ids(rerank(ds, "parking citations", 5))
	want := "name-0001,desc-0001,none-0001"
	if strings.Join(got, ",") != want {
		t.Errorf("rerank = %v; want %s", got, want)
	}
}

// Without cachedContents, column statistics come from bounded queries: one
// count of every column, one grouped query per text column (ids and free
// text left out); a column of few values shows them, one of names none.
func TestQueryStats(t *testing.T) {
	t.Parallel()
	srv := socratatest.NewServer(t)
	kinds := []string{"Alpha", "Beta", "Gamma"}
	schema := socratatest.Schema{ID: "stat-0001", Name: "Stats", Columns: []socratatest.Column{
		{Name: "Kind", FieldName: "kind", DataType: "text"},
		{Name: "Owner", FieldName: "owner", DataType: "text"},
		{Name: "Case Number", FieldName: "case_number", DataType: "text"},
		{Name: "Size", FieldName: "size", DataType: "number"},
	}}
	err := srv.AddGenerated(t.Context(), schema, 100, func(i int) map[string]any {
		row := map[string]any{"owner": fmt.Sprintf("person %d", i), "case_number": fmt.Sprint(i), "size": i}
		if i%10 != 0 {
			row["kind"] = kinds[i%3]
		}
		return row
	})
	if err != nil {
		t.Fatal(err)
	}
	client := srv.SocrataClient(socrata.Options{})
	sc := &socrata.Schema{ID: "stat-0001", Columns: schema.Columns}
	srv.Reset()
	st, complete := queryStats(t.Context(), client, sc)
	if !complete {
		t.Error("queryStats: not complete; want every query answered")
	}
	if got := srv.RequestCount(""); got != 3 {
		t.Errorf("queryStats: %d requests; want 3 (counts, kind, owner)", got)
	}
	kind := st["kind"]
	if kind == nil || kind.Null != 10 || kind.NonNull != 90 {
		t.Fatalf("kind stats = %+v; want 10 null, 90 non-null", kind)
	}
	if got := fewValues(sc.Columns[0], kind); strings.Join(got, ",") != "Alpha,Beta,Gamma" && len(got) != 3 {
		t.Errorf("fewValues(kind) = %q; want the three kinds", got)
	}
	if got := fewValues(sc.Columns[1], st["owner"]); got != nil {
		t.Errorf("fewValues(owner) = %q; want none (a name per row)", got)
	}
	if ns := nullShare(kind); ns == nil || *ns != 0.1 {
		t.Errorf("nullShare(kind) = %v; want 0.1", ns)
	}
}

// A portal larger than the bound is not kept, and not read again within
// the TTL: its searches fall back (the caller reranks Discovery's
// candidates).
func TestCatalogIndexTooLarge(t *testing.T) {
	t.Parallel()
	srv := socratatest.NewServer(t)
	loadCatalogLines(t, srv, catalogLine("park-0001", "Parking Meters", "meters"),
		catalogLine("park-0002", "Parking Lots", "lots"), catalogLine("park-0003", "Parking Garages", "garages"))
	client := srv.SocrataClient(socrata.Options{})
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := newCatalogIndexes(slog.New(slog.DiscardHandler))
	c.now, c.maxDatasets = clock.now, 2
	for range 2 {
		if _, err := c.search(t.Context(), client, "data.sfgov.org", "parking", 5); err != errCatalogTooLarge {
			t.Fatalf("search over 3 datasets, at most 2 kept: err %v; want errCatalogTooLarge", err)
		}
	}
	if n := srv.RequestCount("catalog"); n != 1 {
		t.Errorf("%d catalog requests for two searches; want 1 (the size is remembered)", n)
	}
	c.mu.Lock()
	kept := c.byDomain["data.sfgov.org"]
	c.mu.Unlock()
	if kept == nil || kept.ix != nil || len(kept.ds) != 0 {
		t.Errorf("kept %+v; want a marker without datasets", kept)
	}
}
