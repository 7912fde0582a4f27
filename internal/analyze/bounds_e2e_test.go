//go:build e2e

package analyze_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/analyze"
)

// A query that writes temporary files without end (an unbounded recursive
// CTE under DISTINCT once made ~820 MB of temp files in 30 s) stops
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
