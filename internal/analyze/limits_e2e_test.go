//go:build e2e

package analyze_test

import (
	"bufio"
	"errors"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/analyze"
)

// Queries that make huge values stop at Options.MaxValueBytes, and answers
// stop at Options.MaxResultBytes, instead of growing memory (before the
// limits, the printf case alone added 1.2 GB). Not parallel: it measures
// the process's memory.
func TestQueryMemoryIsBounded(t *testing.T) {
	e := newEnv(t)
	a := analyze.New(e.results, analyze.Options{})
	tests := []struct {
		name      string
		sql       string
		wantErr   error
		truncated bool
	}{
		{"one huge value", "SELECT length(printf('%.*c', 2000000000, 'x')) AS n FROM districts", analyze.ErrValueTooLong, false},
		{"huge aggregate", "SELECT length(group_concat(printf('%.*c', 100000, 'x'))) AS n FROM incidents", analyze.ErrValueTooLong, false},
		{"zeroblob", "SELECT length(zeroblob(500000000)) AS n FROM districts", analyze.ErrValueTooLong, false},
		{"many large values", "SELECT printf('%.*c', 1000000, 'x') AS v FROM incidents", nil, true},
		{"wide rows", "SELECT " + strings.Repeat("printf('%.*c', 1000000, 'x'), ", 400) + "1 FROM districts", nil, false},
	}
	const bound = 150 << 20
	for _, tt := range tests {
		grew := peakRSS(t)
		heap := heapLive()
		res, err := a.Run(t.Context(), analyze.Request{SQL: tt.sql,
			Results: map[string]string{"districts": e.districts, "incidents": e.incidents}}, nil)
		rss, heapGrew := grew(), heapLive()-heap
		t.Logf("%s: peak RSS +%d MiB, Go heap %+d MiB, error %v", tt.name, rss>>20, heapGrew>>20, err)
		switch {
		case tt.wantErr != nil:
			var se *analyze.SQLError
			if !errors.Is(err, tt.wantErr) || !errors.As(err, &se) || !strings.Contains(err.Error(), "1 MiB") {
				t.Errorf("%s: error = %v; want a SQLError wrapping %v naming the limit", tt.name, err, tt.wantErr)
			}
		case tt.name == "wide rows":
			if err == nil || !strings.Contains(err.Error(), "too many columns") {
				t.Errorf("%s: error = %v; want too many columns", tt.name, err)
			}
		case err != nil:
			t.Errorf("%s: error = %v", tt.name, err)
		case !res.Truncated || res.RowCount > analyze.DefaultMaxResultBytes/1_000_000:
			t.Errorf("%s: %d rows, truncated %v; want at most %d rows, truncated", tt.name, res.RowCount, res.Truncated, analyze.DefaultMaxResultBytes/1_000_000)
		}
		if rss > bound {
			t.Errorf("%s: the peak RSS grew by %d MiB; want at most %d MiB", tt.name, rss>>20, bound>>20)
		}
	}
}

// peakRSS resets the process's peak resident set size (Linux
// /proc/self/clear_refs) and returns a function that reports how much it
// grew since, or skips the test where that is not possible. SQLite
// (modernc.org/sqlite) allocates outside the Go heap, so the RSS is what
// shows its memory.
func peakRSS(t *testing.T) func() int64 {
	t.Helper()
	runtime.GC()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS: %v", err)
	}
	before := procStatus(t, "VmRSS")
	return func() int64 { return procStatus(t, "VmHWM") - before }
}

// procStatus returns a field of /proc/self/status in bytes.
func procStatus(t *testing.T, field string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if ok && name == field {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", field, value, err)
			}
			return kb << 10
		}
	}
	t.Skipf("no %s in /proc/self/status", field)
	return 0
}

// heapLive is the Go heap in use.
func heapLive() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}
