package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestMain lets the test binary play the driver's child processes: the
// driver re-executes its own binary, which here is the test binary.
func TestMain(m *testing.M) {
	if code, ran := runChildIfAsked(); ran {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestQuickRun runs the whole driver in -quick mode (small datasets) and
// checks that the table and the report have every section. It asserts no
// timings. One run: every figure is measured once (a run's start-up part
// builds the 250,000 incidents into a cold cache, tens of seconds; the
// median of several runs is TestPercentileAndMedian's).
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

func TestUnionDuration(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	iv := func(a, b int) [2]time.Time { return [2]time.Time{at(a), at(b)} }
	tests := []struct {
		name string
		ivs  [][2]time.Time
		want time.Duration
	}{
		{"none", nil, 0},
		{"one", [][2]time.Time{iv(0, 5)}, 5 * time.Millisecond},
		{"parallel", [][2]time.Time{iv(0, 5), iv(1, 4)}, 5 * time.Millisecond},
		{"overlapping, out of order", [][2]time.Time{iv(3, 8), iv(0, 5)}, 8 * time.Millisecond},
		{"disjoint", [][2]time.Time{iv(0, 2), iv(5, 6)}, 3 * time.Millisecond},
		{"touching", [][2]time.Time{iv(0, 2), iv(2, 3)}, 3 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := unionDuration(tt.ivs); got != tt.want {
				t.Errorf("unionDuration = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPercentileAndMedian(t *testing.T) {
	t.Parallel()
	ds := make([]time.Duration, 100)
	for i := range ds {
		ds[i] = time.Duration(100-i) * time.Millisecond // 100 ms .. 1 ms
	}
	got := []time.Duration{percentile(ds, 50), percentile(ds, 99), percentile(ds, 100), percentile(ds[:1], 99)}
	want := []time.Duration{50 * time.Millisecond, 99 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("percentiles (-want +got):\n%s", diff)
	}
	if got := median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median(3,1,2) = %v, want 2", got)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median(4,1,3,2) = %v, want 2.5", got)
	}
}

func TestIDSet(t *testing.T) {
	t.Parallel()
	s := newIDSet(3)
	for _, row := range []string{`{"incident_id":"600000"}`, `{"a":1,"incident_id":"600002"}`, `{"incident_id":"600000"}`} {
		if err := s.add([]byte(row)); err != nil {
			t.Fatalf("add(%s): %v", row, err)
		}
	}
	if s.distinct != 2 {
		t.Errorf("distinct = %d, want 2", s.distinct)
	}
	for _, bad := range []string{`{"incident_id":"600003"}`, `{"incident_id":"599999"}`, `{"x":"1"}`, `{"incident_id":"abc"}`} {
		if err := s.add([]byte(bad)); err == nil {
			t.Errorf("add(%s) = nil, want an error", bad)
		}
	}
}

func TestGroup(t *testing.T) {
	t.Parallel()
	for in, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1500: "-1,500"} {
		if got := group(in); got != want {
			t.Errorf("group(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestParseParts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want map[int]bool
	}{
		{"1,2,3,4", map[int]bool{1: true, 2: true, 3: true, 4: true}},
		{" 2 ", map[int]bool{2: true}},
		{"4,1,4", map[int]bool{1: true, 4: true}},
		{"5", map[int]bool{5: true}},
		{"6", map[int]bool{6: true}},
	} {
		got, err := parseParts(tc.in)
		if err != nil || !cmp.Equal(got, tc.want) {
			t.Errorf("parseParts(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "0", "7", "1,,2", "two"} {
		if _, err := parseParts(bad); err == nil || !strings.Contains(err.Error(), "-parts") {
			t.Errorf("parseParts(%q) error = %v; want one naming -parts", bad, err)
		}
	}
}
