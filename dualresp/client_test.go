package dualresp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/google/go-cmp/cmp"
)

func TestParseInputs(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, &genExecutor{Total: 40}, dualresp.Options{BaseURL: "http://127.0.0.1:8765"})
	resp := create(t, srv, dualresp.Spec{Name: "forty", SampleSize: 3})
	res := toolResult(resp)
	wire, _ := json.Marshal(res)
	sc, _ := json.Marshal(resp.StructuredContent())
	rpc := []byte(`{"jsonrpc":"2.0","id":1,"result":` + string(wire) + `}`)
	textOnly := map[string]any{"content": []any{map[string]any{"type": "text", "text": string(sc)}}}
	article := map[string]any{
		"results":  []any{map[string]any{"a": 1.0}},
		"resource": map[string]any{"url": "http://other.example/results/xyz"},
		"metadata": map[string]any{"total_count": 99.0, "columns": []any{"a"}},
	}
	c := newClient(t, dualresp.ClientOptions{})
	url := "http://127.0.0.1:8765/resources/" + resp.ID()
	tests := []struct {
		name    string
		in      any
		wantURL string
		want    int64 // TotalCount; -1: want nil
	}{
		{"tool result", res, url, 40},
		{"tool result JSON", wire, url, 40},
		{"tool result json.RawMessage", json.RawMessage(wire), url, 40},
		{"structured JSON", sc, url, 40},
		{"structured string", string(sc), url, 40},
		{"structured map", resp.StructuredContent(), url, 40},
		{"JSON-RPC response", rpc, url, 40},
		{"JSON in text content", textOnly, url, 40},
		{"article shape", article, "http://other.example/results/xyz", 99},
		{"nil", nil, "", -1},
		{"nil map", map[string]any(nil), "", -1},
		{"plain tool result", map[string]any{"content": []any{map[string]any{"type": "text", "text": "hello"}}}, "", -1},
		{"other map", map[string]any{"results": []any{}}, "", -1},
		{"resource without url or uri", map[string]any{"resource": map[string]any{"name": "x"}, "results": []any{}}, "", -1},
		{"resource without results or total", map[string]any{"resource": map[string]any{"url": "http://x/y"}}, "", -1},
		{"not JSON", []byte("{"), "", -1},
		{"JSON array", []byte("[1,2]"), "", -1},
		{"int", 42, "", -1},
	}
	for _, tt := range tests {
		p := c.Parse(tt.in)
		if tt.want < 0 {
			if p != nil {
				t.Errorf("Parse(%s) = %+v; want nil", tt.name, p)
			}
			continue
		}
		if p == nil {
			t.Errorf("Parse(%s) = nil; want a parsed response", tt.name)
			continue
		}
		if p.ResourceURL != tt.wantURL || p.TotalCount != tt.want {
			t.Errorf("Parse(%s): ResourceURL %q, TotalCount %d; want %q, %d", tt.name, p.ResourceURL, p.TotalCount, tt.wantURL, tt.want)
		}
	}

	p := c.Parse(res)
	// The model's payload names the columns (their types are in the REST
	// metadata) and leaves the name to the resource_link.
	var wantCols []dualresp.Column
	for _, col := range genColumns {
		wantCols = append(wantCols, dualresp.Column{Name: col.Name})
	}
	if diff := cmp.Diff(wantCols, p.Columns); diff != "" {
		t.Errorf("Columns mismatch (-want +got):\n%s", diff)
	}
	if len(p.Sample) != 3 || !cmp.Equal(jsonValue(t, p.Sample[2]), jsonValue(t, genRow(2))) {
		t.Errorf("Sample = %v; want rows 0..2", p.Sample)
	}
	if p.ResourceURI != "resource://"+resp.ID() || p.ID() != resp.ID() || p.Name != "forty" || !p.Truncated {
		t.Errorf("ResourceURI %q, ID %q, Name %q, Truncated %v", p.ResourceURI, p.ID(), p.Name, p.Truncated)
	}
	if n := c.Parse(sc).Name; n != "" {
		t.Errorf("Parse(structured content).Name = %q; want none (the name is said once, in the resource_link)", n)
	}
	// executed_at is left out of the model's payload: zero when unknown.
	if !p.ExpiresAt.Equal(resp.ExpiresAt()) || !p.ExecutedAt.IsZero() {
		t.Errorf("ExpiresAt %v, ExecutedAt %v; want %v and zero", p.ExpiresAt, p.ExecutedAt, resp.ExpiresAt())
	}
	if a := c.Parse(article); a.ID() != "xyz" || a.ResourceURI != "resource://xyz" || len(a.Columns) != 1 {
		t.Errorf("article shape: ID %q, URI %q, Columns %v", a.ID(), a.ResourceURI, a.Columns)
	}

	// A BaseURL replaces the host in the response.
	over := newClient(t, dualresp.ClientOptions{BaseURL: "https://proxy.example/data/"})
	if got, want := over.Parse(res).ResourceURL, "https://proxy.example/data/resources/"+resp.ID(); got != want {
		t.Errorf("ResourceURL with BaseURL = %q; want %q", got, want)
	}
	// Package-level Parse works without a client.
	if dualresp.Parse(sc) == nil || dualresp.ParseStructured(resp.StructuredContent()) == nil {
		t.Errorf("package-level Parse returned nil")
	}
}

func TestIsExpired(t *testing.T) {
	t.Parallel()
	clock := newClock()
	srv, _ := newServer(t, &genExecutor{Total: 2}, dualresp.Options{Now: clock.Now})
	c := newClient(t, dualresp.ClientOptions{Now: clock.Now})
	p := parse(t, c, create(t, srv, dualresp.Spec{}))
	if p.IsExpired() {
		t.Errorf("IsExpired() right after creation = true")
	}
	clock.Advance(15 * time.Minute)
	if !p.IsExpired() {
		t.Errorf("IsExpired() after 15 minutes = false")
	}
	pinned := parse(t, c, create(t, srv, dualresp.Spec{Expiration: -1}))
	clock.Advance(1000 * time.Hour)
	if pinned.IsExpired() {
		t.Errorf("IsExpired() of a pinned response = true")
	}
}

// TestRoundTrip100k creates a response over 100,000 generated rows and reads
// them back through the real handler with Rows.
func TestRoundTrip100k(t *testing.T) {
	t.Parallel()
	const total = 100_000
	srv, _, _ := startServer(t, &genExecutor{Total: total}, dualresp.Options{}, nil)
	resp := create(t, srv, dualresp.Spec{})
	c := newClient(t, dualresp.ClientOptions{PageSize: 7000})
	var i int64
	for row, err := range parse(t, c, resp).Rows(t.Context()) {
		if err != nil {
			t.Fatalf("Rows: error after %d rows: %v", i, err)
		}
		if !bytes.Equal(row, genRow(i)) {
			t.Fatalf("row %d = %s; want %s", i, row, genRow(i))
		}
		i++
	}
	if i != total {
		t.Errorf("Rows yielded %d rows; want %d", i, total)
	}
}

func TestFetchAllProgress(t *testing.T) {
	t.Parallel()
	const total = 12_345
	srv, _, _ := startServer(t, &genExecutor{Total: total}, dualresp.Options{}, nil)
	p := parse(t, newClient(t, dualresp.ClientOptions{}), create(t, srv, dualresp.Spec{}))
	var calls [][2]int64
	rows, err := p.FetchAll(t.Context(), dualresp.FetchAllOptions{PageSize: 1000, Progress: func(f, tot int64) {
		calls = append(calls, [2]int64{f, tot})
	}})
	if err != nil || len(rows) != total {
		t.Fatalf("FetchAll() = %d rows, %v; want %d", len(rows), err, total)
	}
	if len(calls) != 13 {
		t.Errorf("progress calls = %d; want 13 (one per page)", len(calls))
	}
	for k, c := range calls {
		if c[1] != total {
			t.Errorf("progress call %d total = %d; want %d", k, c[1], total)
		}
		if k > 0 && c[0] <= calls[k-1][0] {
			t.Errorf("progress not increasing: %v then %v", calls[k-1], c)
		}
	}
	if last := calls[len(calls)-1]; last != [2]int64{total, total} {
		t.Errorf("last progress = %v; want [%d %d]", last, total, total)
	}
	sorted, err := p.FetchAll(t.Context(), dualresp.FetchAllOptions{Sort: []dualresp.SortField{{Field: "i", Desc: true}}})
	if err != nil || !bytes.Equal(sorted[0], genRow(total-1)) || !bytes.Equal(sorted[total-1], genRow(0)) {
		t.Errorf("FetchAll sorted by i desc: %v; first %s", err, sorted[0])
	}
}

// flaky fails some requests: with status 503, by cutting the connection, or
// by stalling past the client timeout.
type flaky struct {
	next    http.Handler
	mu      sync.Mutex
	n       int
	every   int // fail every n-th page request
	mode    string
	release chan struct{}
	pages   atomic.Int64
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	isPage := r.URL.Query().Has("offset")
	if isPage {
		f.pages.Add(1)
		f.mu.Lock()
		f.n++
		fail := f.every > 0 && f.n%f.every == 0
		f.mu.Unlock()
		if fail {
			switch f.mode {
			case "503":
				http.Error(w, `{"error":"unavailable","message":"try again"}`, http.StatusServiceUnavailable)
				return
			case "drop":
				panic(http.ErrAbortHandler)
			case "stall":
				select {
				case <-r.Context().Done():
				case <-f.release:
				}
				return
			}
		}
	}
	f.next.ServeHTTP(w, r)
}

func TestRowsResumesAfterTransientFailures(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"503", "drop", "stall"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			const total = 5000
			f := &flaky{every: 3, mode: mode, release: make(chan struct{})}
			srv, _, _ := startServer(t, &genExecutor{Total: total}, dualresp.Options{}, func(h http.Handler) http.Handler { f.next = h; return f })
			defer close(f.release)
			// Only the stalls need the client's timeout to pass; for the
			// others it is long, so that a slow machine adds no attempt.
			timeout := 30 * time.Second
			if mode == "stall" {
				timeout = 200 * time.Millisecond
			}
			c := newClient(t, dualresp.ClientOptions{PageSize: 100, Timeout: timeout})
			var i int64
			for row, err := range parse(t, c, create(t, srv, dualresp.Spec{})).Rows(t.Context()) {
				if err != nil {
					t.Fatalf("Rows: error after %d rows: %v", i, err)
				}
				if !bytes.Equal(row, genRow(i)) {
					t.Fatalf("row %d = %s; want %s (a row was repeated or lost)", i, row, genRow(i))
				}
				i++
			}
			if i != total {
				t.Errorf("Rows yielded %d rows; want %d", i, total)
			}
			// 50 pages, one failed attempt after every two good ones. A
			// page that is slow on a loaded machine may also time out and
			// be asked again when the timeout is short (stall).
			got, most := f.pages.Load(), int64(75)
			if mode == "stall" {
				most = 100
			}
			if got < 74 || got > most {
				t.Errorf("page requests = %d; want 74 to %d", got, most)
			}
		})
	}
}

func TestRowsGivesUpAfterRetries(t *testing.T) {
	t.Parallel()
	f := &flaky{every: 1, mode: "503"}
	srv, _, _ := startServer(t, &genExecutor{Total: 10}, dualresp.Options{}, func(h http.Handler) http.Handler { f.next = h; return f })
	c := newClient(t, dualresp.ClientOptions{MaxRetries: 2})
	var errs []error
	for _, err := range parse(t, c, create(t, srv, dualresp.Spec{})).Rows(t.Context()) {
		errs = append(errs, err)
	}
	if len(errs) != 1 {
		t.Fatalf("Rows yielded %d values; want one error", len(errs))
	}
	var fe *dualresp.FetchError
	if !errors.As(errs[0], &fe) || fe.StatusCode != 503 {
		t.Errorf("error = %v; want a *FetchError with status 503", errs[0])
	}
	if got := f.pages.Load(); got != 3 {
		t.Errorf("page requests = %d; want 3 (one try and two retries)", got)
	}
}

func TestRowsStopsWhenCallerBreaks(t *testing.T) {
	t.Parallel()
	f := &flaky{}
	srv, _, _ := startServer(t, &genExecutor{Total: 1000}, dualresp.Options{}, func(h http.Handler) http.Handler { f.next = h; return f })
	p := parse(t, newClient(t, dualresp.ClientOptions{PageSize: 10}), create(t, srv, dualresp.Spec{}))
	n := 0
	for _, err := range p.Rows(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n == 25 {
			break
		}
	}
	if got := f.pages.Load(); got != 3 {
		t.Errorf("page requests after breaking at row 25 = %d; want 3", got)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	before := f.pages.Load()
	var gotErr error
	n = 0
	for _, err := range p.Rows(ctx) {
		if err != nil {
			gotErr = err
			break
		}
		n++
		if n == 10 {
			cancel()
		}
	}
	if !errors.Is(gotErr, context.Canceled) || n != 10 {
		t.Errorf("after cancel: %d rows, error %v; want 10 rows then context.Canceled", n, gotErr)
	}
	if got := f.pages.Load() - before; got != 1 {
		t.Errorf("page requests with a canceled context = %d; want 1", got)
	}
}

func TestClientErrors(t *testing.T) {
	t.Parallel()
	srv, clock, ts := startServer(t, &genExecutor{Total: 10}, dualresp.Options{}, nil)
	c := newClient(t, dualresp.ClientOptions{})
	ctx := t.Context()

	gone := parse(t, c, create(t, srv, dualresp.Spec{}))
	if err := gone.Delete(ctx); err != nil {
		t.Fatalf("Delete() = %v", err)
	}
	_, err := gone.Fetch(ctx, dualresp.FetchOptions{})
	var fe *dualresp.FetchError
	if !errors.Is(err, dualresp.ErrNotFound) || errors.Is(err, dualresp.ErrExpired) || !errors.As(err, &fe) || fe.StatusCode != 404 || fe.Code != "not_found" {
		t.Errorf("Fetch of a deleted resource = %v; want a 404 FetchError matching ErrNotFound", err)
	}

	old := parse(t, c, create(t, srv, dualresp.Spec{}))
	clock.Advance(time.Hour)
	if _, err := old.Metadata(ctx); !errors.Is(err, dualresp.ErrExpired) || errors.Is(err, dualresp.ErrNotFound) {
		t.Errorf("Metadata of an expired resource = %v; want ErrExpired", err)
	}

	live := parse(t, c, create(t, srv, dualresp.Spec{}))
	if _, err := live.Fetch(ctx, dualresp.FetchOptions{Sort: []dualresp.SortField{{Field: "bogus"}}}); !errors.As(err, &fe) || fe.StatusCode != 400 || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("Fetch sorted by an unknown field = %v; want a 400 FetchError naming it", err)
	}
	info, err := live.Pin(ctx)
	if err != nil || info.Status != "pinned" || info.ExpiresAt != nil {
		t.Errorf("Pin() = %+v, %v; want status pinned, no expiry", info, err)
	}
	// The rejected (bad sort) request did not count as an access; Metadata did.
	info, err = live.Metadata(ctx)
	if err != nil || info.TotalCount != 10 || info.AccessCount != 1 || len(info.Columns) != 4 {
		t.Errorf("Metadata() = %+v, %v; want total 10, access count 1, 4 columns", info, err)
	}

	var buf bytes.Buffer
	n, err := live.Export(ctx, "ndjson", &buf)
	if err != nil || n != int64(buf.Len()) || strings.Count(buf.String(), "\n") != 10 {
		t.Errorf("Export(ndjson) = %d, %v; %d lines; want 10 lines", n, err, strings.Count(buf.String(), "\n"))
	}

	// Timeout: a server that never answers.
	stall := make(chan struct{})
	defer close(stall)
	slow := &flaky{every: 1, mode: "stall", release: stall}
	srv2, _, _ := startServer(t, &genExecutor{Total: 10}, dualresp.Options{}, func(h http.Handler) http.Handler { slow.next = h; return slow })
	tc := newClient(t, dualresp.ClientOptions{Timeout: 50 * time.Millisecond, MaxRetries: -1})
	if _, err := parse(t, tc, create(t, srv2, dualresp.Spec{})).Fetch(ctx, dualresp.FetchOptions{}); !errors.Is(err, dualresp.ErrTimeout) {
		t.Errorf("Fetch from a stalled server = %v; want ErrTimeout", err)
	}

	// No URL to fetch from.
	noURL := c.Parse(map[string]any{"resource": map[string]any{"uri": "resource://abc"}, "results": []any{}})
	if _, err := noURL.Fetch(ctx, dualresp.FetchOptions{}); !isErr[*dualresp.ParseError](err) {
		t.Errorf("Fetch without a URL = %v; want a *ParseError", err)
	}
	withBase := newClient(t, dualresp.ClientOptions{BaseURL: ts.URL}).Parse(map[string]any{"resource": map[string]any{"uri": "resource://" + live.ID()}, "results": []any{}})
	if rows, err := withBase.FetchAll(ctx, dualresp.FetchAllOptions{}); err != nil || len(rows) != 10 {
		t.Errorf("FetchAll through BaseURL and a resource:// URI = %d rows, %v; want 10", len(rows), err)
	}

	// Connection refused, after retries.
	dead := newClient(t, dualresp.ClientOptions{MaxRetries: 1}).Parse(map[string]any{
		"resource": map[string]any{"url": "http://127.0.0.1:1/resources/" + live.ID()}, "results": []any{}})
	if _, err := dead.Fetch(ctx, dualresp.FetchOptions{}); !errors.As(err, &fe) || fe.StatusCode != 0 {
		t.Errorf("Fetch from a closed port = %v; want a *FetchError without status", err)
	}
	if _, err := dualresp.NewClient(dualresp.ClientOptions{BaseURL: "not a url"}); err == nil {
		t.Errorf("NewClient with a bad BaseURL = nil error")
	}
}

// TestClientBaseURLKeepsLinkKey: a Client with a BaseURL keeps the key of
// a keyed link (Options.LinkKey: /k/KEY/resources/ID) for pages, exports
// and metadata, whether the key comes with the response's link or with
// the BaseURL itself; the server here answers only at its keyed links.
// The failure this guards against: BaseURL + "/resources/" + id dropped
// the key, and every request got the 404 of an unknown id.
func TestClientBaseURLKeepsLinkKey(t *testing.T) {
	t.Parallel()
	linkKey := func(id string) string { return "key" + id[:6] }
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	// The links name a public address this test cannot reach; the
	// clients reach the server through their BaseURL.
	srv, _ := newServer(t, &genExecutor{Total: 25}, dualresp.Options{BaseURL: "http://public.invalid/api", LinkKey: linkKey})
	mux.Handle("/api/k/", http.StripPrefix("/api", srv.LinkHandler(srv.Handler())))
	resp := create(t, srv, dualresp.Spec{SampleSize: 3})
	id := resp.ID()
	if want := "http://public.invalid/api/k/" + linkKey(id) + "/resources/" + id; resp.URL() != want {
		t.Fatalf("the server's link = %s; want %s", resp.URL(), want)
	}
	keyed := ts.URL + "/api/k/" + linkKey(id) + "/resources/" + id
	uriOnly := map[string]any{"resource": map[string]any{"uri": "resource://" + id}, "results": []any{}}
	for _, tc := range []struct {
		name, base string
		response   any
	}{
		{"the key from the link", ts.URL + "/api", toolResult(resp)},
		{"the key from the link, a BaseURL ending in /", ts.URL + "/api/", toolResult(resp)},
		{"the key in the BaseURL, a resource:// URI", ts.URL + "/api/k/" + linkKey(id), uriOnly},
		{"the key in the BaseURL and the link", ts.URL + "/api/k/" + linkKey(id), toolResult(resp)},
	} {
		p := newClient(t, dualresp.ClientOptions{BaseURL: tc.base}).Parse(tc.response)
		if p == nil {
			t.Fatalf("%s: Parse = nil", tc.name)
		}
		if p.ResourceURL != keyed {
			t.Errorf("%s: ResourceURL = %s; want %s", tc.name, p.ResourceURL, keyed)
		}
		rows, err := p.FetchAll(t.Context(), dualresp.FetchAllOptions{PageSize: 10})
		if err != nil || len(rows) != 25 {
			t.Errorf("%s: FetchAll = %d rows, %v; want 25", tc.name, len(rows), err)
		}
		var buf bytes.Buffer
		if _, err := p.Export(t.Context(), "ndjson", &buf); err != nil || strings.Count(buf.String(), "\n") != 25 {
			t.Errorf("%s: Export(ndjson) = %d lines, %v; want 25", tc.name, strings.Count(buf.String(), "\n"), err)
		}
		if info, err := p.Metadata(t.Context()); err != nil || info.TotalCount != 25 {
			t.Errorf("%s: Metadata = %v, %v; want a total of 25", tc.name, info, err)
		}
	}
}
