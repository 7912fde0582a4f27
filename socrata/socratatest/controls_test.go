package socratatest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// smallServer returns a server with one small generated dataset.
func smallServer(t *testing.T) *Server {
	t.Helper()
	srv := NewServer(t)
	schema := Schema{ID: "abcd-1234", Name: "Small", Columns: []Column{
		{Name: "N", FieldName: "n", DataType: "number"},
		{Name: "Label", FieldName: "label", DataType: "text"},
	}}
	if err := srv.AddGenerated(t.Context(), schema, 200, func(i int) map[string]any {
		return map[string]any{"n": i, "label": fmt.Sprintf("row %03d", i)}
	}); err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestFailNext(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			t.Parallel()
			srv := smallServer(t)
			srv.FailNext(2, status, 1500*time.Millisecond)
			for i := 0; i < 2; i++ {
				r := serve(t, srv, "/resource/abcd-1234.json")
				if r.Code != status {
					t.Fatalf("request %d: status %d, want %d", i, r.Code, status)
				}
				ra := r.Header().Get("Retry-After")
				if status == http.StatusTooManyRequests && ra != "2" {
					t.Errorf("Retry-After = %q, want \"2\"", ra)
				}
				if status != http.StatusTooManyRequests && ra != "" {
					t.Errorf("Retry-After on %d: %q", status, ra)
				}
			}
			if r := serve(t, srv, "/resource/abcd-1234.json"); r.Code != http.StatusOK {
				t.Errorf("third request: status %d, want 200", r.Code)
			}
		})
	}
}

func TestLatency(t *testing.T) {
	t.Parallel()
	srv := smallServer(t)
	srv.SetLatency(time.Hour)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL()+"/resource/abcd-1234.json", nil)
	resp, err := srv.Client().Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("request returned before the latency elapsed")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v, want a deadline error", err)
	}
	srv.SetLatency(0)
	if r := serve(t, srv, "/resource/abcd-1234.json"); r.Code != http.StatusOK {
		t.Errorf("after SetLatency(0): status %d", r.Code)
	}
}

func TestCutBodyAfter(t *testing.T) {
	t.Parallel()
	srv := smallServer(t)
	srv.CutBodyAfter(100)
	resp, err := srv.Client().Get(srv.URL() + "/resource/abcd-1234.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil {
		t.Fatalf("read %d bytes without error; want a cut-off body", len(b))
	}
	if len(b) != 100 {
		t.Errorf("got %d bytes before the cut, want 100", len(b))
	}
	// Only the next response is cut.
	res, err := srv.SocrataClient(socrata.Options{}).Query(t.Context(), "abcd-1234", "SELECT n LIMIT 1000")
	if err != nil || len(res.Rows) != 200 {
		t.Errorf("after the cut: %v; want 200 rows", err)
	}
}

func TestRequireAppTokenAndRequestLog(t *testing.T) {
	t.Parallel()
	srv := smallServer(t)
	const token = "s3cret-token"
	srv.RequireAppToken(token)
	do := func(path, tok string) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL()+path, nil)
		if tok != "" {
			req.Header.Set("X-App-Token", tok)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := do("/resource/abcd-1234.json", ""); got != http.StatusForbidden {
		t.Errorf("without token: %d, want 403", got)
	}
	if got := do("/resource/abcd-1234.json", "wrong"); got != http.StatusForbidden {
		t.Errorf("wrong token: %d, want 403", got)
	}
	if got := do("/resource/abcd-1234.json", token); got != http.StatusOK {
		t.Errorf("with token: %d, want 200", got)
	}
	if got := do("/api/views/abcd-1234.json", token); got != http.StatusOK {
		t.Errorf("views with token: %d, want 200", got)
	}
	if got := do("/api/catalog/v1?q=small", token); got != http.StatusOK {
		t.Errorf("catalog with token: %d, want 200", got)
	}
	counts := map[string]int{}
	for _, e := range []string{"resource", "views", "catalog", "other", ""} {
		counts[e] = srv.RequestCount(e)
	}
	if diff := cmp.Diff(map[string]int{"resource": 3, "views": 1, "catalog": 1, "other": 0, "": 5}, counts); diff != "" {
		t.Errorf("RequestCount (-want +got):\n%s", diff)
	}
	for _, r := range srv.Requests() {
		if v := r.Header.Get("X-App-Token"); v != "" && v != "[redacted]" {
			t.Errorf("request log holds the app token: %q", v)
		}
	}
	last, ok := srv.LastRequest()
	if !ok || last.Endpoint != "catalog" || last.Query.Get("q") != "small" || !last.AppTokenSent {
		t.Errorf("LastRequest = %+v, %v", last, ok)
	}
	srv.Reset()
	if srv.RequestCount("") != 0 {
		t.Errorf("after Reset: %d requests logged", srv.RequestCount(""))
	}
	if got := do("/resource/abcd-1234.json", ""); got != http.StatusOK {
		t.Errorf("after Reset, without token: %d, want 200", got)
	}
}

func TestRequestLogIsBounded(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, WithMaxRequests(3))
	for i := range 5 {
		serve(t, srv, fmt.Sprintf("/api/views/abcd-%04d.json", i))
	}
	if got := srv.RequestCount(""); got != 5 {
		t.Errorf("RequestCount(\"\") = %d; want 5 (all requests, not only the logged ones)", got)
	}
	if got := srv.RequestCount("views"); got != 5 {
		t.Errorf("RequestCount(views) = %d; want 5", got)
	}
	var paths []string
	for _, r := range srv.Requests() {
		paths = append(paths, r.Path)
	}
	want := []string{"/api/views/abcd-0002.json", "/api/views/abcd-0003.json", "/api/views/abcd-0004.json"}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("Requests() paths (-want +got):\n%s", diff)
	}
	if last, ok := srv.LastRequest(); !ok || last.Path != want[2] {
		t.Errorf("LastRequest() = %q, %v; want %q", last.Path, ok, want[2])
	}
	srv.Reset()
	if n, reqs := srv.RequestCount(""), srv.Requests(); n != 0 || len(reqs) != 0 {
		t.Errorf("after Reset: RequestCount = %d, %d requests logged; want 0, 0", n, len(reqs))
	}
	serve(t, srv, "/api/views/abcd-0005.json")
	if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Path != "/api/views/abcd-0005.json" {
		t.Errorf("after Reset and one request: Requests() = %+v", reqs)
	}
}

func TestSocrataClient(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, WithDomain("data.example.org"))
	if err := srv.AddGenerated(t.Context(), Schema{ID: "abcd-0003", Name: "Street Trees", Columns: []Column{{FieldName: "species", DataType: "text"}}}, 2,
		func(i int) map[string]any { return map[string]any{"species": "oak"} }); err != nil {
		t.Fatal(err)
	}
	c := srv.SocrataClient(socrata.Options{AppToken: "tok"})
	ds, err := c.Search(t.Context(), "trees", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].ID != "abcd-0003" {
		t.Errorf("Search(trees) = %+v; want abcd-0003 (the fake's domain)", ds)
	}
	res, err := c.Query(t.Context(), "abcd-0003", "SELECT count(*) AS n")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Rows[0]["n"]; got != "2" {
		t.Errorf("count = %v; want 2", got)
	}
	if last, _ := srv.LastRequest(); !last.AppTokenSent {
		t.Errorf("the client's options were not kept: no app token sent")
	}
}

func TestNewOutsideTests(t *testing.T) {
	t.Parallel()
	srv, err := New(Options{Domain: "data.example.org"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := srv.AddGenerated(t.Context(), Schema{ID: "abcd-0002", Name: "Offline", Category: "Test",
		Columns: []Column{{FieldName: "x", DataType: "text"}}}, 3, func(i int) map[string]any {
		return map[string]any{"x": strconv.Itoa(i)}
	}); err != nil {
		t.Fatal(err)
	}
	// Serve through Handler without Start, as a caller mounting it would:
	// the controls apply.
	srv.FailNext(1, http.StatusServiceUnavailable, 0)
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/resource/abcd-0002.json", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("status %d; want 503 from FailNext", rec.Code)
	}
	if srv.URL() != "" {
		t.Errorf("URL() = %q before Start; want \"\"", srv.URL())
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	res, err := srv.SocrataClient(socrata.Options{}).Query(t.Context(), "abcd-0002", "SELECT x")
	if err != nil || len(res.Rows) != 3 {
		t.Errorf("after Start: %v; want 3 rows", err)
	}
	if err := srv.Start(); err == nil {
		t.Error("a second Start succeeded")
	}
}

// Close does not wait out a SetLatency delay.
func TestCloseDuringLatency(t *testing.T) {
	t.Parallel()
	srv, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	srv.SetLatency(time.Hour)
	errc := make(chan error, 1)
	go func() {
		resp, err := srv.Client().Get(srv.URL() + "/api/views/abcd-0001.json")
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	for srv.RequestCount("") == 0 {
		runtime.Gosched()
	}
	srv.Close() // returns: the delayed request ends without a response
	if err := <-errc; err == nil {
		t.Error("the delayed request got a response")
	}
}
