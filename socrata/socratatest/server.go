// Package socratatest provides a fake Socrata server for tests, in the mould
// of net/http/httptest.
//
// The fake is a local portal (package
// [github.com/datasf-mcp/datasf-mcp/localportal], which executes SoQL on
// SQLite and serves the Discovery, Views and Resource APIs on real data)
// served by an httptest server through a handler that adds what only tests
// need:
//
//   - fault controls that make the server misbehave on purpose:
//     [Server.FailNext], [Server.SetLatency], [Server.CutBodyAfter],
//     [Server.RequireAppToken];
//   - a request log: [Server.RequestCount], [Server.Requests],
//     [Server.LastRequest]. The log keeps the newest Options.MaxRequests
//     requests; RequestCount counts all of them.
//
// The loaders ([Server.LoadFiles], [Server.LoadCatalog],
// [Server.AddGenerated], ...) are those of the portal, which
// [Server.Portal] returns.
//
// In a test:
//
//	srv := socratatest.NewServer(t)
//	if _, err := srv.LoadFiles(t.Context(), []string{dir}, localportal.LoadOptions{}); err != nil { t.Fatal(err) }
//	client := srv.SocrataClient(socrata.Options{})
//
// A fake shared by many tests (from TestMain, say) is made with [Start] and
// released with [Server.Close]; [New] makes one that is not yet listening.
// Code that is not a test (the product's --offline mode,
// the benchmarks) uses localportal directly: this package imports testing.
package socratatest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/localportal"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Schema describes one dataset of the fake; see [localportal.Schema].
type Schema = localportal.Schema

// Column is one dataset column, the client's own type.
type Column = socrata.Column

// DefaultMaxRequests is the number of requests the request log keeps when
// Options.MaxRequests is 0.
const DefaultMaxRequests = 10_000

// Options configures a Server. The zero value is valid.
type Options struct {
	// Portal configures the portal behind the server: Domain (reported in
	// Discovery results and permalinks), Addr (where Start listens), Logger
	// (request and load logs) and Now, with the portal's defaults.
	Portal localportal.Options
	// MaxRequests is how many of the newest requests the request log keeps
	// (default DefaultMaxRequests; negative keeps none). RequestCount counts
	// every request whatever the limit.
	MaxRequests int
}

// Option changes Options; it is how NewServer is configured.
type Option func(*Options)

// WithDomain sets Options.Portal.Domain.
func WithDomain(domain string) Option { return func(o *Options) { o.Portal.Domain = domain } }

// WithLogger sets Options.Portal.Logger.
func WithLogger(l *slog.Logger) Option { return func(o *Options) { o.Portal.Logger = l } }

// WithClock sets Options.Portal.Now.
func WithClock(now func() time.Time) Option { return func(o *Options) { o.Portal.Now = now } }

// WithMaxRequests sets Options.MaxRequests.
func WithMaxRequests(n int) Option { return func(o *Options) { o.MaxRequests = n } }

// Server is a fake Socrata server. All methods are safe for concurrent use.
type Server struct {
	portal *localportal.Portal
	ctl    controls
	done   chan struct{} // closed by Close: ends latency waits

	mu     sync.Mutex
	ts     *httptest.Server
	closed bool
}

// New returns a server that is not yet listening. Call Start to listen on
// Options.Portal.Addr, or serve Handler yourself; Close releases it.
func New(opts Options) (*Server, error) {
	p, err := localportal.New(opts.Portal)
	if err != nil {
		return nil, fmt.Errorf("socratatest: %w", err)
	}
	s := &Server{portal: p, done: make(chan struct{})}
	switch {
	case opts.MaxRequests == 0:
		s.ctl.reset(DefaultMaxRequests)
	case opts.MaxRequests < 0:
		s.ctl.reset(0)
	default:
		s.ctl.reset(opts.MaxRequests)
	}
	return s, nil
}

// Start returns a server listening on Options.Portal.Addr, for a fake shared by
// many tests (from TestMain, say); Close releases it. In one test, use
// NewServer.
func Start(opts Options) (*Server, error) {
	s, err := New(opts)
	if err != nil {
		return nil, err
	}
	if err := s.Start(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// NewServer starts a server on 127.0.0.1 and closes it when tb finishes.
func NewServer(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	var o Options
	for _, f := range opts {
		f(&o)
	}
	s, err := New(o)
	if err != nil {
		tb.Fatalf("socratatest.New: %v", err)
	}
	if err := s.Start(); err != nil {
		s.Close()
		tb.Fatalf("socratatest: Start: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Start listens on Options.Portal.Addr and serves Handler in the
// background.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("socratatest: Start after Close")
	}
	if s.ts != nil {
		return errors.New("socratatest: already started")
	}
	opts := s.portal.Options()
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("socratatest: listen on %s: %w", opts.Addr, err)
	}
	s.ts = &httptest.Server{Listener: ln, Config: &http.Server{Handler: s.Handler(),
		ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(opts.Logger.Handler(), slog.LevelDebug)}}
	s.ts.Start()
	return nil
}

// URL returns the base URL ("http://127.0.0.1:port") once started, else "".
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ts == nil {
		return ""
	}
	return s.ts.URL
}

// Client returns an HTTP client for the server (http.DefaultClient before
// Start). Its idle connections are closed by Close.
func (s *Server) Client() *http.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ts == nil {
		return http.DefaultClient
	}
	return s.ts.Client()
}

// SocrataClient returns a socrata client for the server: opts with BaseURL,
// DiscoveryURL and HTTPClient set to the server's, and Domain, when empty,
// to the server's domain. Call it after Start.
func (s *Server) SocrataClient(opts socrata.Options) *socrata.Client {
	opts.BaseURL = s.URL()
	opts.DiscoveryURL = opts.BaseURL
	opts.HTTPClient = s.Client()
	if opts.Domain == "" {
		opts.Domain = s.portal.Options().Domain
	}
	return socrata.NewClient(opts)
}

// Close stops the server (if started) and releases the portal. Requests
// waiting out a SetLatency delay end without a response. It is safe to call
// more than once.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	ts := s.ts
	s.mu.Unlock()
	if ts != nil {
		ts.Close()
	}
	s.portal.Close()
}

// Portal returns the local portal that holds the server's data.
func (s *Server) Portal() *localportal.Portal { return s.portal }

// Handler returns the HTTP handler serving the fake APIs: the portal's,
// behind the fault controls and the request log.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(s.serveHTTP)
}

// LoadCatalog is [localportal.Portal.LoadCatalog].
func (s *Server) LoadCatalog(ctx context.Context, jsonlPath string) error {
	return s.portal.LoadCatalog(ctx, jsonlPath)
}

// LoadFiles is [localportal.Portal.LoadFiles]: the portal's exports as
// downloaded (CSV, JSON, GeoJSON, rows.json), files, directories or
// "ID=FILE", with a report per file.
func (s *Server) LoadFiles(ctx context.Context, specs []string, opts localportal.LoadOptions) ([]localportal.FileReport, error) {
	return s.portal.LoadFiles(ctx, specs, opts)
}

// AddGenerated is [localportal.Portal.AddGenerated].
func (s *Server) AddGenerated(ctx context.Context, schema Schema, n int, gen func(i int) map[string]any) error {
	return s.portal.AddGenerated(ctx, schema, n, gen)
}

// Datasets returns the ids of the datasets with loaded data, sorted.
func (s *Server) Datasets() []string { return s.portal.Datasets() }

// Schema returns the schema of a loaded dataset or catalog entry.
func (s *Server) Schema(id string) (Schema, bool) { return s.portal.Schema(id) }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	d := s.ctl.record(r, localportal.Endpoint(r.URL.Path))
	if d.latency > 0 {
		t := time.NewTimer(d.latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		case <-s.done:
			t.Stop()
			panic(http.ErrAbortHandler) // no response: the connection closes
		}
	}
	rw := &responseBuffer{header: http.Header{}, status: http.StatusOK}
	switch {
	case d.fail != nil:
		writeFailure(rw, *d.fail)
	case d.tokenMissing:
		localportal.WriteJSON(rw, http.StatusForbidden, map[string]any{"error": true,
			"message": "You must be logged in to access this resource"})
	default:
		s.portal.Handler().ServeHTTP(rw, r)
	}
	rw.flushTo(w, d.cutAfter)
}

// responseBuffer collects a whole response so that it can be cut short.
type responseBuffer struct {
	header http.Header
	status int
	body   []byte
}

func (b *responseBuffer) Header() http.Header    { return b.header }
func (b *responseBuffer) WriteHeader(status int) { b.status = status }
func (b *responseBuffer) Write(p []byte) (int, error) {
	b.body = append(b.body, p...)
	return len(p), nil
}

// flushTo writes the buffered response; with cut >= 0 it sends only cut
// bytes of the body and then aborts the connection.
func (b *responseBuffer) flushTo(w http.ResponseWriter, cut int) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	if cut < 0 || cut >= len(b.body) {
		w.WriteHeader(b.status)
		w.Write(b.body) //nolint:errcheck // the client went away
		return
	}
	w.WriteHeader(b.status)
	w.Write(b.body[:cut]) //nolint:errcheck // the client went away
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	panic(http.ErrAbortHandler) // closes the connection mid-body, without a log line
}
