package main

import (
	"flag"
	"fmt"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/fuzzymatch"
	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// microQuery is a typical model-written query with two misspelt columns.
const microQuery = "SELECT incident_categry, police_distrct, count(*) AS n WHERE incident_datetime >= '2024-01-01T00:00:00' AND resolution = 'Open or Active' GROUP BY incident_categry, police_distrct ORDER BY n DESC LIMIT 20"

// columns100 is a 100-column schema of incident-like field names.
func columns100() []string {
	stems := []string{"incident", "report", "police", "analysis", "supervisor", "filed", "resolution", "intersection", "case", "unit"}
	tails := []string{"id", "date", "datetime", "category", "subcategory", "description", "district", "neighborhood", "code", "number"}
	cols := make([]string, 0, len(stems)*len(tails))
	for _, s := range stems {
		for _, t := range tails {
			cols = append(cols, s+"_"+t)
		}
	}
	cols[len(cols)-1] = "resolution" // the query's one column without a typo that is not a stem_tail
	return cols
}

// micro measures part 4 with testing.Benchmark, cfg.Runs times each.
func micro(cfg config, rep *report) error {
	testing.Init() // no effect in a test binary, where the flags exist
	if err := flag.Set("test.benchtime", cfg.MicroTime.String()); err != nil {
		return err
	}
	cols := columns100()
	// Check once that the benchmark does the work it claims.
	res, err := fuzzymatch.Correct(microQuery, cols, fuzzymatch.Options{})
	if err != nil {
		return err
	}
	if len(res.Corrections) != 2 {
		return fmt.Errorf("fuzzymatch.Correct made %d corrections (%+v); the benchmark wants 2", len(res.Corrections), res.Corrections)
	}
	var failed error
	benches := []struct {
		key string
		fn  func(b *testing.B)
	}{
		{"micro.parse", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := soql.Parse(microQuery); err != nil {
					failed = err
					b.FailNow()
				}
			}
		}},
		{"micro.correct", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := fuzzymatch.Correct(microQuery, cols, fuzzymatch.Options{}); err != nil {
					failed = err
					b.FailNow()
				}
			}
		}},
	}
	for range cfg.Runs {
		for _, bm := range benches {
			r := testing.Benchmark(bm.fn)
			if failed != nil {
				return fmt.Errorf("%s: %w", bm.key, failed)
			}
			if r.N == 0 {
				return fmt.Errorf("%s: the benchmark did not run", bm.key)
			}
			rep.add(bm.key+".ns", float64(r.NsPerOp()))
			rep.add(bm.key+".allocs", float64(r.AllocsPerOp()))
			rep.add(bm.key+".bytes", float64(r.AllocedBytesPerOp()))
		}
	}
	return nil
}
