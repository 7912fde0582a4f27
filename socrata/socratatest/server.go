// Package socratatest provides a fake Socrata server, in the mould of
// net/http/httptest, that behaves like Socrata on real data.
//
// It serves the three APIs the socrata client uses:
//
//   - GET /api/catalog/v1: Discovery search and browse over the loaded
//     datasets and catalog entries, in the real response shape;
//   - GET /api/views/{id}.json: the Views document (name, description,
//     category, rowsUpdatedAt, columns);
//   - GET /resource/{id}.json: SoQL executed for real. Queries ($query, or the
//     separate $select/$where/$order/$group/$having/$limit/$offset/$q
//     parameters) are parsed with package soql, translated to SQL and run on
//     an in-memory SQLite database (modernc.org/sqlite, pure Go). Rows come
//     back encoded as Socrata encodes them, with X-SODA2-Fields and
//     X-SODA2-Types headers, and errors come in Socrata's envelopes.
//
// Datasets are loaded from files in the formats Socrata exports (Resource API
// JSON, legacy rows.json with its Views document, CSV) or generated
// programmatically with [Server.AddGenerated], which streams rows into SQLite
// without holding them in memory.
//
// Test controls make the server misbehave on purpose: [Server.FailNext],
// [Server.SetLatency], [Server.CutBodyAfter], [Server.RequireAppToken]; and
// [Server.RequestCount] / [Server.Requests] tell what clients asked.
//
// In tests:
//
//	srv := socratatest.NewServer(t)
//	if err := srv.LoadFixturesDir(dir); err != nil { t.Fatal(err) }
//	client := socrata.NewClient(socrata.Options{BaseURL: srv.URL(), DiscoveryURL: srv.URL(), HTTPClient: srv.Client()})
//
// Outside tests (the product's offline mode) use [New], then [Server.Start]
// or mount [Server.Handler] yourself, and [Server.Close] when done.
package socratatest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Options configures a Server. The zero value is valid.
type Options struct {
	// Domain is the portal domain reported in Discovery results and
	// permalinks. Default "data.sfgov.org".
	Domain string
	// Addr is the listen address used by Start. Default "127.0.0.1:0".
	Addr string
	// Logger receives request and load logs. Default: discard.
	Logger *slog.Logger
	// Now is the clock for load times. Default time.Now.
	Now func() time.Time
}

// Option changes Options; it is how NewServer is configured.
type Option func(*Options)

// WithDomain sets Options.Domain.
func WithDomain(domain string) Option { return func(o *Options) { o.Domain = domain } }

// WithLogger sets Options.Logger.
func WithLogger(l *slog.Logger) Option { return func(o *Options) { o.Logger = l } }

// WithClock sets Options.Now.
func WithClock(now func() time.Time) Option { return func(o *Options) { o.Now = now } }

// Server is a fake Socrata server. All methods are safe for concurrent use.
type Server struct {
	opts Options
	log  *slog.Logger

	db   *sql.DB
	keep *sql.Conn // keeps the in-memory database alive

	mu       sync.RWMutex
	datasets map[string]*dataset      // loaded data, by id
	catalog  map[string]*catalogEntry // catalog metadata, by id
	order    []string                 // ids in the order first seen
	lazyMu   sync.Mutex               // serialises creating empty tables for catalog entries
	// ddlMu keeps statements from spanning a schema change: SQLite fails a
	// running statement with "database schema has changed" when another
	// connection creates or drops a table. Queries and inserts hold it for
	// reading, CREATE and DROP TABLE for writing.
	ddlMu sync.RWMutex

	ctl controls

	srvMu    sync.Mutex
	listener net.Listener
	httpSrv  *http.Server
	url      string
	client   *http.Client
	closed   bool
}

// New returns a server that is not yet listening. Call Start to listen on
// Options.Addr, or serve Handler yourself; Close releases the database.
func New(opts Options) (*Server, error) {
	if opts.Domain == "" {
		opts.Domain = "data.sfgov.org"
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	db, keep, err := openDB()
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:     opts,
		log:      opts.Logger,
		db:       db,
		keep:     keep,
		datasets: map[string]*dataset{},
		catalog:  map[string]*catalogEntry{},
	}
	s.ctl.counts = map[string]int{}
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

// Start listens on Options.Addr and serves Handler in the background.
func (s *Server) Start() error {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	if s.closed {
		return errors.New("socratatest: Start after Close")
	}
	if s.listener != nil {
		return errors.New("socratatest: already started")
	}
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("socratatest: listen on %s: %w", s.opts.Addr, err)
	}
	s.listener = ln
	s.httpSrv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	s.url = "http://" + ln.Addr().String()
	s.client = &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
	}}
	go func() {
		if err := s.httpSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("socratatest: serve", "err", err)
		}
	}()
	return nil
}

// URL returns the base URL ("http://127.0.0.1:port") once started, else "".
func (s *Server) URL() string {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	return s.url
}

// Client returns an HTTP client for the server (http.DefaultClient before
// Start). Its idle connections are closed by Close.
func (s *Server) Client() *http.Client {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	if s.client == nil {
		return http.DefaultClient
	}
	return s.client
}

// Close stops the listener (if started) and releases the database. It is
// safe to call more than once.
func (s *Server) Close() {
	s.srvMu.Lock()
	if s.closed {
		s.srvMu.Unlock()
		return
	}
	s.closed = true
	srv, client := s.httpSrv, s.client
	s.srvMu.Unlock()
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close() //nolint:errcheck // best effort after a failed graceful shutdown
		}
		cancel()
	}
	if client != nil {
		client.CloseIdleConnections()
	}
	s.keep.Close() //nolint:errcheck // closing an in-memory database
	s.db.Close()   //nolint:errcheck // closing an in-memory database
}

// Handler returns the HTTP handler serving the fake APIs.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(s.serveHTTP)
}

func endpointOf(path string) string {
	switch {
	case strings.HasPrefix(path, "/api/catalog/v1"):
		return "catalog"
	case strings.HasPrefix(path, "/api/views/"):
		return "views"
	case strings.HasPrefix(path, "/resource/"):
		return "resource"
	default:
		return "other"
	}
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	endpoint := endpointOf(r.URL.Path)
	d := s.ctl.record(r, endpoint)
	s.log.Debug("socratatest request", "method", r.Method, "path", r.URL.Path, "endpoint", endpoint)
	if d.latency > 0 {
		t := time.NewTimer(d.latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	rw := &responseBuffer{header: http.Header{}, status: http.StatusOK}
	switch {
	case d.fail != nil:
		writeFailure(rw, *d.fail)
	case d.tokenMissing:
		writeJSON(rw, http.StatusForbidden, map[string]any{"error": true,
			"message": "You must be logged in to access this resource"})
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		writeJSON(rw, http.StatusMethodNotAllowed, map[string]any{"error": true, "message": "Method not allowed"})
	default:
		switch endpoint {
		case "catalog":
			s.serveCatalog(rw, r)
		case "views":
			s.serveViews(rw, r)
		case "resource":
			s.serveResource(rw, r)
		default:
			writeJSON(rw, http.StatusNotFound, map[string]any{"code": "not_found", "error": true,
				"message": "No service found for this URL."})
		}
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
