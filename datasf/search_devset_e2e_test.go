//go:build e2e

package datasf_test

import (
	"fmt"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/rank/ranktest"
)

// TestSearchDevSet is the search benchmark on the live path:
// search_datasf through MCP over the fake portal's Discovery API serving
// DataSF's 630-dataset catalog with its tags and page views, read whole
// and ranked by the server as it reads data.sf.gov's, for every evaluation
// set (ranktest: the development set and the users' own words and
// questions), side by side with Socrata's rule and plain BM25 over the
// same catalog in the same run. e2e/binary's TestSearchEvalBinary
// measures the same through the built binary offline, and writes the
// table of docs/benchmarks.md. A figure over the corpora, it runs in the
// e2e tier (make test): under the race detector it took 34 s.
func TestSearchDevSet(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	sets := append(ranktest.DevSet(t), ranktest.UserSets(t)...)
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
	report := fmt.Sprintf("%d datasets\n\n", len(docs)) + ranktest.TableHeader + ranktest.Compare(t, sets, docs, "search_datasf", ours)
	t.Logf("search benchmark (live path):\n%s", report)
}
