package analyze_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/internal/analyze"
)

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
