package analyze_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/analyze"
)

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

// TestSQLNestingDepthBounded: SQL nested deeper than MaxSQLDepth is
// refused by CheckSQL, before SQLite parses it, with ErrInvalid saying
// "nested too deeply"; SQL at the bound passes the check.
func TestSQLNestingDepthBounded(t *testing.T) {
	t.Parallel()
	nest := func(n int) string {
		return "SELECT " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + " FROM t"
	}
	if err := analyze.CheckSQL(nest(analyze.MaxSQLDepth)); err != nil {
		t.Errorf("CheckSQL(%d levels) = %v; want nil", analyze.MaxSQLDepth, err)
	}
	for _, n := range []int{analyze.MaxSQLDepth + 1, 15_970} {
		err := analyze.CheckSQL(nest(n))
		if !errors.Is(err, analyze.ErrInvalid) || !strings.Contains(err.Error(), "nested too deeply") {
			t.Errorf("CheckSQL(%d levels) = %v; want ErrInvalid, nested too deeply", n, err)
		}
	}
	// Parentheses inside a string literal are not nesting.
	if err := analyze.CheckSQL("SELECT '" + strings.Repeat("(", 500) + "' FROM t"); err != nil {
		t.Errorf("CheckSQL(a literal of 500 '(') = %v; want nil", err)
	}
}

// TestAnswerBytesCountEscapesAndNames: the rows answered, encoded as JSON
// as the tool answers them, stay within MaxResultBytes however they
// amplify: blobs of zeros (six bytes of JSON each) under a column name
// of 16,000 characters repeated in every row. Before the bound counted
// the JSON, 8 MiB of values made a ~136 MB answer. The answer says
// which bound cut it.
func TestAnswerBytesCountEscapesAndNames(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const bound = 1 << 20
	a := analyze.New(e.results, analyze.Options{MaxResultBytes: bound})
	name := strings.Repeat("k", 16_000)
	for _, sql := range []string{
		`SELECT zeroblob(8000) AS "` + name + `" FROM incidents`,
		`SELECT char(0, 60, 62, 38, 34) || printf('%.*c', 400, char(1)) AS v FROM incidents`,
		`SELECT 1 AS "` + name + `" FROM incidents`,
	} {
		res, err := a.Run(t.Context(), analyze.Request{SQL: sql, Results: map[string]string{"incidents": e.incidents}}, nil)
		if err != nil {
			t.Fatalf("Run(%.60s…) = %v", sql, err)
		}
		b, err := json.Marshal(res.Rows)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > bound || !res.Truncated || res.RowCount == 0 || !strings.Contains(res.Cut, "1 MiB") {
			t.Errorf("Run(%.60s…): %d rows, %d bytes of JSON, truncated %v, cut %q; want at most %d bytes, truncated, cut naming 1 MiB",
				sql, res.RowCount, len(b), res.Truncated, res.Cut, bound)
		}
	}
}
