//go:build e2e

package localportal

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

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
