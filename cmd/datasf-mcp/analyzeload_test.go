package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
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
	results := make([]*toolAnswer, analyses)
	var wg sync.WaitGroup
	for i := range results {
		// Six callers (addresses): one caller may run only two at once.
		c := newRawClient(t, inst.base, fmt.Sprintf("127.0.0.%d", 1+i))
		c.hc.Timeout = 3 * time.Minute
		if a := c.initialize(nil); a.status != http.StatusOK {
			t.Fatalf("initialize = %d %s", a.status, a.body)
		}
		wg.Go(func() {
			res, err := c.tryCall(nil, "analyze_results", map[string]any{
				"sql":     "SELECT count(*) AS n, count(DISTINCT incident_category) AS c FROM t",
				"results": map[string]any{"t": uri},
			})
			if err != nil {
				t.Errorf("analysis %d: %v", i, err)
				return
			}
			results[i] = &res
		})
	}
	wg.Wait()
	peak := sampler.end()
	answered := 0
	for i, res := range results {
		if res == nil {
			continue // the call failed the test already
		}
		text := res.text()
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
