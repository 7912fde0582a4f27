package soql_test

import (
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// benchQuery is a typical model-written query: filters, grouping, ordering
// and a limit.
const benchQuery = "SELECT incident_category, police_district, count(*) AS n WHERE incident_datetime >= '2024-01-01T00:00:00' AND resolution = 'Open or Active' GROUP BY incident_category, police_district ORDER BY n DESC LIMIT 20"

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := soql.Parse(benchQuery); err != nil {
			b.Fatalf("Parse(%q): %v", benchQuery, err)
		}
	}
}

// BenchmarkQueryPath is what query_datasf does with a parsed query: the
// stable order, the sample page, the count query, each printed.
func BenchmarkQueryPath(b *testing.B) {
	q, err := soql.Parse(benchQuery)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		stable := q.WithStableOrder()
		if stable.WithPage(0, 15).String() == "" || stable.CountQuery().String() == "" {
			b.Fatal("a rewrite printed nothing")
		}
	}
}
