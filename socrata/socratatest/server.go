// Package socratatest provides a fake Socrata server for tests, in the mould
// of net/http/httptest.
//
// The fake is a local portal (the module's SoQL-on-SQLite portal, which
// serves the Discovery, Views and Resource APIs on real data) served by an
// httptest server through a handler that adds what only tests need:
//
//   - fault controls that make the server misbehave on purpose:
//     [Server.FailNext], [Server.Fail], [Server.SetBurst],
//     [Server.SetLatency], [Server.CutBodyAfter], [Server.RequireAppToken];
//   - the live portals' ways, as people who probed them in 2026 describe
//     them (testdata/evidence/live-portals-2026.jsonl): a portal that
//     moved ([Server.SetMoved]: 301 for plain reads, an nginx 403 page for
//     queries), empty-body 425s under bursts ([Server.SetBurst]), stale
//     replicas ([Server.SetStale]), anonymous throttling as a 403
//     authentication_required ([Fault] with [BodyAuthRequired]); counts
//     come back as strings and errors in both of Socrata's envelopes, as
//     the portal itself answers them;
//   - a request log: [Server.RequestCount], [Server.Requests],
//     [Server.LastRequest]. The log keeps the newest Options.MaxRequests
//     requests; RequestCount counts all of them.
//
// Data comes from [Server.LoadFiles] (the portal's exports as a user
// downloads them), [Server.LoadCatalog] and [Server.AddGenerated]; one
// server answers for several domains, named by the request's Host
// ([Server.AddDomain]).
//
// In a test:
//
//	srv := socratatest.NewServer(t)
//	if err := srv.LoadFiles(t.Context(), dir); err != nil { t.Fatal(err) }
//	client := srv.SocrataClient(socrata.Options{})
//
// A fake shared by many tests (from TestMain, say) is made with [Start] and
// released with [Server.Close]; [New] makes one that is not yet listening.
// Data loaded once can be served by many servers ([Options.DataOf],
// [WithDataOf]), each with its own listener, fault controls and request
// log: a test that counts requests or injects faults gets a fake of its
// own without loading the data again.
// Code that is not a test (the product's --offline mode, the benchmarks)
// runs the module's local portal directly: this package imports testing.
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

// Schema describes one dataset of the fake.
type Schema struct {
	ID          string
	Name        string
	Description string
	Category    string
	Department  string   // publishing department, shown in Discovery metadata
	Columns     []Column // DataType is the Views dataTypeName ("text", "number", "calendar_date", "checkbox", "point", ...)
	UpdatedAt   time.Time
	// Domain is the portal that serves the dataset: the server's own
	// (Options.Domain) when empty, else one of AddDomain.
	Domain string
}

func (s Schema) local() localportal.Schema {
	return localportal.Schema{ID: s.ID, Name: s.Name, Description: s.Description, Category: s.Category,
		Department: s.Department, Columns: s.Columns, UpdatedAt: s.UpdatedAt}
}

func fromLocal(l localportal.Schema, domain string) Schema {
	return Schema{ID: l.ID, Name: l.Name, Description: l.Description, Category: l.Category,
		Department: l.Department, Columns: l.Columns, UpdatedAt: l.UpdatedAt, Domain: domain}
}

// Column is one dataset column, the client's own type.
type Column = socrata.Column

// DefaultMaxRequests is the number of requests the request log keeps when
// Options.MaxRequests is 0.
const DefaultMaxRequests = 10_000

// Options configures a Server. The zero value is valid.
type Options struct {
	// Domain is the portal's domain, reported in Discovery results and
	// permalinks (default socrata.DefaultDomain).
	Domain string
	// Addr is where Start listens (default "127.0.0.1:0").
	Addr string
	// Logger receives request and load logs (default: discard).
	Logger *slog.Logger
	// Now is the clock of load times (default time.Now).
	Now func() time.Time
	// MaxRequests is how many of the newest requests the request log keeps
	// (default DefaultMaxRequests; negative keeps none). RequestCount counts
	// every request whatever the limit.
	MaxRequests int
	// DataOf, when set, is a server whose data this one serves as it
	// stands: the new server has its own listener, fault controls and
	// request log, and DataOf's domains, data, SODA3 setting and moves.
	// The data stays DataOf's: on this server, loading data, AddDomain,
	// SetMoved and SetSODA3 fail, and Close leaves the data to DataOf,
	// which must outlive it. Domain and Now must be left empty (they are
	// DataOf's).
	DataOf *Server
}

// Option changes Options; it is how NewServer is configured.
type Option func(*Options)

// WithDomain sets Options.Domain.
func WithDomain(domain string) Option { return func(o *Options) { o.Domain = domain } }

// WithLogger sets Options.Logger.
func WithLogger(l *slog.Logger) Option { return func(o *Options) { o.Logger = l } }

// WithClock sets Options.Now.
func WithClock(now func() time.Time) Option { return func(o *Options) { o.Now = now } }

// WithMaxRequests sets Options.MaxRequests.
func WithMaxRequests(n int) Option { return func(o *Options) { o.MaxRequests = n } }

// WithDataOf sets Options.DataOf.
func WithDataOf(data *Server) Option { return func(o *Options) { o.DataOf = data } }

// Server is a fake Socrata server. All methods are safe for concurrent use.
type Server struct {
	portal *localportal.Emulator
	shared bool   // the portal is Options.DataOf's
	addr   string // where Start listens
	log    *slog.Logger
	ctl    controls
	done   chan struct{} // closed by Close: ends latency waits

	mu     sync.Mutex
	ts     *httptest.Server
	closed bool
}

// New returns a server that is not yet listening. Call Start to listen on
// Options.Addr, or serve Handler yourself; Close releases it.
func New(opts Options) (*Server, error) {
	s := &Server{done: make(chan struct{})}
	if opts.DataOf != nil {
		if opts.Domain != "" || opts.Now != nil {
			return nil, errors.New("socratatest: Options.Domain and Now are DataOf's; leave them empty")
		}
		s.portal, s.shared = opts.DataOf.portal, true
	} else {
		p, err := localportal.New(localportal.Options{Domain: opts.Domain, Addr: opts.Addr, Logger: opts.Logger, Now: opts.Now})
		if err != nil {
			return nil, fmt.Errorf("socratatest: %w", err)
		}
		s.portal = p
	}
	s.addr, s.log = opts.Addr, opts.Logger
	if s.addr == "" {
		s.addr = "127.0.0.1:0"
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
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

// Start returns a server listening on Options.Addr, for a fake shared by
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

// Start listens on Options.Addr and serves Handler in the
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
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("socratatest: listen on %s: %w", s.addr, err)
	}
	s.ts = &httptest.Server{Listener: ln, Config: &http.Server{Handler: s.Handler(),
		ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}}
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
	if opts.Domain == "" {
		opts.Domain = s.portal.Options().Domain
	}
	opts.HTTPClient = s.Client()
	return socrata.NewClient(opts)
}

// Close stops the server (if started) and releases its data (not
// Options.DataOf's). Requests waiting out a SetLatency delay end without a
// response. It is safe to call more than once.
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
	if !s.shared {
		s.portal.Close()
	}
}

// own returns an error when the server's data is Options.DataOf's, which
// op would change.
func (s *Server) own(op string) error {
	if s.shared {
		return fmt.Errorf("socratatest: %s on a server of another's data (Options.DataOf)", op)
	}
	return nil
}

// Domain returns the server's own portal domain (Options.Domain).
func (s *Server) Domain() string { return s.portal.Domain() }

// AddDomain makes the server answer for another portal domain too,
// empty until data is loaded into it (Schema.Domain, LoadFilesOn). A
// request names its portal in the Host header; the Discovery API answers
// for every domain.
func (s *Server) AddDomain(domain string) error {
	if err := s.own("AddDomain"); err != nil {
		return err
	}
	_, err := s.portal.AddDomain(domain)
	return err
}

// domainPortal returns the portal of domain ("" for the server's own).
func (s *Server) domainPortal(domain string) (*localportal.Emulator, error) {
	if err := s.own("loading data"); err != nil {
		return nil, err
	}
	if domain == "" {
		return s.portal, nil
	}
	if p, ok := s.portal.DomainPortal(domain); ok {
		return p, nil
	}
	return nil, fmt.Errorf("socratatest: domain %s is not served; call AddDomain first", domain)
}

// SetSODA3 turns the SODA3 query API on (the default) or off: off, the
// server answers /api/v3 as a portal without it. It fails on a server of
// another's data (Options.DataOf), whose setting it would change.
func (s *Server) SetSODA3(on bool) error {
	if err := s.own("SetSODA3"); err != nil {
		return err
	}
	s.portal.SetSODA3(on)
	for _, d := range s.portal.Domains()[1:] {
		if p, ok := s.portal.DomainPortal(d); ok {
			p.SetSODA3(on)
		}
	}
	return nil
}

// SODA3Live is how the live SODA3 answers where its documentation is
// silent (see localportal.SODA3Live): by default, pages over 5,000 rows are
// answered HTTP 200 with a message object instead of rows.
type SODA3Live = localportal.SODA3Live

// SetSODA3Live sets how the server's SODA3 answers beyond its
// documentation: the largest page, datasets keyed by display names, fields
// missing from the rows. It fails on a server of another's data.
func (s *Server) SetSODA3Live(l SODA3Live) error {
	if err := s.own("SetSODA3Live"); err != nil {
		return err
	}
	s.portal.SetSODA3Live(l)
	for _, d := range s.portal.Domains()[1:] {
		if p, ok := s.portal.DomainPortal(d); ok {
			p.SetSODA3Live(l)
		}
	}
	return nil
}

// SetSODA2Gone makes the server answer SODA 2.1 (/resource) as a portal
// that retired it: HTTP 410 with an error naming the deprecation. SODA3
// is served as before. It fails on a server of another's data.
func (s *Server) SetSODA2Gone(gone bool) error {
	if err := s.own("SetSODA2Gone"); err != nil {
		return err
	}
	s.portal.SetSODA2Gone(gone)
	for _, d := range s.portal.Domains()[1:] {
		if p, ok := s.portal.DomainPortal(d); ok {
			p.SetSODA2Gone(gone)
		}
	}
	return nil
}

// SetMoved makes the server answer for the host old as a portal that
// moved to the host to does (to, "" forgets it): a query (any $select or
// $query) gets a bare nginx 403 HTML page, anything else a 301 to
// https://to with the same path and query. Serve to's data with
// AddDomain (or as the server's own domain). This is DataSF's move from
// data.sfgov.org to data.sf.gov as the evidence describes it.
func (s *Server) SetMoved(old, to string) error {
	if err := s.own("SetMoved"); err != nil {
		return err
	}
	return s.portal.SetMoved(old, to)
}

// Handler returns the HTTP handler serving the fake APIs: the portal's,
// behind the fault controls and the request log.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(s.serveHTTP)
}

// LoadCatalog loads a catalog JSONL file (one dataset's Views-like
// metadata a line) into the server's own domain: the datasets Discovery
// lists and Views describes, with no rows until data is loaded.
func (s *Server) LoadCatalog(ctx context.Context, jsonlPath string) error {
	if err := s.own("LoadCatalog"); err != nil {
		return err
	}
	return s.portal.LoadCatalog(ctx, jsonlPath)
}

// LoadFiles loads the portal's exports as a user downloads them (CSV,
// JSON, GeoJSON, rows.json with its view.json; files, directories or
// "ID=FILE") into the server's own domain. A value of the wrong type is
// stored as null, and a file that does not load is skipped (logged).
func (s *Server) LoadFiles(ctx context.Context, specs ...string) error {
	return s.LoadFilesOn(ctx, "", specs...)
}

// LoadFilesOn is LoadFiles into the portal of domain (see AddDomain).
func (s *Server) LoadFilesOn(ctx context.Context, domain string, specs ...string) error {
	p, err := s.domainPortal(domain)
	if err != nil {
		return err
	}
	if _, err := p.LoadFiles(ctx, specs, localportal.LoadOptions{}); err != nil {
		return fmt.Errorf("socratatest: %w", err)
	}
	return nil
}

// AddGenerated adds a dataset of n rows, row i being gen(i), to the portal
// of schema.Domain.
func (s *Server) AddGenerated(ctx context.Context, schema Schema, n int, gen func(i int) map[string]any) error {
	p, err := s.domainPortal(schema.Domain)
	if err != nil {
		return err
	}
	return p.AddGenerated(ctx, schema.local(), n, gen)
}

// Datasets returns the ids of the datasets with loaded data, sorted.
func (s *Server) Datasets() []string { return s.portal.Datasets() }

// Schema returns the schema of a loaded dataset or catalog entry of the
// server's own domain.
func (s *Server) Schema(id string) (Schema, bool) {
	l, ok := s.portal.Schema(id)
	return fromLocal(l, ""), ok
}

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
	if d.stale {
		rw.header.Set("X-SODA2-Data-Out-Of-Date", "true")
	}
	switch {
	case d.fail != nil:
		writeFailure(rw, *d.fail)
	case d.tokenWrong:
		localportal.WriteJSON(rw, http.StatusForbidden, map[string]any{"code": "permission_denied", "error": true,
			"message": "Invalid app_token specified"})
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
