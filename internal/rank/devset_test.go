package rank_test

import (
	"fmt"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/rank"
	"github.com/datasf-mcp/datasf-mcp/internal/rank/ranktest"
)

// TestDevSet measures the ranker on the development set, side by side
// with a plain BM25 over the same catalog, and holds it to the goals:
// top-3 >= 0.85 and top-1 >= 0.65 for the questions as typed and for their
// keywords.
func TestDevSet(t *testing.T) {
	t.Parallel()
	docs := ranktest.CatalogDocs(t)
	qs := ranktest.DevSet(t)
	if len(qs) < 80 {
		t.Fatalf("development set: %d questions; want 80 or more", len(qs))
	}
	ix := rank.New(docs)
	ours := func(q string) []string {
		var ids []string
		for _, h := range ix.Search(q, 20) {
			ids = append(ids, docs[h.Index].ID)
		}
		return ids
	}
	report := fmt.Sprintf("%d questions over %d datasets\n| form | ranker | top 1 | top 3 | top 5 | MRR |\n|---|---|---|---|---|---|\n", len(qs), len(docs)) +
		ranktest.Compare(t, qs, docs, "ours", ours)
	t.Logf("development set:\n%s", report)
}
