// Package localportal is a local Socrata portal: SoQL executed on SQLite.
//
// An [Emulator] serves, on data it holds in SQLite (modernc.org/sqlite, pure
// Go: an in-memory database, or files on disk for the offline mode), the
// Socrata APIs that package socrata uses:
//
//   - GET /api/catalog/v1: Discovery search and browse over the loaded
//     datasets and catalog entries, in the real response shape;
//   - GET /api/views/{id}.json: the Views document (name, description,
//     category, rowsUpdatedAt, columns);
//   - GET /resource/{id}.json and POST /api/v3/views/{id}/query.json
//     (SODA3, which refuses requests without an app token; see soda3.go):
//     SoQL executed for real. Queries ($query, or the
//     separate $select/$where/$order/$group/$having/$limit/$offset/$q
//     parameters) are parsed with package soql, compiled to one SQLite
//     statement by package soqlsqlite and run. Rows come back encoded as Socrata encodes them, with
//     X-SODA2-Fields and X-SODA2-Types headers, and errors come in Socrata's
//     envelopes.
//
// Datasets are loaded from the portal's exports as a user downloads them
// with [Emulator.LoadFiles]: CSV (display-name or field-name headers mapped
// through the catalog), Resource API JSON, GeoJSON, rows.json with its
// Views document, whole directories, or "ID=FILE"; every value encoding the
// exports use is read into its type (see values.go), columns no schema
// names get types inferred from their values, and each file gets a
// [FileReport] (rows, types, bad values with row and column);
// [Emulator.LoadCatalog] loads a catalog JSONL file alone. Generated data comes from
// [Emulator.AddGenerated], which streams rows into SQLite without holding
// them in memory, or [Emulator.AddLazy], which generates them on first use.
//
// The product's --offline mode runs an Emulator with [StartOffline]: it
// listens at once; the sample datasets of package
// [github.com/datasf-mcp/datasf-mcp/localportal/sampledata] are generated on
// their first query and the user's files load in the background. There each
// dataset is built once into a SQLite file of its own in a cache directory
// ([OfflineOptions.CacheDir], [DefaultCacheDir]), with indexes on the
// columns queries filter, group and order by most, and read from disk by
// every later start (see cache.go for the rules: keys, locking, checks). The benchmark
// harness serves one too. Tests mostly use it through package
// [github.com/datasf-mcp/datasf-mcp/socrata/socratatest], which wraps an Emulator in an
// httptest-style server with fault controls (failures, latency, cut bodies,
// app-token checks) and a request log, which this package does not have.
//
// Use:
//
//	p, err := localportal.New(localportal.Options{})
//	if err != nil { ... }
//	defer p.Close()
//	if _, err := p.LoadFiles(ctx, []string{dir}, localportal.LoadOptions{}); err != nil { ... }
//	if err := p.Start(); err != nil { ... }
//	client := socrata.NewClient(socrata.Options{BaseURL: p.URL(), DiscoveryURL: p.URL(), HTTPClient: p.Client()})
//
// or mount [Emulator.Handler] on a server of your own instead of calling Start.
//
// Imported by package datasf (--offline), the command, socrata/socratatest
// (the fake portal of the tests) and the benchmarks only: internal, not a
// library API.
package localportal

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Options configures an Emulator. The zero value is valid.
type Options struct {
	// Domain is the portal domain reported in Discovery results and
	// permalinks. Default socrata.DefaultDomain (data.sf.gov).
	Domain string
	// Addr is the listen address used by Start. Default "127.0.0.1:0".
	Addr string
	// Logger receives load logs and, at debug level, one line per request.
	// Default: discard.
	Logger *slog.Logger
	// Now is the clock for load times. Default time.Now.
	Now func() time.Time
	// Secret, when set, is required of every request in the SecretHeader
	// header (403 otherwise), so that the listener answers only the
	// process that started it (Client sends it): not another local user,
	// nor a page in a browser, nor a caller of the product that has no
	// bearer token. Requests must also name the listener's loopback
	// address or a served domain in Host (403 otherwise), so that DNS
	// rebinding cannot reach it.
	Secret string
}

// SecretHeader carries Options.Secret.
const SecretHeader = "X-Localportal-Secret"

// Emulator is a local Socrata portal. All methods are safe for concurrent use.
type Emulator struct {
	opts Options
	log  *slog.Logger

	db    *sql.DB
	keep  *sql.Conn     // keeps the in-memory database alive
	cache *diskCache    // where StartOffline's datasets are built; nil: in memory
	stop  chan struct{} // closed by Close: stops StartOffline's memory releaser

	mu       sync.RWMutex
	datasets map[string]*dataset        // loaded data, by id
	catalog  map[string]*catalogEntry   // catalog metadata, by id
	pending  map[string]*pendingDataset // datasets loaded on first use, by id
	reports  []FileReport               // data files loaded by StartOffline
	order    []string                   // ids in the order first seen
	noSODA3  atomic.Bool                // SetSODA3(false): /api/v3 answered as a portal without it
	// soda3Live is how SODA3 answers beyond its documentation
	// (SetSODA3Live); soda2Gone, that SODA 2.1 is retired (SetSODA2Gone).
	soda3Live atomic.Pointer[SODA3Live]
	soda2Gone atomic.Bool
	// ddlMu keeps statements from spanning a schema change: SQLite fails a
	// running statement with "database schema has changed" when another
	// connection creates or drops a table. Queries and inserts hold it for
	// reading, CREATE and DROP TABLE for writing.
	ddlMu sync.RWMutex

	// others are the portals of other domains this one serves too
	// (domains.go); nil for most.
	others *domainSet

	// ranked is the search index of the last catalog searched (catalog.go).
	ranked rankedCatalog
	// stats are the loaded datasets' column statistics (colstats.go).
	stats statsCache

	srvMu   sync.Mutex
	moves   map[string]string // SetMoved: old host name to new
	httpSrv *http.Server
	url     string
	client  *http.Client
	closed  bool
}

// New returns a portal that holds no data and is not yet listening. Load
// data, then call Start to listen on Options.Addr or serve Handler yourself;
// Close releases the database.
func New(opts Options) (*Emulator, error) {
	if opts.Domain == "" {
		opts.Domain = socrata.DefaultDomain
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	db, keep, err := openDB()
	if err != nil {
		return nil, err
	}
	return &Emulator{
		opts:     opts,
		log:      opts.Logger,
		db:       db,
		keep:     keep,
		datasets: map[string]*dataset{},
		catalog:  map[string]*catalogEntry{},
		pending:  map[string]*pendingDataset{},
	}, nil
}

// Options returns the options the portal runs with, the defaults in place
// of zero fields.
func (s *Emulator) Options() Options { return s.opts }

// Start listens on Options.Addr and serves Handler in the background until
// Close.
func (s *Emulator) Start() error {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	if s.closed {
		return errors.New("localportal: Start after Close")
	}
	if s.httpSrv != nil {
		return errors.New("localportal: already started")
	}
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("localportal: listen on %s: %w", s.opts.Addr, err)
	}
	s.httpSrv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	s.url = "http://" + ln.Addr().String()
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
	}
	s.client = &http.Client{Transport: tr}
	if s.opts.Secret != "" {
		s.client.Transport = secretTransport{secret: s.opts.Secret, next: tr}
	}
	go func(srv *http.Server) {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("localportal: serve", "err", err)
		}
	}(s.httpSrv)
	return nil
}

// URL returns the base URL ("http://127.0.0.1:port") once started, else "".
func (s *Emulator) URL() string {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	return s.url
}

// Client returns an HTTP client for the portal (http.DefaultClient before
// Start). Its idle connections are closed by Close.
func (s *Emulator) Client() *http.Client {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	if s.client == nil {
		return http.DefaultClient
	}
	return s.client
}

// Close stops the listener (if started) and releases the database. It is
// safe to call more than once.
func (s *Emulator) Close() {
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
	s.mu.Lock()
	for _, ds := range s.datasets {
		if ds.db != nil {
			ds.db.Close() //nolint:errcheck // a read-only cache file
		}
	}
	s.mu.Unlock()
	s.closeOthers()
	s.keep.Close() //nolint:errcheck // closing an in-memory database
	s.db.Close()   //nolint:errcheck // closing an in-memory database
	if s.cache != nil {
		s.cache.close()
	}
	if s.stop != nil {
		close(s.stop)
	}
}

// Handler returns the HTTP handler serving the portal's APIs.
func (s *Emulator) Handler() http.Handler {
	if s.opts.Secret == "" {
		return http.HandlerFunc(s.serveHTTP)
	}
	secret := []byte(s.opts.Secret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get(SecretHeader)), secret) != 1 {
			writeJSON(w, http.StatusForbidden, map[string]any{"code": "forbidden", "error": true,
				"message": "This portal answers only the process that started it."})
			return
		}
		if !s.knownHost(r.Host) {
			writeJSON(w, http.StatusForbidden, map[string]any{"code": "forbidden", "error": true,
				"message": "Host " + r.Host + " is neither this listener's loopback address nor a served domain."})
			return
		}
		s.serveHTTP(w, r)
	})
}

// knownHost reports whether host (with or without a port) is a loopback
// name or address, or a domain the portal serves.
func (s *Emulator) knownHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		return a.IsLoopback()
	}
	if host == "localhost" || host == strings.ToLower(s.opts.Domain) {
		return true
	}
	s.srvMu.Lock()
	_, moved := s.moves[host]
	s.srvMu.Unlock()
	if moved {
		return true
	}
	_, ok := s.DomainPortal(host)
	return ok
}

// secretTransport sends Options.Secret with every request.
type secretTransport struct {
	secret string
	next   http.RoundTripper
}

func (t secretTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set(SecretHeader, t.secret)
	return t.next.RoundTrip(r)
}

// CloseIdleConnections closes the idle connections of the transport under.
func (t secretTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// The APIs that Endpoint names.
const (
	EndpointCatalog  = "catalog"  // Discovery: /api/catalog/v1
	EndpointViews    = "views"    // Views: /api/views/{id}.json
	EndpointResource = "resource" // Resource (SoQL): /resource/{id}.json
	EndpointQuery    = "query"    // SODA3 query (SoQL): POST /api/v3/views/{id}/query.json
	EndpointOther    = "other"    // anything else (answered 404)
)

// Endpoint names the API a request path belongs to: EndpointCatalog,
// EndpointViews, EndpointResource, EndpointQuery or EndpointOther.
func Endpoint(path string) string {
	switch {
	case strings.HasPrefix(path, "/api/v3/views/"):
		return EndpointQuery
	case strings.HasPrefix(path, "/api/catalog/v1"):
		return EndpointCatalog
	case strings.HasPrefix(path, "/api/views/"):
		return EndpointViews
	case strings.HasPrefix(path, "/resource/"):
		return EndpointResource
	default:
		return EndpointOther
	}
}

func (s *Emulator) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if to := s.movedTo(r); to != "" && Endpoint(r.URL.Path) != EndpointCatalog {
		serveMoved(w, r, to)
		return
	}
	if p := s.route(r); p != s {
		if p == nil {
			writeJSON(w, http.StatusNotFound, map[string]any{"code": "not_found", "error": true,
				"message": "No site is served for host " + r.Host + "."})
			return
		}
		p.serveHTTP(w, r)
		return
	}
	endpoint := Endpoint(r.URL.Path)
	s.log.Debug("localportal request", "method", r.Method, "path", r.URL.Path, "endpoint", endpoint)
	if endpoint == EndpointQuery {
		s.serveSODA3(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": true, "message": "Method not allowed"})
		return
	}
	switch endpoint {
	case EndpointCatalog:
		s.serveCatalog(w, r)
	case EndpointViews:
		s.serveViews(w, r)
	case EndpointResource:
		s.serveResource(w, r)
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"code": "not_found", "error": true,
			"message": "No service found for this URL."})
	}
}

// WriteJSON writes v as the portal writes its answers and errors: JSON,
// with Content-Type application/json; charset=utf-8. Handlers in front of a
// portal (socratatest's fault controls) answer with it.
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"error":true,"message":%q}`, err.Error()))
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b) //nolint:errcheck // the client went away
}
