package dualresp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/google/go-cmp/cmp"
)

func TestNewValidatesBaseURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		base    string
		wantErr string
	}{
		{"", "BaseURL is required"},
		{"127.0.0.1:8765", "absolute http or https URL"},
		{"ftp://host", "absolute http or https URL"},
		{"http://", "absolute http or https URL"},
		{"http://host/?q=1", "query or fragment"},
		{"http://h\x7f", "BaseURL"},
		{"http://127.0.0.1:8765", ""},
		{"https://example.org/api/", ""},
	}
	for _, tt := range tests {
		srv, err := dualresp.New(dualresp.Options{BaseURL: tt.base, CleanupInterval: -1})
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("New(BaseURL %q) = %v; want nil", tt.base, err)
				continue
			}
			if got, want := srv.URL("abc"), strings.TrimRight(tt.base, "/")+"/resources/abc"; got != want {
				t.Errorf("URL(abc) = %q; want %q", got, want)
			}
			srv.Close()
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("New(BaseURL %q) = %v; want an error containing %q", tt.base, err, tt.wantErr)
		}
	}
}

func TestCreateResponseStoresQueryNotRows(t *testing.T) {
	t.Parallel()
	exec := &genExecutor{Total: 847}
	srv, clock := newServer(t, exec, dualresp.Options{})
	start := clock.Now()
	resp := create(t, srv, dualresp.Spec{
		Name:     "gen",
		Query:    dualresp.Query{Kind: "gen", Text: "SELECT *", Params: map[string]string{"dataset_id": "abcd-1234"}},
		Metadata: map[string]any{"dataset_id": "abcd-1234"},
		Owner:    "bob",
	})
	if ok, _ := regexp.MatchString(`^[0-9a-f]{32}$`, resp.ID()); !ok {
		t.Errorf("ID() = %q; want 32 hex digits", resp.ID())
	}
	rec, err := srv.Resource(t.Context(), resp.ID())
	if err != nil {
		t.Fatalf("Resource() = %v", err)
	}
	var wantSample []json.RawMessage
	for i := range int64(dualresp.DefaultSampleSize) {
		wantSample = append(wantSample, genRow(i))
	}
	want := &dualresp.Record{
		ID: resp.ID(), Name: "gen",
		Query:      dualresp.Query{Kind: "gen", Text: "SELECT *", Params: map[string]string{"dataset_id": "abcd-1234"}},
		Columns:    genColumns,
		TotalCount: 847, Sample: wantSample,
		Metadata:  map[string]any{"dataset_id": "abcd-1234"},
		Owner:     "bob",
		CreatedAt: start, LastAccess: start, ExpiresAt: start.Add(15 * time.Minute),
	}
	if diff := cmp.Diff(want, rec); diff != "" {
		t.Errorf("stored record mismatch (-want +got):\n%s", diff)
	}
	if got := exec.counts.Load(); got != 1 {
		t.Errorf("Count calls = %d; want 1", got)
	}
	if got := exec.pages.Load(); got != 1 {
		t.Errorf("Page calls = %d; want 1", got)
	}
}

func TestCreateResponseSpecOptions(t *testing.T) {
	t.Parallel()
	srv, clock := newServer(t, &genExecutor{Total: 100}, dualresp.Options{DefaultExpiration: time.Hour, DefaultSampleSize: 3})
	tests := []struct {
		name       string
		spec       dualresp.Spec
		wantSample int
		wantExp    time.Duration // 0: pinned
	}{
		{"defaults", dualresp.Spec{}, 3, time.Hour},
		{"sample size", dualresp.Spec{SampleSize: 7}, 7, time.Hour},
		{"no sample", dualresp.Spec{SampleSize: -1}, 0, time.Hour},
		{"expiration", dualresp.Spec{Expiration: time.Minute}, 3, time.Minute},
		{"never expires", dualresp.Spec{Expiration: -1}, 3, 0},
	}
	for _, tt := range tests {
		resp := create(t, srv, tt.spec)
		rec := resp.Record()
		if len(rec.Sample) != tt.wantSample {
			t.Errorf("%s: sample rows = %d; want %d", tt.name, len(rec.Sample), tt.wantSample)
		}
		if tt.wantExp == 0 {
			if !rec.Pinned || !rec.ExpiresAt.IsZero() {
				t.Errorf("%s: Pinned, ExpiresAt = %v, %v; want true, zero", tt.name, rec.Pinned, rec.ExpiresAt)
			}
		} else if want := clock.Now().Add(tt.wantExp); !rec.ExpiresAt.Equal(want) {
			t.Errorf("%s: ExpiresAt = %v; want %v", tt.name, rec.ExpiresAt, want)
		}
	}
}

func TestCreateResponseErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	closed := dualresp.NewMemoryStore(dualresp.MemoryStoreOptions{})
	closed.Close()
	tests := []struct {
		name  string
		exec  *genExecutor
		store dualresp.Store
		check func(error) bool
	}{
		{"count", &genExecutor{Total: 5, CountErr: boom}, nil, isErr[*dualresp.CountError]},
		{"sample", &genExecutor{Total: 5, PageErr: boom}, nil, isErr[*dualresp.QueryError]},
		{"storage", &genExecutor{Total: 5}, closed, isErr[*dualresp.StorageError]},
	}
	for _, tt := range tests {
		srv, _ := newServer(t, tt.exec, dualresp.Options{Store: tt.store})
		_, err := srv.CreateResponse(t.Context(), dualresp.Spec{Name: tt.name, Query: dualresp.Query{Kind: "gen"}})
		if !tt.check(err) {
			t.Errorf("%s: CreateResponse() = %v (%T); want the typed error", tt.name, err, err)
		}
		if tt.name != "storage" && !errors.Is(err, boom) {
			t.Errorf("%s: CreateResponse() = %v; want it to wrap the cause", tt.name, err)
		}
	}
	srv, _ := newServer(t, nil, dualresp.Options{})
	if _, err := srv.CreateResponse(t.Context(), dualresp.Spec{}); err == nil || !strings.Contains(err.Error(), "no Executor") {
		t.Errorf("CreateResponse without an Executor = %v; want an error naming the Executor", err)
	}
}

func TestExecutorsChosenByQueryKind(t *testing.T) {
	t.Parallel()
	big, small := &genExecutor{Total: 10}, &genExecutor{Total: 3}
	clock := newClock()
	outer := http.NewServeMux()
	ts := httptest.NewServer(outer)
	t.Cleanup(ts.Close)
	srv, err := dualresp.New(dualresp.Options{BaseURL: ts.URL, Now: clock.Now, CleanupInterval: -1,
		Executors: map[string]dualresp.Executor{"gen": big, "small": small}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	outer.Handle("/resources/", srv.Handler())

	resp := create(t, srv, dualresp.Spec{Query: dualresp.Query{Kind: "small", Text: "x"}})
	if got := resp.TotalCount(); got != 3 {
		t.Fatalf("TotalCount() = %d; want 3 (from the executor of kind small)", got)
	}
	c := newClient(t, dualresp.ClientOptions{BaseURL: ts.URL})
	rows, err := parse(t, c, resp).FetchAll(t.Context(), dualresp.FetchAllOptions{})
	if err != nil || len(rows) != 3 {
		t.Errorf("FetchAll() = %d rows, %v; want 3 rows from the executor of kind small", len(rows), err)
	}
	if big.counts.Load()+big.pages.Load() != 0 {
		t.Errorf("the executor of kind gen was called for a query of kind small")
	}

	_, err = srv.CreateResponse(t.Context(), dualresp.Spec{Query: dualresp.Query{Kind: "nope"}})
	if !isErr[*dualresp.QueryError](err) || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "gen, small") {
		t.Errorf("CreateResponse(kind nope) = %v; want a *QueryError naming the kind and the known kinds", err)
	}
}

func TestCreateResponseTakesColumnsFromTheSamplePage(t *testing.T) {
	t.Parallel()
	exec := &columnsExecutor{genExecutor: &genExecutor{Total: 100}}
	srv, _ := newServer(t, exec, dualresp.Options{})
	resp, err := srv.CreateResponse(t.Context(), dualresp.Spec{Query: dualresp.Query{Kind: "gen"}, SampleSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(genColumns, resp.Record().Columns); diff != "" {
		t.Errorf("stored columns (-want +got):\n%s", diff)
	}
	if n, p := exec.counts.Load(), exec.pages.Load(); n != 1 || p != 1 {
		t.Errorf("executor calls: %d counts, %d pages; want 1 and 1", n, p)
	}
	// Columns in the Spec win.
	mine := []dualresp.Column{{Name: "i"}}
	resp = create(t, srv, dualresp.Spec{Columns: mine})
	if diff := cmp.Diff(mine, resp.Record().Columns); diff != "" {
		t.Errorf("stored columns with Spec.Columns (-want +got):\n%s", diff)
	}
}

// columnsExecutor is a genExecutor whose pages report the columns.
type columnsExecutor struct{ *genExecutor }

func (e *columnsExecutor) Prepare(_ context.Context, q dualresp.Query) (dualresp.Plan, error) {
	return columnsPlan{e.plan(q)}, nil
}

type columnsPlan struct{ *genPlan }

func (p columnsPlan) Page(ctx context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	res, err := p.genPlan.Page(ctx, req)
	res.Columns = genColumns
	return res, err
}

func TestExpiryExtensionAndPinning(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv, clock := newServer(t, &genExecutor{Total: 20}, dualresp.Options{
		DefaultExpiration: 10 * time.Minute, AccessExtension: 30 * time.Minute,
	})
	a := create(t, srv, dualresp.Spec{Name: "a"})
	b := create(t, srv, dualresp.Spec{Name: "b"})
	c := create(t, srv, dualresp.Spec{Name: "c"})
	t0 := clock.Now()

	clock.Advance(5 * time.Minute)
	rec, err := srv.Access(ctx, a.ID())
	if err != nil {
		t.Fatalf("Access(a) = %v", err)
	}
	if want := t0.Add(35 * time.Minute); !rec.ExpiresAt.Equal(want) || rec.AccessCount != 1 || !rec.LastAccess.Equal(clock.Now()) {
		t.Errorf("Access(a): ExpiresAt, AccessCount, LastAccess = %v, %d, %v; want %v, 1, %v", rec.ExpiresAt, rec.AccessCount, rec.LastAccess, want, clock.Now())
	}
	if _, err := srv.Pin(ctx, b.ID()); err != nil {
		t.Fatalf("Pin(b) = %v", err)
	}
	// Resource does not count an access.
	if rec, _ := srv.Resource(ctx, c.ID()); rec.AccessCount != 0 {
		t.Errorf("Resource(c).AccessCount = %d; want 0", rec.AccessCount)
	}

	clock.Advance(6 * time.Minute) // t0+11m: c expired, a extended, b pinned
	if _, err := srv.Resource(ctx, c.ID()); !errors.Is(err, dualresp.ErrExpired) {
		t.Errorf("Resource(c) at t0+11m = %v; want ErrExpired", err)
	}
	if _, err := srv.Access(ctx, c.ID()); !errors.Is(err, dualresp.ErrExpired) {
		t.Errorf("Access(c) at t0+11m = %v; want ErrExpired (an access must not revive it)", err)
	}
	for _, id := range []string{a.ID(), b.ID()} {
		if _, err := srv.Resource(ctx, id); err != nil {
			t.Errorf("Resource(%s) at t0+11m = %v; want nil", id, err)
		}
	}
	if n, err := srv.Cleanup(ctx); n != 1 || err != nil {
		t.Errorf("Cleanup() at t0+11m = %d, %v; want 1, nil", n, err)
	}
	if _, err := srv.Resource(ctx, c.ID()); !errors.Is(err, dualresp.ErrNotFound) {
		t.Errorf("Resource(c) after Cleanup = %v; want ErrNotFound", err)
	}

	clock.Advance(24 * time.Hour)
	if _, err := srv.Resource(ctx, a.ID()); !errors.Is(err, dualresp.ErrExpired) {
		t.Errorf("Resource(a) a day later = %v; want ErrExpired", err)
	}
	if _, err := srv.Resource(ctx, b.ID()); err != nil {
		t.Errorf("Resource(pinned b) a day later = %v; want nil", err)
	}
	if n, _ := srv.Cleanup(ctx); n != 1 {
		t.Errorf("Cleanup() a day later = %d; want 1", n)
	}
	if err := srv.Delete(ctx, b.ID()); err != nil {
		t.Errorf("Delete(b) = %v", err)
	}
	if err := srv.Delete(ctx, b.ID()); !errors.Is(err, dualresp.ErrNotFound) {
		t.Errorf("second Delete(b) = %v; want ErrNotFound", err)
	}
}

func TestAccessExtensionDisabled(t *testing.T) {
	t.Parallel()
	srv, clock := newServer(t, &genExecutor{Total: 1}, dualresp.Options{AccessExtension: -1})
	r := create(t, srv, dualresp.Spec{})
	clock.Advance(14 * time.Minute)
	rec, err := srv.Access(t.Context(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	if !rec.ExpiresAt.Equal(r.ExpiresAt()) {
		t.Errorf("ExpiresAt after Access with extension disabled = %v; want %v", rec.ExpiresAt, r.ExpiresAt())
	}
}

func TestUnknownIDs(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, &genExecutor{}, dualresp.Options{})
	for _, id := range []string{"", "nope", "0123456789abcdef0123456789abcdef", "../../etc/passwd", "0123456789ABCDEF0123456789ABCDEF"} {
		if _, err := srv.Resource(t.Context(), id); !errors.Is(err, dualresp.ErrNotFound) {
			t.Errorf("Resource(%q) = %v; want ErrNotFound", id, err)
		}
	}
}

// TestCleanupLoop runs the real cleanup loop in a synctest bubble, where
// time is virtual.
func TestCleanupLoop(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv, err := dualresp.New(dualresp.Options{
			BaseURL: "http://example.test", Executors: map[string]dualresp.Executor{"gen": &genExecutor{Total: 2}},
			DefaultExpiration: time.Minute, CleanupInterval: 10 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.CreateResponse(t.Context(), dualresp.Spec{Query: dualresp.Query{Kind: "gen"}})
		if err != nil {
			t.Fatal(err)
		}
		store := srv.Store().(*dualresp.MemoryStore)
		time.Sleep(55 * time.Second) // virtual time
		synctest.Wait()
		if store.Len() != 1 {
			t.Errorf("records at 55s = %d; want 1", store.Len())
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if store.Len() != 0 {
			t.Errorf("records at 65s = %d; want 0 (removed by the cleanup loop)", store.Len())
		}
		if _, err := srv.Resource(t.Context(), resp.ID()); !errors.Is(err, dualresp.ErrNotFound) {
			t.Errorf("Resource after cleanup = %v; want ErrNotFound", err)
		}
		if err := srv.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
		if err := srv.Close(); err != nil {
			t.Errorf("second Close() = %v", err)
		}
		// Close stopped the loop: the bubble ends without a leaked goroutine.
	})
}

func TestMemoryStoreUnderServerConcurrency(t *testing.T) {
	t.Parallel()
	srv, _, ts := startServer(t, &genExecutor{Total: 50}, dualresp.Options{MaxResources: 1000}, nil)
	c := newClient(t, dualresp.ClientOptions{})
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for w := range 8 {
		wg.Go(func() {
			for i := range 10 {
				resp, err := srv.CreateResponse(t.Context(), dualresp.Spec{Name: fmt.Sprint(w, i), Query: dualresp.Query{Kind: "gen"}, Columns: genColumns})
				if err != nil {
					errs <- err
					return
				}
				p := c.Parse(resp.StructuredContent())
				if _, err := p.Fetch(t.Context(), dualresp.FetchOptions{Limit: 10}); err != nil {
					errs <- fmt.Errorf("Fetch: %w", err)
				}
				switch i % 3 {
				case 0:
					if _, err := p.Pin(t.Context()); err != nil {
						errs <- fmt.Errorf("Pin: %w", err)
					}
				case 1:
					if err := p.Delete(t.Context()); err != nil {
						errs <- fmt.Errorf("Delete: %w", err)
					}
				}
				if _, err := p.Metadata(t.Context()); i%3 == 1 && !errors.Is(err, dualresp.ErrNotFound) {
					errs <- fmt.Errorf("Metadata after Delete = %v; want ErrNotFound", err)
				} else if i%3 != 1 && err != nil {
					errs <- fmt.Errorf("Metadata: %w", err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	_ = ts
}
