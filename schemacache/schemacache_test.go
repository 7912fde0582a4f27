package schemacache

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// countingFetcher counts upstream calls per dataset. When gate is not nil,
// each call waits for it to close before answering.
type countingFetcher struct {
	calls   atomic.Int64
	mu      sync.Mutex
	perID   map[string]int
	gate    chan struct{}
	started chan struct{} // receives once per call, when not nil
	fail    map[string]error
}

func (f *countingFetcher) Schema(ctx context.Context, id string) (*socrata.Schema, error) {
	n := f.calls.Add(1)
	f.mu.Lock()
	if f.perID == nil {
		f.perID = map[string]int{}
	}
	f.perID[id]++
	err := f.fail[id]
	f.mu.Unlock()
	if f.started != nil {
		f.started <- struct{}{}
	}
	if f.gate != nil {
		<-f.gate
	}
	if err != nil {
		return nil, err
	}
	return &socrata.Schema{ID: id, Name: fmt.Sprintf("%s v%d", id, n), RowCount: 487,
		Columns: []socrata.Column{{Name: "Applicant", FieldName: "applicant", DataType: "text"}}}, nil
}

func (f *countingFetcher) count(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.perID[id]
}

func TestConcurrentMissesCollapse(t *testing.T) {
	t.Parallel()
	f := &countingFetcher{gate: make(chan struct{}), started: make(chan struct{}, 100)}
	c := New(f, Options{})
	const n = 50
	var wg sync.WaitGroup
	var ready sync.WaitGroup
	results := make([]*socrata.Schema, n)
	cachedFlags := make([]bool, n)
	errs := make([]error, n)
	ready.Add(n)
	for i := range n {
		wg.Go(func() {
			ready.Done()
			results[i], cachedFlags[i], errs[i] = c.Schema(t.Context(), "rqzj-sfat")
		})
	}
	ready.Wait()
	<-f.started // the one upstream call has begun; hold it until all 50 have asked
	deadline := time.Now().Add(10 * time.Second)
	for c.Stats().Misses < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // poll: waiting for the goroutines to reach the cache
	}
	close(f.gate)
	wg.Wait()
	if got := f.calls.Load(); got != 1 {
		t.Errorf("upstream calls = %d; want 1", got)
	}
	for i := range n {
		if errs[i] != nil || results[i] == nil || results[i].Name != "rqzj-sfat v1" {
			t.Fatalf("caller %d: %v, %v", i, results[i], errs[i])
		}
		if cachedFlags[i] {
			t.Errorf("caller %d: cached = true for a miss", i)
		}
	}
	st := c.Stats()
	if diff := cmp.Diff(Stats{Hits: 0, Misses: n, Fetches: 1, Entries: 1}, st); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
	t.Logf("%d concurrent misses -> %d upstream call(s); stats %+v", n, f.calls.Load(), st)
}

func TestHitWithinTTL(t *testing.T) {
	t.Parallel()
	f := &countingFetcher{}
	c := New(f, Options{}) // default TTL: 5 minutes
	s1, cached1, err := c.Schema(t.Context(), "rqzj-sfat")
	if err != nil || cached1 {
		t.Fatalf("first Schema = %v, cached %v; want a miss", err, cached1)
	}
	s2, cached2, err := c.Schema(t.Context(), "rqzj-sfat")
	if err != nil || !cached2 {
		t.Fatalf("second Schema = %v, cached %v; want a hit", err, cached2)
	}
	if f.calls.Load() != 1 {
		t.Errorf("upstream calls = %d; want 1", f.calls.Load())
	}
	if diff := cmp.Diff(s1, s2); diff != "" {
		t.Errorf("cached schema differs (-first +second):\n%s", diff)
	}
	// The caller's copy is its own.
	s2.Columns[0].FieldName = "changed"
	s3, _, _ := c.Schema(t.Context(), "rqzj-sfat")
	if s3.Columns[0].FieldName != "applicant" {
		t.Errorf("changing a returned schema changed the cache: %q", s3.Columns[0].FieldName)
	}
	// Another dataset is its own entry.
	if _, cached, _ := c.Schema(t.Context(), "wg3w-h783"); cached {
		t.Error("another dataset came from the cache")
	}
	if diff := cmp.Diff(Stats{Hits: 2, Misses: 2, Fetches: 2, Entries: 2}, c.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

// A schema is fetched again once its TTL has passed (testing/synctest's
// clock: the cache reads time.Now and has no goroutine of its own).
func TestExpiry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := &countingFetcher{}
		c := New(f, Options{TTL: time.Minute})
		if _, cached, err := c.Schema(t.Context(), "rqzj-sfat"); err != nil || cached {
			t.Fatalf("first Schema: cached %v, %v", cached, err)
		}
		time.Sleep(59 * time.Second)
		if _, cached, err := c.Schema(t.Context(), "rqzj-sfat"); err != nil || !cached {
			t.Fatalf("Schema 59s later: cached %v, %v; want from the cache", cached, err)
		}
		time.Sleep(time.Second)
		s, cached, err := c.Schema(t.Context(), "rqzj-sfat")
		if err != nil || cached || s.Name != "rqzj-sfat v2" {
			t.Fatalf("Schema 60s later = %q, cached %v, %v; want the refetched v2", s.Name, cached, err)
		}
		if got := f.count("rqzj-sfat"); got != 2 {
			t.Errorf("upstream calls = %d; want 2 (one before, one after expiry)", got)
		}
	})
}

// A Cache keeps no goroutine: package portal makes one per portal it is
// asked about and drops it when the portal is evicted, so a goroutine per
// cache would grow with every portal a client names.
func TestNoGoroutinePerCache(t *testing.T) {
	before := runtime.NumGoroutine()
	caches := make([]*Cache, 500)
	for i := range caches {
		caches[i] = New(&countingFetcher{}, Options{})
	}
	if after := runtime.NumGoroutine(); after > before+10 {
		t.Errorf("goroutines after making 500 caches: %d, before %d; want none per cache", after, before)
	}
}

func TestErrorsAreNotCached(t *testing.T) {
	t.Parallel()
	boom := &socrata.APIError{StatusCode: 404, Code: "dataset.missing", Message: "Not found"}
	f := &countingFetcher{fail: map[string]error{"zzzz-zzzz": boom}}
	c := New(f, Options{})
	for i := range 3 {
		s, cached, err := c.Schema(t.Context(), "zzzz-zzzz")
		if !errors.Is(err, socrata.ErrNotFound) || s != nil || cached {
			t.Fatalf("call %d = %v, %v, %v; want ErrNotFound", i, s, cached, err)
		}
	}
	if got := f.calls.Load(); got != 3 {
		t.Errorf("upstream calls = %d; want 3 (errors are not cached)", got)
	}
	if st := c.Stats(); st.Entries != 0 || st.Hits != 0 {
		t.Errorf("Stats = %+v; want no entries and no hits", st)
	}
}

func TestInvalidate(t *testing.T) {
	t.Parallel()
	f := &countingFetcher{}
	c := New(f, Options{})
	c.Schema(t.Context(), "rqzj-sfat")
	c.Invalidate("rqzj-sfat")
	s, cached, err := c.Schema(t.Context(), "rqzj-sfat")
	if err != nil || cached || s.Name != "rqzj-sfat v2" {
		t.Errorf("after Invalidate: %v, cached %v, %v; want a fresh fetch", s, cached, err)
	}
}

// TestInvalidateDuringFetch: a fetch under way when Invalidate is called does
// not store its (possibly stale) answer.
func TestInvalidateDuringFetch(t *testing.T) {
	t.Parallel()
	f := &countingFetcher{gate: make(chan struct{}), started: make(chan struct{}, 10)}
	c := New(f, Options{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Schema(t.Context(), "rqzj-sfat")
	}()
	<-f.started
	c.Invalidate("rqzj-sfat")
	close(f.gate)
	<-done
	if st := c.Stats(); st.Entries != 0 {
		t.Errorf("entries = %d; want 0: the stale answer was stored", st.Entries)
	}
}

func TestSizeBound(t *testing.T) {
	t.Parallel()
	f := &countingFetcher{}
	c := New(f, Options{Size: 3})
	for i := range 5 {
		c.Schema(t.Context(), fmt.Sprintf("id%02d-test", i))
	}
	if st := c.Stats(); st.Entries != 3 {
		t.Errorf("entries = %d; want 3", st.Entries)
	}
	// The oldest were dropped: id00 misses again, id04 hits.
	if _, cached, _ := c.Schema(t.Context(), "id04-test"); !cached {
		t.Error("the newest entry was not cached")
	}
	if _, cached, _ := c.Schema(t.Context(), "id00-test"); cached {
		t.Error("the oldest entry was not evicted")
	}
}

// TestCallerGivesUp: a caller whose context ends stops waiting; the shared
// upstream call continues and fills the cache for the next caller.
func TestCallerGivesUp(t *testing.T) {
	t.Parallel()
	f := &countingFetcher{gate: make(chan struct{}), started: make(chan struct{}, 10)}
	c := New(f, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, _, err := c.Schema(ctx, "rqzj-sfat")
		errc <- err
	}()
	<-f.started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v; want context.Canceled", err)
	}
	close(f.gate)
	// The shared call still stores its answer.
	deadline := time.Now().Add(10 * time.Second)
	for c.Stats().Entries == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if _, cached, err := c.Schema(t.Context(), "rqzj-sfat"); err != nil || !cached {
		t.Errorf("next call: cached %v, %v; want a hit", cached, err)
	}
	if f.calls.Load() != 1 {
		t.Errorf("upstream calls = %d; want 1", f.calls.Load())
	}
}

type nilFetcher struct{}

func (nilFetcher) Schema(context.Context, string) (*socrata.Schema, error) { return nil, nil }

func TestNilSchemaIsAnError(t *testing.T) {
	t.Parallel()
	c := New(nilFetcher{}, Options{})
	if s, _, err := c.Schema(t.Context(), "rqzj-sfat"); err == nil || s != nil {
		t.Errorf("Schema = %v, %v; want an error", s, err)
	}
}

// *socrata.Client is a Fetcher.
var _ Fetcher = (*socrata.Client)(nil)
