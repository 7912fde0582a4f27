package localportal

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// TestCountOfSampleNotBuilt: a bare count of an offline sample dataset not
// built yet is answered from its known row count, without building its
// rows (search reads the row counts of its top hits, as Schema does), in
// exactly the answer the built dataset gives: status, X-SODA2-Fields,
// X-SODA2-Types and body, on the Resource API and SODA3. Any other query
// builds the dataset.
func TestCountOfSampleNotBuilt(t *testing.T) {
	t.Parallel()
	p, _ := startCached(t, OfflineOptions{CacheDir: t.TempDir()})
	const id = "wg3w-h783"
	counts := []struct {
		name  string
		ask   func() response
		field string
	}{
		{"$query count(*) AS count", func() response {
			return get(t, p, "/resource/"+id+".json", url.Values{"$query": {"SELECT count(*) AS count"}})
		}, "count"},
		{"$query count(*) without alias", func() response {
			return get(t, p, "/resource/"+id+".json", url.Values{"$query": {"SELECT count(*)"}})
		}, "count"},
		{"$select=COUNT(*) AS total, $limit=5", func() response {
			return get(t, p, "/resource/"+id+".json", url.Values{"$select": {"COUNT(*) AS total"}, "$limit": {"5"}})
		}, "total"},
		{"SODA3 count(*) AS n", func() response {
			return post(t, p, "/api/v3/views/"+id+"/query.json", "tok", `{"query": "SELECT count(*) AS n"}`)
		}, "n"},
	}
	before := make([]response, len(counts))
	for i, c := range counts {
		before[i] = c.ask()
		if before[i].status != http.StatusOK {
			t.Fatalf("%s before the build: status %d: %s", c.name, before[i].status, before[i].body)
		}
	}
	if built, _ := p.CacheStats(); built != 0 {
		t.Fatalf("after %d bare counts, CacheStats() built = %d; want 0 (the rows not built for a count)", len(counts), built)
	}
	// A count with a condition needs the rows: it builds the dataset.
	query(t, p, id, "SELECT count(*) AS n WHERE incident_id IS NOT NULL")
	if built, _ := p.CacheStats(); built != 1 {
		t.Fatalf("after a count with WHERE, CacheStats() built = %d; want 1", built)
	}
	for i, c := range counts {
		after := c.ask()
		b := before[i]
		if after.status != b.status || string(after.body) != string(b.body) ||
			after.header.Get("X-SODA2-Fields") != b.header.Get("X-SODA2-Fields") ||
			after.header.Get("X-SODA2-Types") != b.header.Get("X-SODA2-Types") {
			t.Errorf("%s: before the build %d %s %s %s; the built dataset answers %d %s %s %s", c.name,
				b.status, b.header.Get("X-SODA2-Fields"), b.header.Get("X-SODA2-Types"), b.body,
				after.status, after.header.Get("X-SODA2-Fields"), after.header.Get("X-SODA2-Types"), after.body)
		}
		rows := decodeRows(t, after.body)
		if len(rows) != 1 || rows[0][c.field] == nil {
			t.Errorf("%s: the built dataset answers %s; want one row with %q", c.name, after.body, c.field)
		}
	}
	t.Logf("before and after the build: %s %s %s", before[0].header.Get("X-SODA2-Fields"), before[0].header.Get("X-SODA2-Types"), before[0].body)
	if built, _ := p.CacheStats(); built != 1 {
		t.Errorf("CacheStats() built = %d at the end; want 1", built)
	}
}

// TestBareCount: which queries the count of a dataset not built yet
// answers (bareCount), and which go to the built dataset.
func TestBareCount(t *testing.T) {
	t.Parallel()
	p, _ := startCached(t, OfflineOptions{CacheDir: t.TempDir()})
	for _, q := range []string{
		"SELECT count(*) WHERE incident_id IS NOT NULL",
		"SELECT count(*) GROUP BY incident_category",
		"SELECT count(*) LIMIT 0",
		"SELECT count(*) OFFSET 1",
		"SELECT count(*) SEARCH 'theft'",
		"SELECT count(incident_id)",
		"SELECT count(DISTINCT incident_category)",
		"SELECT count(*), count(*) AS b",
		"SELECT count(*) AS n |> SELECT n",
	} {
		bare := false
		r := get(t, p, "/resource/wg3w-h783.json", url.Values{"$query": {q}})
		if parsed, err := soql.Parse(q); err == nil {
			bare = bareCount(parsed)
		}
		if bare {
			t.Errorf("bareCount(%q) = true; want false (it needs the rows)", q)
		}
		if r.status != http.StatusOK && r.status != http.StatusBadRequest {
			t.Errorf("%q: status %d: %s", q, r.status, r.body)
		}
	}
	if built, _ := p.CacheStats(); built != 1 {
		t.Errorf("CacheStats() built = %d after queries that need the rows; want 1", built)
	}
}
