package rank_test

import (
	"fmt"
	"strings"
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
	base := ranktest.NewBM25(docs)
	forms := []struct {
		name string
		text func(ranktest.Question) string
	}{
		{"the question as typed", func(q ranktest.Question) string { return q.Question }},
		{"its keywords", func(q ranktest.Question) string { return q.Keywords }},
	}
	var report strings.Builder
	fmt.Fprintf(&report, "%d questions over %d datasets\n| form | ranker | top 1 | top 3 | top 5 | MRR |\n|---|---|---|---|---|---|\n", len(qs), len(docs))
	for _, f := range forms {
		m, misses := ranktest.Measure(qs, f.text, ours)
		b, _ := ranktest.Measure(qs, f.text, base.Search)
		fmt.Fprintf(&report, "| %s | ours | %s |\n| %s | plain BM25 | %s |\n", f.name, m, f.name, b)
		for _, s := range misses {
			t.Logf("%s: %s", f.name, s)
		}
		if m.Top3 < 0.85 || m.Top1 < 0.65 {
			t.Errorf("%s: top-1 %.2f, top-3 %.2f; want >= 0.65 and >= 0.85", f.name, m.Top1, m.Top3)
		}
	}
	t.Logf("development set:\n%s", report.String())
}
