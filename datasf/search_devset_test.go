package datasf_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/rank/ranktest"
)

// TestSearchDevSet is the search benchmark through the MCP layer:
// search_datasf over the 630-dataset DataSF catalog (the fake portal's
// Discovery API, read whole and ranked by the server), for each question
// of the development set as typed and as keywords, side by side with a
// plain BM25 over the same catalog in the same run. It prints top-1/3/5
// and MRR (docs/benchmarks.md) and holds both forms to top-3 >= 0.85 and
// top-1 >= 0.65.
func TestSearchDevSet(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	qs := ranktest.DevSet(t)
	docs := ranktest.CatalogDocs(t)
	base := ranktest.NewBM25(docs)
	ours := func(q string) []string {
		var out catalogOut
		args := map[string]any{"query": q, "limit": 20}
		structured(t, "search_datasf", args, h.call(t, "search_datasf", args), &out)
		ids := make([]string, len(out.Results))
		for i, r := range out.Results {
			ids[i] = r.ID
		}
		return ids
	}
	forms := []struct {
		name string
		text func(ranktest.Question) string
	}{
		{"the question as typed", func(q ranktest.Question) string { return q.Question }},
		{"its keywords", func(q ranktest.Question) string { return q.Keywords }},
	}
	var report strings.Builder
	fmt.Fprintf(&report, "%d questions, %d datasets\n| form | ranking | top 1 | top 3 | top 5 | MRR |\n|---|---|---|---|---|---|\n", len(qs), len(docs))
	for _, f := range forms {
		m, misses := ranktest.Measure(qs, f.text, ours)
		b, _ := ranktest.Measure(qs, f.text, base.Search)
		fmt.Fprintf(&report, "| %s | search_datasf | %s |\n| %s | plain BM25 | %s |\n", f.name, m, f.name, b)
		for _, s := range misses {
			t.Logf("%s: %s", f.name, s)
		}
		if m.Top3 < 0.85 || m.Top1 < 0.65 {
			t.Errorf("search_datasf, %s: top-1 %.2f, top-3 %.2f; want >= 0.65 and >= 0.85", f.name, m.Top1, m.Top3)
		}
	}
	t.Logf("search benchmark:\n%s", report.String())
}

// searchItem is one result of search_datasf as a model reads it.
type searchItem struct {
	ID        string   `json:"id"`
	RowCount  *int64   `json:"row_count"`
	UpdatedAt string   `json:"updated_at"`
	Matched   []string `json:"matched"`
	Columns   []string `json:"columns"`
}

// Search answers are made for choosing: each hit says why it matched, its
// row count, its last update and its first field names; five of them fit
// in 1,200 Claude tokens, as structuredContent and as text.
func TestSearchAnswerForChoosing(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	for _, q := range []string{"food trucks", "police incident reports", "Which intersections have the most traffic collisions where someone was injured?", "311"} {
		args := map[string]any{"query": q}
		res := h.call(t, "search_datasf", args)
		var out struct {
			Results []searchItem `json:"results"`
		}
		structured(t, "search_datasf", args, res, &out)
		if len(out.Results) != 5 {
			t.Fatalf("search_datasf(%q): %d results; want 5", q, len(out.Results))
		}
		for _, r := range out.Results {
			if len(r.Matched) == 0 || r.RowCount == nil || r.UpdatedAt == "" || len(r.Columns) == 0 {
				t.Errorf("search_datasf(%q) result %s = %+v; want matched, row_count, updated_at and columns", q, r.ID, r)
			}
		}
		sc, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		n := claudeTokens(t, sc)
		text := textOf(t, res)
		nt := claudeTokens(t, []byte(text))
		t.Logf("search_datasf(%q): structuredContent %d bytes, %d tokens; text %d bytes, %d tokens (budget 1,200)", q, len(sc), n, len(text), nt)
		if n > 1200 || nt > 1200 {
			t.Errorf("search_datasf(%q): %d tokens structured, %d as text; want at most 1,200 for 5 hits", q, n, nt)
		}
	}
}
