package socrata

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"
)

// sleeps records the waits between retries instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// logBuffer is a concurrency-safe buffer for a debug-level JSON logger.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testNow is the fixed clock of test clients.
var testNow = time.Date(2025, 8, 18, 16, 16, 51, 0, time.UTC)

// newTestClient starts an httptest server with h and returns a client for it
// (Discovery, Views and Resource APIs all on that server) whose retry waits
// are recorded, not slept, whose jitter is zero and whose clock is testNow.
func newTestClient(t *testing.T, h http.Handler, opts Options) (*Client, *sleeps, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	opts.BaseURL = srv.URL
	opts.DiscoveryURL = srv.URL
	if opts.HTTPClient == nil {
		opts.HTTPClient = srv.Client()
	}
	c := NewClient(opts)
	s := &sleeps{}
	c.sleep = s.sleep
	c.jitter = func(time.Duration) time.Duration { return 0 }
	c.now = func() time.Time { return testNow }
	return c, s, srv
}

// readJSON decodes a fixture file.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serveJSON answers every request with status and body as JSON.
func serveJSON(status int, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		w.Write(body)
	}
}
