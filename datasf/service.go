package datasf

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/redis/go-redis/v9"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/redisstore"
	"github.com/datasf-mcp/datasf-mcp/dualresp/spill"
	"github.com/datasf-mcp/datasf-mcp/dualresp/sqlitestore"
	"github.com/datasf-mcp/datasf-mcp/dualresp/viewer"
	"github.com/datasf-mcp/datasf-mcp/internal/mcphttp"
	"github.com/datasf-mcp/datasf-mcp/internal/metrics"
	"github.com/datasf-mcp/datasf-mcp/internal/portal"
	"github.com/datasf-mcp/datasf-mcp/schemacache"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Config configures New. The zero value serves data.sf.gov, with links
// on DefaultPublicURL; every zero field means the default.
type Config struct {
	// Socrata configures the portal client (domain, app token, URLs,
	// timeouts). With Offline set, its BaseURL and DiscoveryURL are the
	// local portal's.
	Socrata socrata.Options
	// Offline, when set, serves the local portal (SoQL on SQLite, package
	// localportal) in this process instead of the real one.
	Offline *OfflineConfig
	// SearchValues makes search_datasf rank by column values too: the
	// portal's most frequent values of each text column (Views API
	// cachedContents), gathered in the background after a portal's first
	// search, bounded and within the portal's limits (searchvalues.go).
	SearchValues bool
	// SearchValuesDir keeps the gathered values on disk, a file per portal
	// (0600 in a 0700 directory), gathered again after a day; empty: in
	// memory only. Leave it empty with Offline: the local portal's values
	// are not the live portal's.
	SearchValuesDir string
	// Domains, when not empty, is the allowlist of the portal domains the
	// tools may name besides Socrata.Domain (DATASF_DOMAINS); empty allows
	// any public Socrata portal (at most portal.MaxDomains kept at once).
	Domains []string
	// AppTokens are app tokens by domain (DATASF_APP_TOKENS), each sent
	// only with its own domain's requests; Socrata.AppToken, when set, is
	// Socrata.Domain's. Never taken from a tool's arguments.
	AppTokens map[string]string
	// LookupIP resolves a domain's addresses for the check that they are
	// all public before a client is made for it. Default: the system
	// resolver when the portals are reached directly (Socrata.BaseURL
	// empty); none when one server answers for every domain (Offline,
	// tests), which no request resolves.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)

	// Listener is where Serve serves the REST API (and, with
	// StreamableHTTP, MCP at /mcp). Result links carry its address unless
	// PublicURL is set. Close closes it.
	Listener net.Listener
	// StreamableHTTP makes Serve serve MCP over Streamable HTTP at /mcp
	// beside the REST API.
	StreamableHTTP bool
	// PublicURL is the base of result links when the REST API is reached
	// through another address (a proxy). Default: the Listener's address,
	// or DefaultPublicURL without a Listener.
	PublicURL string

	// Store names the result store: "memory" (the default), "sqlite:PATH"
	// or "redis://HOST:PORT/DB" (see OpenStore).
	Store string
	// StoreSecret, when set, is a secret of the store's user (stdio keeps
	// it in the user's 0700 cache directory): the landing page proves with
	// it, to whoever sends a challenge (StoreChallengeHeader), that this
	// instance serves the store, so that another instance gives links on
	// this one's address only when it is truly one of the user's
	// instances, not a process of another user squatting the port. It
	// also closes the REST API to those without it: links carry a key
	// made with it (LinkKey), and a result is served only at its link or
	// to a request carrying the secret (StoreSecretHeader); anything else
	// is answered 404, as an unknown id.
	StoreSecret string
	// MaxResources bounds the memory store (dualresp's default when zero).
	MaxResources int
	// MaxPinnedPerOwner is the pin quota: the most pinned results one
	// owner (a bearer token; without tokens, the address that created the
	// result, whatever its client keys or MCP sessions) may have
	// (dualresp.DefaultMaxPinnedPerOwner when zero, none when negative).
	MaxPinnedPerOwner int
	// Expiration is how long a result lives without access (default 15m).
	Expiration time.Duration
	// KeepExpired keeps an expired result's record this long, so that its
	// link answers "expired" with the query to run again rather than "not
	// found" (dualresp.Options.KeepExpired; zero: removed at once).
	KeepExpired time.Duration
	// SampleSize is the sample size of query_datasf when the call gives
	// none (default 15).
	SampleSize int
	// CleanupInterval is how often expired results are removed (dualresp's
	// default when zero, never when negative).
	CleanupInterval time.Duration
	// ExportBackoff is the wait before attempt n+1 (n from 1) at a page of
	// an export that failed in a way that may pass, when the portal gave
	// no Retry-After. Default: 0.5s, doubling, at most 8s.
	ExportBackoff func(n int) time.Duration
	// RESTTokens, when set, are the bearer tokens the REST API and /mcp
	// require; each result is visible only to the token that created it.
	// Stdio sessions create results as the first token.
	RESTTokens []string
	// MetricsTokens are the operator's bearer tokens for /metrics: when
	// set, /metrics wants one of them. With RESTTokens and no
	// MetricsTokens, /metrics is closed (401), so that no tenant reads
	// every tenant's metrics; without either it is open.
	MetricsTokens []string
	// CORSOrigins are the browser origins allowed to call the REST API
	// cross-origin, and /mcp ("*" for any).
	CORSOrigins []string
	// SessionIdleTimeout ends an MCP session over Streamable HTTP that sent
	// nothing for this long (default mcphttp.DefaultSessionIdleTimeout).
	SessionIdleTimeout time.Duration
	// MaxSessions bounds the live MCP sessions over Streamable HTTP
	// (default mcphttp.DefaultMaxSessions); past it, initialize is answered 429.
	MaxSessions int
	// MaxSessionsPerClient bounds the live MCP sessions of one client, a
	// bearer token or else a remote address with its client key, and of
	// one token or address in all (default DefaultMaxSessionsPerClient);
	// see mcphttp.Options.MaxSessionsPerClient.
	MaxSessionsPerClient int
	// MaxEventStreams and MaxEventStreamsPerClient bound the open event
	// streams (GET /mcp) in all and of one client (defaults
	// DefaultMaxEventStreams, DefaultMaxEventStreamsPerClient).
	MaxEventStreams          int
	MaxEventStreamsPerClient int
	// BodyReadTimeout bounds the time to read a request's body (default
	// DefaultBodyReadTimeout): a body sent slower is cut off with the
	// connection. IdleTimeout closes a keep-alive connection that sent no
	// request for this long (default DefaultIdleTimeout). Neither cuts a
	// long response (an export, an event stream).
	BodyReadTimeout time.Duration
	IdleTimeout     time.Duration

	// Upstream bounds what the server asks of each portal: tools, pages and
	// exports share these limits (see UpstreamLimits).
	Upstream UpstreamLimits

	// Version is the server version told to MCP clients (default Version).
	Version string
	// Logger receives diagnostics (default: discard). Never stdout.
	Logger *slog.Logger
	// MCPOptions are passed to mcp-go (for example
	// server.WithOutputSchemaValidation()).
	MCPOptions []server.ServerOption
}

// NoCatalog as OfflineConfig.Catalog serves the sample datasets without
// the built-in catalog.
const NoCatalog = "none"

// OfflineConfig says what the local portal serves: the built-in sample
// datasets, plus the catalog and the portal exports given here.
type OfflineConfig struct {
	// Catalog is a catalog JSONL file (one dataset's metadata a line).
	// Empty: on DataSF's portal, the built-in DataSF catalog (630 datasets
	// with their tags and page views, as Discovery gives them); NoCatalog:
	// the sample datasets alone.
	Catalog string
	// CacheDir keeps the datasets built into SQLite files for later starts
	// (localportal.OfflineOptions.CacheDir; localportal.DefaultCacheDir is
	// the product's default). Empty: a temporary directory per process.
	CacheDir string
	// NoCache builds in a temporary directory even when CacheDir is set.
	NoCache bool
	// DataDir holds portal exports; a dataset loaded from it replaces the
	// sample dataset with the same id.
	DataDir string
	// Data lists more exports to serve: files or directories, each "PATH"
	// or "ID=FILE" (see localportal.ParseDataSpec). A file is matched to its
	// dataset by the 4x4 id its name starts with, by its catalog name, or by
	// the ID given; other files become datasets named after them.
	Data []string
	// Strict loads the data before serving and fails on the first file or
	// value that does not load; by default files load in the background
	// and problems are logged without stopping the others.
	Strict bool
}

// UpstreamLimits are the per-portal politeness limits: how many requests
// the server keeps in flight to one portal and how many it starts a second.
// With a Redis store (StoreConfig), every replica sharing that Redis takes
// its turns from one budget per portal and app token.
type UpstreamLimits struct {
	// MaxConcurrent bounds the requests in flight to one portal. Zero:
	// DefaultUpstreamConcurrency, or no bound for the offline portal;
	// negative: no bound.
	MaxConcurrent int
	// Rate bounds the requests a second to one portal (bursts of up to a
	// second's worth). Zero: DefaultUpstreamRate, or no bound for the
	// offline portal; negative: no bound.
	Rate float64
	// MaxWait is the longest a request waits for its turn. Zero:
	// socrata.DefaultMaxQueueWait.
	MaxWait time.Duration
	// TokenFactor multiplies MaxConcurrent and Rate for a portal with an
	// app token. Zero: DefaultTokenFactor; below 1: 1.
	TokenFactor float64
	// Replicas is the number of replicas that share the limits (zero or
	// one: this one alone). Each replica keeps to its share,
	// MaxConcurrent / Replicas (rounded up) and Rate / Replicas, when the
	// shared Redis is unreachable or there is none.
	Replicas int
}

// limits is l as the portal registry takes it.
func (l UpstreamLimits) limits() portal.Limits {
	return portal.Limits{MaxConcurrent: l.MaxConcurrent, Rate: l.Rate, MaxWait: l.MaxWait,
		TokenFactor: l.TokenFactor, Replicas: l.Replicas}
}

// Defaults of UpstreamLimits: 4 requests in flight and 5 a second to each
// portal, four times as many with an app token.
const (
	DefaultUpstreamConcurrency = portal.DefaultUpstreamConcurrency
	DefaultUpstreamRate        = portal.DefaultUpstreamRate
	DefaultTokenFactor         = portal.DefaultTokenFactor
)

// DefaultPublicURL is the base of result links when Config has neither a
// Listener nor a PublicURL: the default REST address.
const DefaultPublicURL = "http://127.0.0.1:8765"

// Service is the assembled product: the Socrata client (against the real
// portal or the local one), the result registry with its store, the schema
// cache, the tools, and the HTTP handlers. It is safe for concurrent use.
type Service struct {
	cfg     Config
	log     *slog.Logger
	url     string
	client  *socrata.Client
	portals *portal.Registry
	results *dualresp.Server
	server  *toolServer
	http    *mcphttp.Server
	// stdioOwner owns the results of stdio sessions with RESTTokens: the
	// first token's owner.
	stdioOwner string
	// auth identifies REST and /mcp callers by bearer token; nil without
	// RESTTokens.
	auth    func(*http.Request) (string, error)
	metrics *metrics.Metrics
	// shared is the upstream budget of all the replicas sharing the
	// store's Redis; nil without Redis.
	shared  *portal.SharedBudget
	closers []func() error // in the order opened
}

// New assembles the product described by cfg. Close releases what it
// opened, also the Listener.
func New(ctx context.Context, cfg Config) (svc *Service, err error) {
	if cfg.Expiration < 0 {
		return nil, fmt.Errorf("datasf: Config.Expiration must be positive; got %s", cfg.Expiration)
	}
	svc = &Service{cfg: cfg, log: cfg.Logger, metrics: metrics.New(metrics.Options{})}
	if svc.log == nil {
		svc.log = slog.New(slog.DiscardHandler)
	}
	defer func() {
		if err != nil {
			_ = svc.Close()
			svc = nil
		}
	}()
	if cfg.Listener != nil {
		svc.closers = append(svc.closers, ignoreClosed(cfg.Listener.Close))
	}
	svc.url = strings.TrimRight(cfg.PublicURL, "/")
	if svc.url == "" && cfg.Listener != nil {
		svc.url = "http://" + cfg.Listener.Addr().String()
	}
	if svc.url == "" {
		svc.url = DefaultPublicURL
	}
	copts := cfg.Socrata
	if copts.Logger == nil {
		copts.Logger = svc.log
	}
	// The store first: a wrong --store fails before the local portal loads.
	store, err := OpenStore(ctx, cfg.Store, cfg.MaxResources)
	if err != nil {
		return svc, err
	}
	svc.closers = append(svc.closers, store.Close)
	if len(cfg.RESTTokens) > 0 {
		if svc.auth, svc.stdioOwner, err = tokenOwners(ctx, store, cfg.RESTTokens, svc.log); err != nil {
			return svc, err
		}
	}
	var (
		served      func(string) bool
		catalogOnly func(domain, id string) bool
	)
	if cfg.Offline != nil {
		url, transport, isServed, isCatalogOnly, closePortal, err := startOffline(ctx, copts.Domain, *cfg.Offline, svc.log)
		if err != nil {
			return svc, err
		}
		svc.closers = append(svc.closers, closePortal)
		copts.BaseURL, copts.DiscoveryURL = url, url
		hc := &http.Client{Timeout: 30 * time.Second} // socrata's default
		if copts.HTTPClient != nil {
			*hc = *copts.HTTPClient
		}
		hc.Transport = transport
		copts.HTTPClient = hc
		served, catalogOnly = isServed, isCatalogOnly
	}
	limits := cfg.Upstream.limits().Resolve(cfg.Offline != nil)
	rdb, err := sharedRedis(cfg.Store)
	if err != nil {
		return svc, err
	}
	if rdb != nil {
		svc.closers = append(svc.closers, rdb.Close)
		svc.shared = portal.NewSharedBudget(portal.SharedBudgetOptions{Client: rdb, Logger: svc.log})
		limits.Shared = svc.shared
	}
	copts.OnRequest, copts.OnWait = svc.metrics.OnRequest, svc.metrics.OnWait
	copts.Identity = upstreamIdentity
	lookup := cfg.LookupIP
	if lookup == nil && copts.BaseURL == "" {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	// The registry makes the configured portal's client as it makes every
	// other's: its new name after a known move, the Host header when one
	// server answers for every domain, moves followed by the registry.
	if svc.portals, err = portal.New(portal.Options{Socrata: copts, Allow: cfg.Domains,
		Tokens: cfg.AppTokens, LookupIP: lookup, Served: served, Logger: svc.log, Limits: limits}); err != nil {
		return svc, err
	}
	svc.client = svc.portals.Default().Client
	svc.metrics.KeepPortal(svc.client.Domain())

	blobs := spill.NewStore(spill.StoreOptions{})
	ropts := dualresp.Options{
		BaseURL: svc.url,
		Store:   store,
		// SoQL on each stored query's portal, spilled tool results from blobs.
		Executors:         map[string]dualresp.Executor{portal.QueryKind: portal.NewExecutor(svc.portals, portal.ExecutorOptions{Backoff: cfg.ExportBackoff}), spill.Kind: blobs},
		DefaultExpiration: cfg.Expiration,
		KeepExpired:       cfg.KeepExpired,
		DefaultSampleSize: cfg.SampleSize,
		CleanupInterval:   cfg.CleanupInterval,
		Logger:            svc.log,
		CORSOrigins:       cfg.CORSOrigins,
		MaxPinnedPerOwner: cfg.MaxPinnedPerOwner,
		OnExportStart:     svc.metrics.OnExportStart,
		OnExportEnd:       svc.metrics.OnExportEnd,
		OnRemoved:         svc.metrics.OnRemoved,
		ErrorText:         restErrorText,
	}
	ropts.Authenticate = svc.auth
	if secret := cfg.StoreSecret; secret != "" {
		ropts.LinkKey = func(id string) string { return LinkKey(secret, id) }
	}
	if svc.results, err = dualresp.New(ropts); err != nil {
		return svc, err
	}
	svc.closers = append(svc.closers, svc.results.Close)
	svc.server, err = newToolServer(toolServerOptions{
		Portals:           svc.portals,
		Results:           svc.results,
		Blobs:             blobs,
		Version:           cfg.Version,
		DefaultSampleSize: cfg.SampleSize,
		Logger:            svc.log,
		ServerOptions:     append([]server.ServerOption{server.WithToolHandlerMiddleware(svc.metrics.ToolMiddleware)}, cfg.MCPOptions...),
		Offline:           offlineNote(svc.portals.Default().Domain, cfg.Offline),
		SearchValues:      cfg.SearchValues,
		SearchValuesDir:   cfg.SearchValuesDir,
		CatalogOnly:       catalogOnly,
	})
	if err != nil {
		return svc, err
	}
	svc.closers = append(svc.closers, func() error { svc.server.indexes.close(); return nil })
	var sessionRedis redis.UniversalClient // nil, not a nil *redis.Client: memory sessions
	if rdb != nil {
		svc.server.session.shared = &sharedResultLists{rdb: rdb, log: svc.log}
		sessionRedis = rdb
	}
	svc.http = mcphttp.New(mcphttp.Options{
		Redis:     sessionRedis,
		PublicURL: svc.url, Auth: svc.auth, CORSOrigins: cfg.CORSOrigins,
		SessionIdleTimeout: cfg.SessionIdleTimeout, MaxSessions: cfg.MaxSessions,
		MaxSessionsPerClient: cfg.MaxSessionsPerClient,
		MaxEventStreams:      cfg.MaxEventStreams, MaxEventStreamsPerClient: cfg.MaxEventStreamsPerClient,
		BodyReadTimeout: cfg.BodyReadTimeout, IdleTimeout: cfg.IdleTimeout,
		OnSessionEnd: svc.server.session.forgetSession,
		ContextFunc:  formatFromHeader,
		Logger:       svc.log,
	})
	svc.metrics.Gauge("datasf_sessions", "Live MCP sessions over Streamable HTTP.", func() float64 { return float64(svc.http.Sessions()) })
	svc.sharedMetrics()
	if counted, ok := store.(interface{ Len() int }); ok {
		svc.metrics.Gauge("datasf_stored_results", "Stored results held by the memory store, pinned or not.", func() float64 { return float64(counted.Len()) })
	}
	if mem, ok := store.(*dualresp.MemoryStore); ok {
		svc.metrics.EvictionCounters(mem.Evictions)
	}
	return svc, nil
}

// tokenOwners returns the Authenticate function of tokens and the owner
// of the first: KeyedTokenOwner under the store's key (a key of this
// process's for a store that keeps none: the memory store, which ends
// with it). Results that an earlier version stored under the unkeyed
// TokenOwner of one of tokens are given to its keyed owner first, so that
// they stay their owner's; those of tokens no longer given stay unkeyed,
// and nobody's. The store makes each token's rename once (see
// dualresp.OwnerRenamer): later starts read none of its records.
func tokenOwners(ctx context.Context, store dualresp.Store, tokens []string, log *slog.Logger) (func(*http.Request) (string, error), string, error) {
	key := dualresp.NewOwnerKey()
	if k, ok := store.(dualresp.OwnerKeyer); ok {
		var err error
		if key, err = k.OwnerKey(ctx); err != nil {
			return nil, "", err
		}
	}
	if r, ok := store.(dualresp.OwnerRenamer); ok {
		renames := make(map[string]string, len(tokens))
		for _, t := range tokens {
			renames[dualresp.TokenOwner(t)] = dualresp.KeyedTokenOwner(key, t)
		}
		n, err := r.RenameOwners(ctx, renames)
		if err != nil {
			return nil, "", fmt.Errorf("giving the results stored under the tokens' unkeyed hashes to their keyed ones: %w", err)
		}
		if n > 0 {
			log.Info("results stored under a token's unkeyed hash (an earlier version) now name its keyed one", "results", n)
		}
	}
	return dualresp.KeyedBearerTokens(key, tokens...), dualresp.KeyedTokenOwner(key, tokens[0]), nil
}

// upstreamIdentity names the caller a request to a portal is made for,
// for the fair shares of the upstream budget (socrata.Options.Identity):
// the client of an MCP request over HTTP (its bearer token, else its
// address), the owner of a REST request with tokens, else one caller
// (stdio, and REST exports without tokens).
func upstreamIdentity(ctx context.Context) string {
	if c, ok := mcphttp.Client(ctx); ok {
		return c
	}
	if owner, ok := dualresp.OwnerFrom(ctx); ok {
		return "owner:" + dualresp.OwnerIdentity(owner)
	}
	return ""
}

// offlineNote is what offline answers say of their data ("" online).
func offlineNote(domain string, o *OfflineConfig) string {
	if o == nil {
		return ""
	}
	var files []string
	if o.DataDir != "" {
		files = append(files, o.DataDir)
	}
	files = append(files, o.Data...)
	return offlineSource(domain, files)
}

// ignoreClosed makes closing an already closed listener a success.
func ignoreClosed(close func() error) func() error {
	return func() error {
		if err := close(); err != nil && !errors.Is(err, net.ErrClosed) {
			return err
		}
		return nil
	}
}

// OpenStore opens the result store that spec names: "" or "memory" (a
// memory store of at most maxResources unpinned results, dualresp's
// default when zero), "sqlite:PATH" (a file that survives restarts) or
// "redis://HOST:PORT/DB" (shared by several instances).
func OpenStore(ctx context.Context, spec string, maxResources int) (dualresp.Store, error) {
	var (
		store dualresp.Store
		err   error
	)
	switch {
	case spec == "" || spec == "memory":
		return dualresp.NewMemoryStore(dualresp.MemoryStoreOptions{MaxResources: maxResources}), nil
	case strings.HasPrefix(spec, "sqlite:"):
		path := strings.TrimPrefix(spec, "sqlite:")
		if path == "" {
			return nil, errors.New("store sqlite:PATH needs a file path, e.g. sqlite:/var/lib/datasf/results.db")
		}
		// The same bound as the memory store's: a file that a long-lived
		// user keeps does not grow without end.
		store, err = sqlitestore.Open(ctx, path, sqlitestore.Options{MaxRecords: cmp.Or(maxResources, dualresp.DefaultMaxResources)})
	case strings.HasPrefix(spec, "redis://"), strings.HasPrefix(spec, "rediss://"):
		store, err = redisstore.New(ctx, redisstore.Options{URL: spec})
	default:
		return nil, fmt.Errorf("store must be memory, sqlite:PATH or redis://HOST:PORT/DB; got %q", spec)
	}
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", spec, err)
	}
	return store, nil
}

// URL returns the base URL of result links, e.g. "http://127.0.0.1:8765".
func (s *Service) URL() string { return s.url }

// MCPServer returns the mcp-go server, to serve over any transport.
func (s *Service) MCPServer() *server.MCPServer { return s.server.MCP() }

// Tools returns the registered tools with their handlers.
func (s *Service) Tools() []server.ServerTool { return s.server.Tools() }

// Results returns the result registry: stored results, their REST API and
// their store.
func (s *Service) Results() *dualresp.Server { return s.results }

// Schemas returns the schema cache the tools read through.
func (s *Service) Schemas() *schemacache.Cache { return s.server.schemas }

// SocrataClient returns the client the tools and the result registry use.
func (s *Service) SocrataClient() *socrata.Client { return s.client }

// HTTPHandler serves MCP over Streamable HTTP at /mcp, the REST API at
// /resources/, the metrics at /metrics and GET /healthz, with the checks package mcphttp makes
// (Host, Origin, bearer tokens, body size, sessions, batches). Call
// shutdown to end the MCP sessions.
func (s *Service) HTTPHandler() (handler http.Handler, shutdown func(context.Context) error) {
	return s.http.Handler(s.MCPServer(), s.restMux())
}

// RESTHandler serves the REST API of stored results at /resources/ (and
// the result viewer page to browsers), to whoever asks: with a
// StoreSecret, Serve puts it behind the check of the links' keys.
func (s *Service) RESTHandler() http.Handler {
	return viewer.Wrap("/resources/", s.results.Handler())
}

// MetricsHandler serves the Service's metrics in the Prometheus text
// format (GET /metrics) to the callers Config.MetricsTokens describes.
func (s *Service) MetricsHandler() http.Handler {
	return metricsAccess(s.cfg.MetricsTokens, len(s.cfg.RESTTokens) > 0, s.metrics.Handler())
}

// restMux serves the REST API at /resources/ and the metrics at /metrics.
func (s *Service) restMux() *http.ServeMux {
	mux := http.NewServeMux()
	if s.cfg.StoreSecret != "" {
		gate := storeGate{secret: s.cfg.StoreSecret, rest: s.RESTHandler()}
		mux.Handle("/resources/", gate)
		mux.Handle("/k/", gate)
	} else {
		mux.Handle("/resources/", s.RESTHandler())
	}
	mux.Handle("GET /metrics", s.MetricsHandler())
	mux.HandleFunc("GET /{$}", s.landing)
	return mux
}

// Serve serves on the Listener until ctx is cancelled, then shuts down
// within 5 seconds: the REST API, and MCP at /mcp with StreamableHTTP.
func (s *Service) Serve(ctx context.Context) error {
	if s.cfg.Listener == nil {
		return errors.New("datasf: Serve needs Config.Listener")
	}
	return s.ServeOn(ctx, s.cfg.Listener)
}

// ServeOn is Serve on another listener ln (which it closes): a stdio
// instance that takes over the default REST address serves there too.
func (s *Service) ServeOn(ctx context.Context, ln net.Listener) error {
	var (
		handler  = s.http.CheckHost(s.restMux())
		shutdown = func(context.Context) error { return nil }
	)
	if s.cfg.StreamableHTTP {
		handler, shutdown = s.HTTPHandler()
		s.log.Info("datasf-mcp serving Streamable HTTP", "mcp", s.url+"/mcp", "rest", s.url+"/resources/")
	}
	srv := s.http.HTTPServer(handler)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	shutdownCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	_ = shutdown(shutdownCtx)
	_ = srv.Shutdown(shutdownCtx)
	<-errc
	return nil
}

// ServeStdio serves MCP on in and out until in ends or ctx is cancelled,
// and the REST API on the Listener (when there is one) meanwhile.
func (s *Service) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	restDone := make(chan error, 1)
	if s.cfg.Listener != nil {
		go func() { restDone <- s.Serve(ctx) }()
	} else {
		restDone <- nil
	}
	s.log.Info("datasf-mcp serving MCP on stdio", "rest", s.url+"/resources/", "domain", s.client.Domain(), "offline", s.cfg.Offline != nil)
	stdio := server.NewStdioServer(s.MCPServer())
	if len(s.cfg.RESTTokens) > 0 {
		// The local user owns what it creates: the first REST token reads it.
		owner := s.stdioOwner
		stdio.SetContextFunc(func(ctx context.Context) context.Context { return dualresp.WithOwner(ctx, owner) })
	}
	err := stdio.Listen(ctx, in, out)
	s.log.Info("stdio closed; shutting down")
	cancel()
	<-restDone
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// Close releases everything New opened, in reverse order. It is safe to
// call more than once.
func (s *Service) Close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	s.closers = nil
	return errors.Join(errs...)
}
