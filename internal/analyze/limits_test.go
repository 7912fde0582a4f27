package analyze_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/internal/analyze"
)

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

// More rows than Options.MaxRows in all are refused before any is loaded:
// before the limit, 16 loads of a 60,000-row result took 22 s and 750 MB.
func TestTotalRowsLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	big := e.create(t, "incidents", 60_000, []string{"incident_id", "district"})
	results := map[string]string{}
	for i := range analyze.MaxTables {
		results[fmt.Sprintf("t%d", i)] = big
	}
	a := analyze.New(e.results, analyze.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	pages := e.exec.pages.Load()
	start := time.Now()
	_, err := a.Run(ctx, analyze.Request{SQL: "SELECT count(*) FROM t0", Results: results}, nil)
	if !errors.Is(err, analyze.ErrTooLarge) || !strings.Contains(err.Error(), "960000 rows") {
		t.Errorf("Run(16 × 60,000 rows) = %v after %s; want ErrTooLarge naming the 960000 rows", err, time.Since(start))
	}
	if n := e.exec.pages.Load() - pages; n != 0 {
		t.Errorf("%d pages read; want none", n)
	}
	rec, err := e.results.Resource(t.Context(), big)
	if err != nil {
		t.Fatal(err)
	}
	if rec.AccessCount != 0 {
		t.Errorf("a refused Run counted %d accesses to its result; want 0", rec.AccessCount)
	}
}

func TestLoadBytesLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := analyze.New(e.results, analyze.Options{MaxLoadBytes: 200_000, PageSize: 100})
	_, err := a.Run(t.Context(), analyze.Request{SQL: "SELECT count(*) FROM i", Results: map[string]string{"i": e.incidents}}, nil)
	var re *analyze.ResourceError
	if !errors.Is(err, analyze.ErrTooLarge) || !errors.As(err, &re) || !strings.Contains(err.Error(), "200000 bytes") {
		t.Errorf("Run(5000 rows of about 150 bytes, 200 KB allowed) = %v; want a ResourceError wrapping ErrTooLarge", err)
	}
	res, err := analyze.New(e.results, analyze.Options{MaxLoadBytes: 2 << 20}).Run(t.Context(),
		analyze.Request{SQL: "SELECT count(*) AS n FROM i", Results: map[string]string{"i": e.incidents}}, nil)
	if err != nil || res.Rows[0]["n"] != int64(5000) {
		t.Errorf("Run(5000 rows, 2 MiB allowed) = %v, %v; want n = 5000", res, err)
	}
}

// stallExecutor serves a generated result, and once stalled, blocks every
// page until the context ends.
type stallExecutor struct {
	genExecutor
	stalled               atomic.Bool
	inFlight, maxInFlight atomic.Int64 // blocked Page calls now, and at most
}

func (s *stallExecutor) Prepare(_ context.Context, q dualresp.Query) (dualresp.Plan, error) {
	p, err := s.plan(q)
	if err != nil {
		return nil, err
	}
	return stallPlan{p, s}, nil
}

// stallPlan is a stallExecutor's prepared query.
type stallPlan struct {
	*genPlan
	s *stallExecutor
}

func (p stallPlan) Page(ctx context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	s := p.s
	if s.stalled.Load() {
		n := s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		for m := s.maxInFlight.Load(); n > m && !s.maxInFlight.CompareAndSwap(m, n); m = s.maxInFlight.Load() {
		}
		<-ctx.Done()
		return dualresp.PageResult{}, ctx.Err()
	}
	return p.genPlan.Page(ctx, req)
}

// Options.Timeout covers loading the results (and waiting for a turn), not
// only the query.
func TestTimeoutCoversLoading(t *testing.T) {
	t.Parallel()
	exec := &stallExecutor{}
	srv, err := dualresp.New(dualresp.Options{BaseURL: "http://127.0.0.1:1", CleanupInterval: -1,
		Executors: map[string]dualresp.Executor{"gen": exec}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	resp, err := srv.CreateResponse(t.Context(), dualresp.Spec{Query: dualresp.Query{Kind: "gen", Text: "incidents", Params: map[string]string{"n": "100"}}})
	if err != nil {
		t.Fatal(err)
	}
	exec.stalled.Store(true)
	a := analyze.New(srv, analyze.Options{Timeout: 100 * time.Millisecond, MaxConcurrent: 1})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	run := func() error {
		_, err := a.Run(ctx, analyze.Request{SQL: "SELECT count(*) FROM i", Results: map[string]string{"i": resp.ID()}}, nil)
		return err
	}
	start := time.Now()
	if err := run(); !errors.Is(err, analyze.ErrTimeout) || !strings.Contains(err.Error(), "loading") {
		t.Errorf("Run(stalled load) = %v after %s; want ErrTimeout", err, time.Since(start))
	}
	// While one Run holds the only turn, another times out waiting: the two
	// never read rows at the same time.
	errc := make(chan error, 2)
	go func() { errc <- run() }()
	go func() { errc <- run() }()
	for range 2 {
		if err := <-errc; !errors.Is(err, analyze.ErrTimeout) {
			t.Errorf("concurrent Run = %v; want ErrTimeout", err)
		}
	}
	if n := exec.maxInFlight.Load(); n != 1 {
		t.Errorf("two concurrent Runs with MaxConcurrent 1: %d reads at once; want 1 (the other waits for a turn)", n)
	}
}
