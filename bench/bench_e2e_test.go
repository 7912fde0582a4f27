//go:build e2e

package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQuickRun runs the whole driver in -quick mode (small datasets) and
// checks that the table and the report have every section. It asserts no
// timings. One run: every figure is measured once (the median of several
// runs is TestPercentileAndMedian's). Its start-up part queries the small
// food truck permits, not the 250,000 incidents whose cold build is most of
// a full run's start-up time.
func TestQuickRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "benchmarks.md")
	var stdout bytes.Buffer
	if err := realMain(t.Context(), []string{"-quick", "-runs", "1", "-out", out}, &stdout, io.Discard); err != nil {
		t.Fatalf("bench -quick: %v", err)
	}
	table := stdout.String()
	t.Logf("bench -quick printed:\n%s", table)
	for _, want := range []string{
		"| part | figure | ours | baseline | ratio | goal | status |",
		"| 1 payload | 10 rows: structuredContent bytes |",
		"| 1 payload | 5,000 rows: CallToolResult JSON bytes |",
		"| 1 payload | 5,000 rows: est. tokens (CallToolResult bytes/4) |",
		"| 1 payload | 2,000 rows: retrievable via link (pages) | 2,000/2,000 distinct (100.0%) |",
		"| 1 payload | 5,000 rows: retrievable via link (export) | 5,000/5,000 distinct (100.0%) |",
		"| 1 payload | 10-row two-column GROUP BY: the larger host view, text and link or structuredContent (bytes) |",
		"| 2 retrieval | 5,000 rows: rows/s",
		"| 2 retrieval | export server peak RSS after 5,000 rows",
		"| 3 overhead | schema cached: overhead p50",
		"| 3 overhead | schema not cached: overhead p99",
		"| 3 overhead | schema cached: upstream requests per call (mean; max) |",
		"| 4 micro | soql.Parse: ns/op |",
		"| 4 micro | fuzzymatch.Correct, 100 columns, 2 typos: ns/op",
		"| 5 start-up | `--offline` start to ready",
		"| 5 start-up | first query_datasf count(*) on rqzj-sfat, cold",
		"| 5 start-up | query_datasf GROUP BY facilitytype over rqzj-sfat, warm",
		"| 5 start-up | RSS after a query on rqzj-sfat and yitu-d5am |",
		"| 5 start-up | peak RSS during two full CSV exports of `SELECT * LIMIT 20000` on rqzj-sfat (480 rows each",
		"| 5 start-up | --data CSV export of 20,000 rows: start to ready",
		"| 6 export speed | 20,000 rows of SELECT *: seconds for the complete result",
		"| 6 export speed | 100,000 rows: every row, in the direct pages' order (checksum of the rows in order) | true |",
		"| 6 export speed | export server peak RSS (VmHWM) after the 100,000-row export |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table has no line with %q", want)
		}
	}
	doc, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	tableOnly, _, _ := strings.Cut(table, "\nMissed goals:")
	for _, want := range []string{"# Benchmarks", "`make bench`", "- Machine: ", "- Go: go", "- Date: ", "## How it is measured", tableOnly} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("%s has no %q", out, want)
		}
	}
}
