package rank_test

import (
	"fmt"
	"slices"
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

// TestUnreachable checks the reach of the catalog's words: a search that
// shares with its dataset only words most datasets have is unreachable;
// one that shares a rarer word, even a stemmed form of it, is not.
func TestUnreachable(t *testing.T) {
	var docs []rank.Doc
	for i := range 20 {
		docs = append(docs, rank.Doc{ID: fmt.Sprintf("d%03d-0000", i), Name: "San Francisco city things", Description: "A <b>table</b> of records"})
	}
	docs[0].Name, docs[0].Tags = "311 Cases", []string{"customer service"}
	docs[1].Columns = []rank.Column{{Name: "Complaint Type", FieldName: "complaint_type"}}
	cases := []ranktest.Case{
		{ID: docs[0].ID, Query: "what people complain about in San Francisco"},
		{ID: docs[0].ID, Query: "customer services in the city"},
		{ID: docs[1].ID, Query: "complaints by type"},
		{ID: docs[2].ID, Query: "city records"},
	}
	got := ranktest.Unreachable(docs, cases)
	var queries []string
	for _, c := range got {
		queries = append(queries, c.Query)
	}
	want := []string{"what people complain about in San Francisco", "city records"}
	if !slices.Equal(queries, want) {
		t.Errorf("Unreachable = %q; want %q", queries, want)
	}
}
