//go:build e2e

package rank_test

import (
	"fmt"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/rank"
	"github.com/datasf-mcp/datasf-mcp/internal/rank/ranktest"
)

// TestDevSet measures the ranker on every evaluation set (the development
// set written from the catalog, and the users' own search words and
// questions), side by side with Socrata's rule and plain BM25 over the
// same catalog, and holds it to each set's goals. datasf's
// TestSearchDevSet measures the same through MCP. A figure over the
// corpora, it runs in the e2e tier (go test -tags e2e): under the race
// detector the nearest words' scans made it 24 s of make test.
func TestDevSet(t *testing.T) {
	t.Parallel()
	docs := ranktest.CatalogDocs(t)
	sets := append(ranktest.DevSet(t), ranktest.UserSets(t)...)
	ix := rank.New(docs)
	ours := func(q string) []string {
		var ids []string
		for _, h := range ix.Search(q, 20) {
			ids = append(ids, docs[h.Index].ID)
		}
		return ids
	}
	report := fmt.Sprintf("%d datasets\n", len(docs)) + ranktest.TableHeader + ranktest.Compare(t, sets, docs, "ours", ours)
	t.Logf("evaluation sets:\n%s", report)
}
