package portal

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// gate counts the resource requests in flight before a fake portal, and
// holds the first ones until want of them are in flight at once (or, for a
// fetcher that never gets there, until a bounded wait runs out).
type gate struct {
	next http.Handler
	want int

	mu       sync.Mutex
	inFlight int
	most     int
	total    int
	open     chan struct{}
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.inFlight++
	g.total++
	g.most = max(g.most, g.inFlight)
	if g.inFlight >= g.want {
		select {
		case <-g.open:
		default:
			close(g.open)
		}
	}
	g.mu.Unlock()
	t := time.NewTimer(5 * time.Second)
	select {
	case <-g.open:
	case <-t.C:
	}
	t.Stop()
	g.next.ServeHTTP(w, r)
	g.mu.Lock()
	g.inFlight--
	g.mu.Unlock()
}

func (g *gate) counts() (inFlight, most, total int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inFlight, g.most, g.total
}

// parallelExecutor is streamExecutor's portal behind a gate that opens
// once want requests are in flight, read with 50-row pages, up to parallel
// at once with a shared pool of pool pages.
func parallelExecutor(t *testing.T, parallel, want int, pool int64) (*Executor, *gate) {
	t.Helper()
	fake := socratatest.NewServer(t)
	schema := socratatest.Schema{ID: "abcd-1234", Name: "Stream", Columns: []socratatest.Column{
		{Name: "N", FieldName: "n", DataType: "number"},
		{Name: "Label", FieldName: "label", DataType: "text"},
	}}
	if err := fake.AddGenerated(t.Context(), schema, streamRows, func(i int) map[string]any {
		return map[string]any{"n": i, "label": fmt.Sprintf("row %03d", i%10)}
	}); err != nil {
		t.Fatal(err)
	}
	g := &gate{next: fake.Handler(), want: want, open: make(chan struct{})}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	r, err := New(Options{Default: &Target{Client: socrata.NewClient(socrata.Options{BaseURL: srv.URL, MaxRetries: -1})}})
	if err != nil {
		t.Fatal(err)
	}
	e := NewExecutor(r, ExecutorOptions{})
	e.stream = streamOptions{pageRows: 50, ahead: streamAhead, parallel: parallel, extra: semaphore.NewWeighted(pool)}
	return e, g
}

// An export fetches its pages several at once (the gate lets no request
// through until three are in flight, so a fetcher that asks one at a time
// waits it out and is caught), never more than its bound, and hands the
// rows over in their order.
func TestStreamFetchesPagesAtOnce(t *testing.T) {
	t.Parallel()
	e, g := parallelExecutor(t, 3, 3, 8)
	got := streamNs(t, e, stored(t, "SELECT n, label"), dualresp.PageRequest{Limit: streamRows})
	if !slices.Equal(got, span(0, streamRows)) {
		t.Errorf("rows %v; want 0 .. %d in order", got, streamRows-1)
	}
	if _, most, total := g.counts(); most != 3 || total != 6 {
		t.Errorf("at most %d page requests at once, %d in all; want 3 at once (the bound), 6 in all", most, total)
	}
}

// A reader that stalls holds no upstream request and a bounded number of
// pages, its own pipeline (streamAhead+2), however many it fetched at once;
// the slots of the shared pool are given back once their requests are
// answered, for other exports to use.
func TestStreamStalledReaderBounded(t *testing.T) {
	t.Parallel()
	e, g := parallelExecutor(t, 3, 1, 2)
	stalled := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		first := true
		done <- resolved(t, e, stored(t, "SELECT n, label")).Stream(t.Context(), dualresp.PageRequest{}, func(json.RawMessage) error {
			if first {
				first = false
				close(stalled)
				<-release
			}
			return nil
		})
	}()
	<-stalled
	// Wait (a bounded number of times) for the fetcher to stop.
	var inFlight, total int
	for range 400 {
		inFlight, _, total = g.counts()
		if inFlight == 0 && total >= streamAhead+2 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	inFlight, _, total = g.counts()
	if inFlight != 0 || total != streamAhead+2 {
		t.Errorf("with the reader stalled: %d requests in flight, %d made; want none in flight, %d made (the pipeline)", inFlight, total, streamAhead+2)
	}
	// The pool comes back as the answers are read (a bounded wait).
	whole := false
	for range 400 {
		if whole = e.stream.extra.TryAcquire(2); whole {
			e.stream.extra.Release(2)
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !whole {
		t.Error("the shared pool was not whole while the export waited on its reader with no request open")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// The pages of one export at once stay below the portal's concurrency
// bound, leaving the tools a request; without a bound (the offline portal,
// whose requests cost this process's CPU) they are fetched one at a time.
func TestExecutorParallelWithinPortalBound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		bound, want int
	}{{0, 1}, {-1, 1}, {1, 1}, {2, 1}, {3, 2}, {4, 3}, {16, streamParallel}} {
		r, err := New(Options{Default: &Target{Client: socrata.NewClient(socrata.Options{BaseURL: "http://127.0.0.1:1"})},
			Limits: Limits{MaxConcurrent: tc.bound}})
		if err != nil {
			t.Fatal(err)
		}
		if got := NewExecutor(r, ExecutorOptions{}).stream.parallel; got != tc.want {
			t.Errorf("NewExecutor with MaxConcurrent %d: %d pages at once; want %d", tc.bound, got, tc.want)
		}
	}
}
