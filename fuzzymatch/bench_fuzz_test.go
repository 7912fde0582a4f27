package fuzzymatch_test

import (
	"fmt"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/fuzzymatch"
	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// columns100 is a 100-column schema with realistic field names.
func columns100() []string {
	stems := []string{"incident", "report", "police", "analysis", "supervisor", "service", "request", "permit", "applicant", "facility"}
	tails := []string{"id", "date", "datetime", "category", "subcategory", "description", "district", "neighborhood", "status", "number"}
	var cols []string
	for _, s := range stems {
		for _, t := range tails {
			cols = append(cols, s+"_"+t)
		}
	}
	return cols
}

func BenchmarkCorrect100Columns(b *testing.B) {
	cols := columns100()
	query := "SELECT incident_categry, count(*) AS n WHERE police_district = 'MISSION' GROUP BY incident_categry ORDER BY n DESC"
	b.ReportAllocs()
	for b.Loop() {
		res, err := fuzzymatch.Correct(query, cols, fuzzymatch.Options{})
		if err != nil || len(res.Corrections) != 1 {
			b.Fatalf("Correct = %+v, %v; want one correction", res, err)
		}
	}
}

// FuzzCorrect: never panics; with no correction the text is byte-identical;
// a query that parsed still parses after correction.
func FuzzCorrect(f *testing.F) {
	for _, s := range []string{
		"SELECT incident_categry, count(*) AS n GROUP BY incident_categry",
		"SELECT `incident category` WHERE police_distrct = 'x' ORDER BY :id",
		"SELECT upper(aplicant) AS a WHERE a = 'incident_categry' |> SELECT a",
		"SELECT * WHERE within_circle(locaton, 37.7, -122.4, 500)",
		"",
	} {
		f.Add(s)
	}
	cols := columns100()
	f.Fuzz(func(t *testing.T, query string) {
		_, parseErr := soql.Parse(query)
		res, err := fuzzymatch.Correct(query, cols, fuzzymatch.Options{})
		if (err == nil) != (parseErr == nil) {
			t.Fatalf("Correct error %v, Parse error %v: they must agree", err, parseErr)
		}
		if err != nil {
			return
		}
		if len(res.Corrections) == 0 && res.Query != query {
			t.Fatalf("no corrections but the text changed: %q -> %q", query, res.Query)
		}
		if _, err := soql.Parse(res.Query); err != nil {
			t.Fatalf("corrected query %q does not parse: %v (from %q)", res.Query, err, query)
		}
		_ = fmt.Sprint(res.Corrections)
	})
}
