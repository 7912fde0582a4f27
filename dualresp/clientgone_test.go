package dualresp_test

import (
	"bufio"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// logRecorder is a slog.Handler that keeps every record.
type logRecorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecorder) WithGroup(string) slog.Handler            { return l }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r.Clone())
	return nil
}

func (l *logRecorder) all() []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]slog.Record(nil), l.records...)
}

// A client that goes away in the middle of an export (a browser closing a
// download) is logged at debug level, not as an error; a failing executor
// still is an error.
func TestExportClientGoneIsNotAnError(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{true, false} {
		name := "paged"
		if stream {
			name = "streamed"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			logs := &logRecorder{}
			done := make(chan struct{}, 1)
			var exec dualresp.Executor = &genExecutor{Total: 5_000_000}
			if stream {
				exec = &streamExecutor{genExecutor: &genExecutor{Total: 5_000_000}}
			}
			srv, _, ts := startServer(t, exec, dualresp.Options{Logger: slog.New(logs)}, func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					defer func() { done <- struct{}{} }()
					h.ServeHTTP(w, r)
				})
			})
			id := create(t, srv, dualresp.Spec{}).ID()
			ctx, cancel := context.WithCancel(t.Context())
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/resources/"+id+"/export?format=ndjson", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(resp.Body)
			for range 100 { // a little of the download, then close it
				if _, err := br.ReadString('\n'); err != nil {
					t.Fatal(err)
				}
			}
			cancel()
			resp.Body.Close()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the export did not end after the client went away")
			}
			var gone bool
			for _, r := range logs.all() {
				if r.Level >= slog.LevelWarn {
					t.Errorf("logged %s %q after the client went away; want no warning or error", r.Level, r.Message)
				}
				gone = gone || (r.Level == slog.LevelDebug && strings.Contains(r.Message, "client went away"))
			}
			if !gone {
				t.Errorf("no debug record says the client went away; records: %v", logs.all())
			}
		})
	}
}

// A page request whose client is gone before the executor answers is not
// an error either; an executor failure still is.
func TestPageClientGoneIsNotAnError(t *testing.T) {
	t.Parallel()
	exec := &genExecutor{Total: 10}
	logs := &logRecorder{}
	srv, _ := newServer(t, exec, dualresp.Options{Logger: slog.New(logs)})
	id := create(t, srv, dualresp.Spec{}).ID()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	srv.Handler().ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(ctx, http.MethodGet, "/resources/"+id+"?limit=5", nil))
	for _, r := range logs.all() {
		if r.Level >= slog.LevelWarn {
			t.Errorf("logged %s %q for a request whose client went away; want no warning or error", r.Level, r.Message)
		}
	}
	exec.PageErr = errBoom
	srv.Handler().ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/resources/"+id+"?limit=5", nil))
	var errs int
	for _, r := range logs.all() {
		if r.Level == slog.LevelError {
			errs++
		}
	}
	if errs != 1 {
		t.Errorf("%d error records after an executor failure; want 1", errs)
	}
}
