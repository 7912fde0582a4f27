//go:build e2e

package reliability

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
)

// soakCalls is the number of tool calls of TestSoakHeapIsFlat. The default
// finishes in well under a minute under -race; a long run:
//
//	go test ./reliability -run Soak -soak.calls=36000 -v
var soakCalls = flag.Int("soak.calls", 1000, "tool calls of TestSoakHeapIsFlat")

// soakSamples is how many times the memory is measured during the run.
const soakSamples = 12

// The heap may grow after warm-up by soakNoise bytes, or by at most
// soakMaxPerCall bytes a call (a leak of a call's answer is about 44 KB a
// call; a result store that never evicts grows by about 2.5 KB a call).
const (
	soakNoise      = 512 << 10
	soakMaxPerCall = 256
)

// TestSoakHeapIsFlat answers thousands of distinct queries against the
// offline product (datasf.New with Config.Offline, the product's own local
// portal) and fails when the Go heap keeps growing after warm-up: a long
// run must reach a steady state once the result store evicts. Every call
// is a query_datasf with a SoQL text never seen before; every fifth also
// reads a page of a stored result over REST, every tenth runs
// analyze_results on it and every twentieth list_results.
//
// The heap in use (after a GC) is sampled soakSamples times; from the
// middle third of the run to the last (the first is the warm-up) it may
// grow by soakNoise, or by soakMaxPerCall bytes a call. The resident set is
// reported too (SQLite's memory, outside the Go heap, shows there; under
// -race it also holds the race detector's, which grows with the run).
func TestSoakHeapIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test")
	}
	// Not parallel: it measures the process's memory.
	ctx := t.Context()
	svc, err := datasf.New(ctx, datasf.Config{
		Offline:         &datasf.OfflineConfig{},
		MaxResources:    256, // reached early: the run then measures eviction, not filling
		CleanupInterval: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	rest := svc.RESTHandler()

	const workers = 4
	clients := make([]*client.Client, workers)
	for i := range clients {
		c, err := client.NewInProcessClient(svc.MCPServer())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
		init.Params.ClientInfo = mcp.Implementation{Name: "soak", Version: "1"}
		if _, err := c.Initialize(ctx, init); err != nil {
			t.Fatal(err)
		}
		clients[i] = c
	}

	calls := *soakCalls
	var (
		next     atomic.Int64
		failures atomic.Int64
		firstErr sync.Once
	)
	fail := func(format string, args ...any) {
		failures.Add(1)
		firstErr.Do(func() { t.Errorf(format, args...) })
	}
	call := func(c *client.Client, i int) {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		req := mcp.CallToolRequest{}
		req.Params.Name = "query_datasf"
		req.Params.Arguments = map[string]any{
			"dataset_id":  "rqzj-sfat",
			"soql":        fmt.Sprintf("SELECT applicant, status, facilitytype WHERE applicant != 'soak %d' LIMIT %d", i, 50+i%400),
			"sample_size": 1 + i%15,
		}
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			fail("call %d: query_datasf = %v, %v", i, err, res)
			return
		}
		sc, _ := res.StructuredContent.(map[string]any)
		resource, _ := sc["resource"].(map[string]any)
		url, _ := resource["url"].(string)
		id := url[strings.LastIndex(url, "/")+1:]
		if i%5 == 0 {
			w := httptest.NewRecorder()
			rest.ServeHTTP(w, httptest.NewRequestWithContext(ctx, http.MethodGet, "/resources/"+id+"?offset=10&limit=100", nil))
			if w.Code != http.StatusOK {
				fail("call %d: GET page = %d %s", i, w.Code, w.Body)
			}
		}
		if i%10 == 0 {
			req := mcp.CallToolRequest{}
			req.Params.Name = "analyze_results"
			req.Params.Arguments = map[string]any{
				"sql":     "SELECT status, count(*) AS n FROM r GROUP BY status ORDER BY n DESC",
				"results": map[string]any{"r": "resource://" + id},
			}
			if res, err := c.CallTool(ctx, req); err != nil || res.IsError {
				fail("call %d: analyze_results = %v, %v", i, err, res)
			}
		}
		if i%20 == 0 {
			req := mcp.CallToolRequest{}
			req.Params.Name = "list_results"
			if res, err := c.CallTool(ctx, req); err != nil || res.IsError {
				fail("call %d: list_results = %v, %v", i, err, res)
			}
		}
	}

	type sample struct {
		calls      int
		heap, rss  int64
		goroutines int
	}
	var samples []sample
	measure := func(done int) {
		runtime.GC()
		runtime.GC()
		samples = append(samples, sample{calls: done, heap: heapInUse(), rss: residentSet(), goroutines: runtime.NumGoroutine()})
	}
	start := time.Now()
	for s := 1; s <= soakSamples; s++ {
		until := int64(calls * s / soakSamples)
		var wg sync.WaitGroup
		for _, c := range clients {
			wg.Go(func() {
				for {
					i := next.Add(1) - 1
					if i >= until {
						next.Add(-1)
						return
					}
					call(c, int(i))
				}
			})
		}
		wg.Wait()
		if failures.Load() > 0 {
			t.Fatalf("%d calls failed", failures.Load())
		}
		measure(int(until))
	}
	elapsed := time.Since(start)

	var lines []string
	for _, s := range samples {
		lines = append(lines, fmt.Sprintf("%6d calls: heap %6.1f MiB, RSS %6.1f MiB, %d goroutines", s.calls, mib(s.heap), mib(s.rss), s.goroutines))
	}
	t.Logf("soak: %d calls in %s (%.0f calls/s), %d workers, store bounded at 256 results:\n%s",
		calls, elapsed.Round(time.Millisecond), float64(calls)/elapsed.Seconds(), workers, strings.Join(lines, "\n"))

	// Growth per call between the middle and the last third (the first
	// third is the warm-up: caches and the result store fill).
	third := soakSamples / 3
	mean := func(ss []sample, f func(sample) float64) float64 {
		var sum float64
		for _, s := range ss {
			sum += f(s)
		}
		return sum / float64(len(ss))
	}
	mid, end := samples[third:2*third], samples[2*third:]
	heapOf := func(s sample) float64 { return float64(s.heap) }
	callsOf := func(s sample) float64 { return float64(s.calls) }
	growth := mean(end, heapOf) - mean(mid, heapOf)
	perCall := growth / (mean(end, callsOf) - mean(mid, callsOf))
	t.Logf("heap growth after warm-up: %+.1f KiB (%+.0f bytes a call); RSS %.1f → %.1f MiB",
		growth/1024, perCall, mib(samples[third].rss), mib(samples[len(samples)-1].rss))
	if growth > soakNoise && perCall > soakMaxPerCall {
		t.Errorf("the heap keeps growing after warm-up: %+.1f KiB from the middle to the last third of the run, %.0f bytes a call (at most %d)",
			growth/1024, perCall, soakMaxPerCall)
	}
	g0, g1 := samples[third].goroutines, samples[len(samples)-1].goroutines
	if g1 > g0+20 {
		t.Errorf("goroutines grew from %d to %d", g0, g1)
	}
}

func heapInUse() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// residentSet is the process's resident set size (0 where /proc is
// missing).
func residentSet() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
