//go:build e2e

package socrata_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

func TestPagingGenerated(t *testing.T) {
	t.Parallel()
	const n, page = 200_000, 50_000
	srv := socratatest.NewServer(t)
	schema := socratatest.Schema{ID: "gen0-rows", Name: "Generated", Columns: []socratatest.Column{
		{Name: "Seq", FieldName: "seq", DataType: "number"},
		{Name: "Label", FieldName: "label", DataType: "text"},
	}}
	if err := srv.AddGenerated(t.Context(), schema, n, func(i int) map[string]any {
		return map[string]any{"seq": i, "label": "row " + strconv.Itoa(i)}
	}); err != nil {
		t.Fatal(err)
	}
	c := socrata.NewClient(socrata.Options{BaseURL: srv.URL(), DiscoveryURL: srv.URL(), HTTPClient: srv.Client()})
	seen := make([]bool, n)
	total := 0
	for off := 0; ; off += page {
		s, err := c.QueryStream(t.Context(), "gen0-rows", fmt.Sprintf("SELECT seq, label ORDER BY :id LIMIT %d OFFSET %d", page, off))
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for row, err := range s.All() {
			if err != nil {
				t.Fatal(err)
			}
			i, err := strconv.Atoi(fmt.Sprint(row["seq"]))
			if err != nil || i < 0 || i >= n {
				t.Fatalf("bad seq %v", row["seq"])
			}
			if seen[i] {
				t.Fatalf("row %d seen twice", i)
			}
			if row["label"] != "row "+strconv.Itoa(i) {
				t.Fatalf("row %d label %v", i, row["label"])
			}
			seen[i] = true
			got++
		}
		s.Close()
		total += got
		if got < page {
			break
		}
	}
	if total != n {
		t.Errorf("paged %d rows; want %d", total, n)
	}
	t.Logf("paging by :id over %d generated rows: %d rows, each once", n, total)
}
