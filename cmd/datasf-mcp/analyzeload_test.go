package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestAnalysesBoundedBinary: issue 34's row "6 concurrent analyze_results
// over a 60k-row SELECT *: peak RSS 552 MB", through the built binary on
// its offline portal. Six callers analyze the same stored result at once;
// the server's RSS while they run must stay within 350 MiB. Every analysis
// must answer: a result, or (on a machine too busy to finish in the
// analysis time limit) an isError in our words, never a crash.
func TestAnalysesBoundedBinary(t *testing.T) {
	t.Parallel()
	const analyses, rows = 6, 60_000
	inst := startInstance(t) // wg3w-h783 was built by TestMain: the peak measured is the analyses'
	sc := inst.queryWithin(t, 2*time.Minute, "wg3w-h783", fmt.Sprintf("SELECT * LIMIT %d", rows))
	if total := sc["metadata"].(map[string]any)["total_count"]; total != float64(rows) {
		t.Fatalf("total_count = %v; want %d", total, rows)
	}
	uri := "resource://" + resourceID(t, sc)

	sampler := samplePeak(t, inst.cmd.Process.Pid)
	start := time.Now()
	results := make([]*mcp.CallToolResult, analyses)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			// Six callers (client keys): one caller may run only two at once.
			key := map[string]string{"X-Datasf-Client-Key": fmt.Sprintf("analyses-test-caller-%d", i)}
			results[i] = inst.callWithin(t, 3*time.Minute, key, "analyze_results", map[string]any{
				"sql":     "SELECT count(*) AS n, count(DISTINCT incident_category) AS c FROM t",
				"results": map[string]any{"t": uri},
			})
		})
	}
	wg.Wait()
	peak := sampler.end()
	answered := 0
	for i, res := range results {
		if res == nil {
			continue // callWithin failed the test already
		}
		text := ""
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(mcp.TextContent); ok {
				text = tc.Text
			}
		}
		switch {
		case !res.IsError:
			answered++
		case strings.Contains(text, `"error_type":"timeout"`):
			// A machine too busy to finish in the time limit: the
			// answer says so, in our words.
			t.Logf("analysis %d: isError %q", i, text)
		default:
			t.Errorf("analysis %d: isError %q; want rows, or a timeout on a busy machine", i, text)
		}
	}
	t.Logf("%d concurrent analyze_results over a %d-row SELECT *: %d answered with rows in %s; server peak RSS during the run %.1f MiB",
		analyses, rows, answered, time.Since(start).Round(time.Millisecond), float64(peak)/(1<<20))
	if peak > 350<<20 {
		t.Errorf("peak RSS during %d concurrent analyses = %.1f MiB; want at most 350 MiB", analyses, float64(peak)/(1<<20))
	}
}
