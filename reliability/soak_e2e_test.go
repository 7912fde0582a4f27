//go:build e2e

package reliability

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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
	const workers = 4
	l := newToolLoad(t, 256, workers) // 256 results: reached early, the run then measures eviction, not filling
	calls := *soakCalls
	var next atomic.Int64

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
		if failed := l.run(t, &next, until); failed > 0 {
			t.Fatalf("%d calls failed", failed)
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
