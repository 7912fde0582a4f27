package analyze_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/analyze"
)

// A query that writes temporary files without end (an unbounded recursive
// CTE under DISTINCT: issue 34 saw ~820 MB of temp files in 30 s) stops
// with ErrTempTooLarge once they pass MaxTempBytes, long before its
// Timeout, with a message that says what to do.
func TestTempFilesBounded(t *testing.T) {
	e := newEnv(t)
	a := analyze.New(e.results, analyze.Options{MaxTempBytes: 16 << 20, CacheBytes: 1 << 20, Timeout: 5 * time.Minute})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	_, err := a.Run(ctx, analyze.Request{
		SQL:     "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(DISTINCT hex(randomblob(200))) AS n FROM c",
		Results: map[string]string{"districts": e.districts}}, nil)
	if !errors.Is(err, analyze.ErrTempTooLarge) || !strings.Contains(err.Error(), "16 MiB") || !strings.Contains(err.Error(), "recursive CTE") {
		t.Fatalf("an unbounded recursive CTE = %v; want ErrTempTooLarge naming the 16 MiB bound and what to change", err)
	}
}

// One owner's analyses beyond MaxConcurrentPerOwner fail at once with
// ErrBusy; another owner's still run.
func TestAnalysesPerOwner(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := analyze.New(e.results, analyze.Options{MaxConcurrentPerOwner: 1, MaxConcurrent: 1})
	// Owner A's first analysis holds the only turn: it waits on a query
	// that runs until its context ends.
	ctxA, stopA := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	started := make(chan struct{})
	wg.Go(func() {
		_, _ = a.Run(ctxA, analyze.Request{Owner: "a", SQL: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) AS n FROM c, districts",
			Results: map[string]string{"districts": e.districts}}, func(int64, int64, string) {
			select {
			case <-started:
			default:
				close(started)
			}
		})
	})
	<-started
	_, err := a.Run(t.Context(), analyze.Request{Owner: "a", SQL: "SELECT count(*) AS n FROM districts", Results: map[string]string{"districts": e.districts}}, nil)
	if !errors.Is(err, analyze.ErrBusy) {
		t.Errorf("owner A's second analysis at once = %v; want ErrBusy", err)
	}
	stopA()
	wg.Wait()
	if _, err := a.Run(t.Context(), analyze.Request{Owner: "b", SQL: "SELECT count(*) AS n FROM districts", Results: map[string]string{"districts": e.districts}}, nil); err != nil {
		t.Errorf("owner B's analysis after A's ended = %v; want it run", err)
	}
}
