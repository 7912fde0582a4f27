//go:build e2e

package binary

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAnalysesBoundedBinary: 6 concurrent analyze_results over a 60k-row
// SELECT * (once a peak RSS of 552 MB), through the built binary on
// its offline portal. Six callers analyze the same stored result at once;
// the server's RSS may grow by at most 300 MiB while they run. Every analysis
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
	// The schema read above started the offline portal's column statistics
	// of wg3w-h783 in the background (grouped scans of 250,000 rows in this
	// process): wait until get_schema shows them, so that the peak measured
	// is the analyses'.
	sr := newRawClient(t, inst.base, "127.0.0.1")
	sr.initialize(nil)
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if a := sr.call(nil, "get_schema", map[string]any{"dataset_id": "wg3w-h783"}); strings.Contains(string(a.StructuredContent), `"null_share"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the offline portal's column statistics of wg3w-h783 were not ready within 2 minutes")
		}
		time.Sleep(200 * time.Millisecond) // polling a child process's background work, bounded by deadline
	}

	before, err := readProcStatus(inst.cmd.Process.Pid, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
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
	t.Logf("%d concurrent analyze_results over a %d-row SELECT *: %d answered with rows in %s; server peak RSS during the run %.1f MiB (%.1f MiB before)",
		analyses, rows, answered, time.Since(start).Round(time.Millisecond), float64(peak)/(1<<20), float64(before)/(1<<20))
	// The bound is on what the analyses add to the server's memory: what it
	// held before (the offline dataset, its column statistics, schema
	// caches) is work done earlier, as the dataset build TestMain does.
	if grown := peak - before; grown > 300<<20 {
		t.Errorf("RSS grew by %.1f MiB during %d concurrent analyses (%.1f MiB before, %.1f MiB peak); want at most 300 MiB",
			float64(grown)/(1<<20), analyses, float64(before)/(1<<20), float64(peak)/(1<<20))
	}
}
