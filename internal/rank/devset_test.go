package rank_test

import (
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/rank"
	"github.com/datasf-mcp/datasf-mcp/internal/rank/ranktest"
)

// BenchmarkSearchCatalog times a search of DataSF's 630-dataset catalog
// with the users' own words and questions, beside Socrata's rule and
// plain BM25 over the same catalog in the same run (docs/benchmarks.md).
func BenchmarkSearchCatalog(b *testing.B) {
	docs := ranktest.CatalogDocs(b)
	var queries []string
	for _, s := range ranktest.UserSets(b) {
		for _, c := range s.Cases {
			queries = append(queries, c.Query)
		}
	}
	ix := rank.New(docs)
	socrata, bm25 := ranktest.NewSocrataRule(docs), ranktest.NewBM25(docs)
	for _, r := range []struct {
		name   string
		search func(string)
	}{
		{"ours", func(q string) { ix.Search(q, 20) }},
		{"socrata_rule", func(q string) { socrata.Search(q) }},
		{"plain_bm25", func(q string) { bm25.Search(q) }},
	} {
		b.Run(r.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				r.search(queries[i%len(queries)])
				i++
			}
		})
	}
}
