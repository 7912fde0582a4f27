package datasf_test

import (
	"encoding/json"
	"fmt"
	"os"
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
	report := fmt.Sprintf("%d questions, %d datasets\n\n| form | ranking | top 1 | top 3 | top 5 | MRR |\n|---|---|---|---|---|---|\n", len(qs), len(docs)) +
		ranktest.Compare(t, qs, docs, "search_datasf", ours)
	t.Logf("search benchmark:\n%s", report)
	if *update {
		writeSearchSection(t, report)
	}
}

// The search benchmark's section of docs/benchmarks.md, after the marker
// that make bench keeps (bench/main.go).
const (
	keptSectionsMarker = "<!-- sections below are written by tests; make bench keeps them -->"
	searchSectionStart = "## Dataset search (search_datasf)"
)

// writeSearchSection rewrites the search benchmark's section of
// docs/benchmarks.md with table (go test ./datasf -run TestSearchDevSet
// -update).
func writeSearchSection(t *testing.T, table string) {
	t.Helper()
	const path = "../docs/benchmarks.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if i := strings.Index(doc, searchSectionStart); i >= 0 {
		rest := doc[i+len(searchSectionStart):]
		end := len(doc)
		if j := strings.Index(rest, "\n## "); j >= 0 {
			end = i + len(searchSectionStart) + j + 1
		}
		doc = doc[:i] + doc[end:]
	}
	if !strings.Contains(doc, keptSectionsMarker) {
		doc = strings.TrimRight(doc, "\n") + "\n\n" + keptSectionsMarker + "\n"
	}
	section := searchSectionStart + `

Written by ` + "`go test ./datasf -run TestSearchDevSet -update`" + ` (not by make bench, which keeps this
section). Each question of the development set (testdata/search/devset.jsonl: questions written
from the catalog's own descriptions, with look-alike datasets on purpose; see its README) is asked
of search_datasf through an MCP session, against the fake portal serving DataSF's 630-dataset
catalog (testdata/catalog), as typed and as its keywords; the answer's rank of the right dataset
gives top 1/3/5 and MRR (over 20 results). The baseline, in the same run, is a plain BM25 (k1 1.2,
b 0.75) over each dataset's name, description, category and column names as one text, with
lower-case word tokens and nothing else. Goal: top 3 >= 0.85 and top 1 >= 0.65 in both forms.

` + table + `
Before this ranker (search_datasf passed the fake Discovery API's substring scoring through),
this test gave, on main at 64c313d: as typed 0.47 | 0.64 | 0.71 | 0.583; keywords 0.78 | 0.95 |
0.97 | 0.858 (top 1 | top 3 | top 5 | MRR).
`
	doc = strings.TrimRight(doc, "\n") + "\n\n" + section
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
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

// A dataset named by its id comes first, alone or among words.
func TestSearchByID(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	for _, q := range []string{"wg3w-h783", "incidents WG3W-H783"} {
		var out catalogOut
		args := map[string]any{"query": q}
		structured(t, "search_datasf", args, h.call(t, "search_datasf", args), &out)
		if len(out.Results) == 0 || out.Results[0].ID != "wg3w-h783" {
			t.Errorf("search_datasf(%q) = %+v; want wg3w-h783 first", q, out.Results)
		}
	}
}
