package dualresp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Defaults used when the corresponding Options field is zero.
const (
	DefaultExpiration      = 15 * time.Minute
	DefaultSampleSize      = 15
	DefaultCleanupInterval = time.Minute
	DefaultMaxPageSize     = 10_000
	// DefaultByteBudget bounds what a model is given of one answer: about
	// 1,800 Claude tokens of structured content, text and link together.
	// It was 9,000 bytes: a wide SELECT * took 2,763 tokens (issue 52);
	// the complete result is a download away.
	DefaultByteBudget = 5500
	// DefaultWholeByteBudget is the larger budget of an answer whose sample
	// is the whole result: a model that has every row needs no second query.
	DefaultWholeByteBudget = 12 * 1024
	// MinByteBudget is the smallest byte budget New accepts; smaller values
	// are raised to it.
	MinByteBudget = 2048
	// DefaultPageLimit is the number of rows of a REST page request without
	// a limit, and of each Page call Server.Rows makes through a Plan that
	// cannot stream.
	DefaultPageLimit = 1000
	// MaxRequestBody is the largest request body the REST handler reads.
	MaxRequestBody = 64 << 10
	// DefaultMaxPinnedPerOwner is the pin quota of each owner when
	// Options.MaxPinnedPerOwner is zero.
	DefaultMaxPinnedPerOwner = 100
	// DefaultPinnedIdleExpiration is how long a pinned result lives
	// without being read when Options.PinnedIdleExpiration is zero.
	DefaultPinnedIdleExpiration = 30 * 24 * time.Hour
)

// SortField orders a page by one result column.
type SortField struct {
	Field string `json:"field"`
	Desc  bool   `json:"desc,omitempty"`
}

// Order is the order a client asked for a query's rows in. Sort fields are
// always result columns (the REST handler rejects anything else). A Plan
// must order by them before its own stable order, so that pages
// never overlap or skip rows, and sorting must never change which rows the
// query selects: with a LIMIT in the query, the LIMIT applies first.
type Order struct {
	Sort []SortField
	// Columns are the result's columns as stored, given with Sort so that
	// a Plan can refer to them, e.g. to break ties between sorted rows.
	Columns []Column
}

// PageRequest asks a Plan for a slice of a query's rows, ordered as
// its Order says (its own stable order when Sort is empty).
type PageRequest struct {
	Offset int64
	Limit  int64
	Order
}

// Executor prepares the stored queries of one kind (Query.Kind) to run.
// The caller supplies one per kind in Options.Executors; dualresp never
// interprets a Query. Prepare does the work a query needs once (parse it,
// resolve its data source, check it is still allowed) and returns the
// Plan that counts and reads its rows; it need not touch the data source.
type Executor interface {
	Prepare(ctx context.Context, q Query) (Plan, error)
}

// Plan is a query prepared to run: what an Executor's Prepare returns, and
// what a caller that prepared the query itself hands CreateResponse in
// Spec.Plan. Everything dualresp reads of a result goes through a Plan:
// CreateResponse's count and sample, Server.Page (so the REST API's pages)
// and Server.Rows (so exports and analyses), which streams when the Plan
// is also a Streamer. A Plan serves one call of the Server (a response's
// creation, a page, an export) and is dropped after it: the Server keeps
// the Query, never the Plan. Its methods may run concurrently.
type Plan interface {
	// Count returns the exact number of rows of the query.
	Count(ctx context.Context) (int64, error)
	// Page returns up to req.Limit rows starting at req.Offset, in a
	// stable order, each a valid JSON object, and the result's columns
	// when it learns them with the rows. The bytes are passed through to
	// REST clients unchanged (exports check each row's shape, not every
	// byte; NDJSON exports compact a row that spans lines).
	Page(ctx context.Context, req PageRequest) (PageResult, error)
}

// Streamer is an optional interface of a Plan: when present, Server.Rows
// (and so exports) call Stream instead of paging through Page. Stream
// calls fn for each of the rows Page would return for req, except that
// req.Limit 0 means every row from req.Offset on; it stops at the first
// error fn returns, returning it. The row passed to fn is only valid until
// fn returns.
type Streamer interface {
	Stream(ctx context.Context, req PageRequest, fn func(row json.RawMessage) error) error
}

// PageResult is what a Plan's Page returns.
type PageResult struct {
	// Rows are the rows of the page, each a JSON object.
	Rows []json.RawMessage
	// Columns are the result's columns, when the Plan learns them with
	// the rows (for example from response headers); nil otherwise.
	// CreateResponse stores them when the Spec gives none.
	Columns []Column
}

// Options configures a Server. Only BaseURL is required; every zero field
// means the default.
type Options struct {
	// BaseURL is the absolute http(s) URL the REST handler is reachable at,
	// without the /resources/ part, e.g. "http://127.0.0.1:8765".
	BaseURL string
	// LinkKey, when set, puts a capability in every link: a result's URL
	// is BaseURL + "/k/" + LinkKey(id) + "/resources/" + id, so that a
	// REST API that serves a result only to whoever shows its key (a MAC
	// of the id under a secret of the server's) serves the links it
	// handed out and nothing to a caller who merely knows an id. Handler
	// serves /resources/ only: serve LinkHandler(Handler()) at "/k/", which
	// checks the key and strips "/k/KEY" (or check it with CheckLink), and
	// mount Handler at "/resources/" only for the callers who may read by
	// id alone (datasf's stdio instances: those holding the secret).
	LinkKey func(id string) string
	// Store keeps the records. Default: a MemoryStore bounded by
	// MaxResources, closed by Server.Close. A Store given here is not closed
	// by the Server.
	Store Store
	// MaxResources bounds the default MemoryStore (see MemoryStoreOptions).
	MaxResources int
	// Executors prepare stored queries, by Query.Kind: CreateResponse
	// (unless its Spec has a Plan), pages, exports and Rows run a query
	// through the Plan its Executor prepares. A query of a kind without an
	// Executor fails with an error naming the known kinds.
	Executors map[string]Executor
	// DefaultExpiration is how long a response lives without access.
	// Default 15 minutes.
	DefaultExpiration time.Duration
	// DefaultSampleSize is the number of sample rows. Default 15.
	DefaultSampleSize int
	// CleanupInterval is how often expired records are removed. Default one
	// minute; negative disables the cleanup loop (call Cleanup yourself).
	CleanupInterval time.Duration
	// AccessExtension is how far each REST access pushes the expiry out
	// (never closer). Default DefaultExpiration; negative disables.
	AccessExtension time.Duration
	// MaxPageSize caps the limit of a page. Default 10,000.
	MaxPageSize int64
	// ByteBudget bounds the size of what a model may be given of a
	// response: the JSON of its structured content, its text and its link
	// together (Response.ModelBytes), since a host may pass all three.
	// Default DefaultByteBudget; at least MinByteBudget.
	ByteBudget int
	// WholeByteBudget replaces ByteBudget, when larger, for a response
	// whose sample holds every row of the result. Default
	// DefaultWholeByteBudget; negative: ByteBudget for every response.
	WholeByteBudget int
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Logger receives operational logs. Default: discard.
	Logger *slog.Logger
	// Authenticate, when set, identifies the caller of every REST request
	// (for example BearerTokens(...)); an error answers 401. Records are then
	// visible only to the owner that created them (see WithOwner); others
	// get 404.
	Authenticate func(*http.Request) (owner string, err error)
	// CORSOrigins lists the browser origins allowed to call the REST API
	// cross-origin ("*" for any). Empty (the default) sends no CORS headers.
	CORSOrigins []string
	// MaxPinnedPerOwner is the pin quota: the most pinned results one owner
	// (Record.Owner: a token's owner, or the Spec's Owner; counted per
	// identity, see OwnerIdentity, so new labels add no pins) may have.
	// Pinned results do not expire while they are read (see
	// PinnedIdleExpiration), so without a quota anyone allowed to pin could
	// fill the store. A pin over the quota fails with a
	// *PinQuotaError (REST: 409 pin_quota_exceeded); deleting a pinned
	// result frees a place. Zero means DefaultMaxPinnedPerOwner; negative
	// means no quota. The quota is enforced when the Store implements
	// PinCounter (the stores of this module do), exactly within one Server
	// and to within the number of Servers sharing a Store.
	MaxPinnedPerOwner int
	// PinnedIdleExpiration bounds how long a pinned result lives without
	// being read: Cleanup deletes the pinned records whose LastAccess is
	// older. A pin keeps a result as long as it is used, not forever, so
	// the pins of owners that went away do not pile up. Zero means
	// DefaultPinnedIdleExpiration; negative means never. Enforced when the
	// Store implements UnusedPinDeleter (MemoryStore and sqlitestore do;
	// in redisstore pinned records never expire).
	PinnedIdleExpiration time.Duration
	// KeepExpired keeps an expired record this long before Cleanup removes
	// it, so that its link answers "expired" and names the query to run
	// again (an *ExpiredError) rather than "not found". Zero: removed at
	// the first Cleanup after it expired.
	KeepExpired time.Duration
	// OnExportStart, when set, is called as each export of the REST API
	// starts, with its format; OnExportEnd as it ends, with what it sent
	// and how it ended. They are for metrics and must return quickly.
	OnExportStart func(format string)
	OnExportEnd   func(ExportReport)
	// MaxExportsPerCaller bounds the exports of the REST API one caller
	// (its authenticated owner, else its remote address) streams at once:
	// past it an export is answered 429 with Retry-After. MaxExports
	// bounds them in all (503). Zero means DefaultMaxExportsPerCaller and
	// DefaultMaxExports; negative, no bound.
	MaxExportsPerCaller int
	MaxExports          int
	// OnRemoved, when set, is told of stored results removed, with the
	// reason: "expired" (Cleanup), "pin_unused" (Cleanup, a pin unread for
	// PinnedIdleExpiration) or "deleted" (Delete). For metrics.
	OnRemoved func(reason string, n int)
	// ErrorText, when set, says why a query failed, in words for the REST
	// API's caller; "" leaves it to the default. The Executor's author
	// knows its errors' types; the log keeps the whole error. The default
	// says that the data source did not answer in time (a deadline or a
	// network timeout), else only that the query failed.
	ErrorText func(error) string
}

// Server creates dual responses, keeps their records and serves them over
// REST. It is safe for concurrent use.
type Server struct {
	base        string
	linkKey     func(id string) string
	store       Store
	ownStore    bool
	executors   map[string]Executor
	expiration  time.Duration
	sampleSize  int
	extension   time.Duration
	maxPage     int64
	budget      int
	wholeBudget int
	now         func() time.Time
	log         *slog.Logger

	authenticate func(*http.Request) (string, error)
	cors         []string

	maxPinned int           // <= 0: no quota
	pinMu     sync.Mutex    // makes counting and pinning one step
	pinIdle   time.Duration // <= 0: pins never expire
	// keepExpired delays the removal of expired records (KeepExpired).
	keepExpired time.Duration

	onExportStart func(format string)
	onExportEnd   func(ExportReport)
	exports       *exportSlots
	onRemoved     func(reason string, n int)
	errorText     func(error) string

	stop      context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// New returns a Server, and starts its cleanup loop unless disabled.
func New(opts Options) (*Server, error) {
	base, err := checkBaseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	s := &Server{
		base:        base,
		linkKey:     opts.LinkKey,
		store:       opts.Store,
		executors:   maps.Clone(opts.Executors),
		expiration:  opts.DefaultExpiration,
		sampleSize:  opts.DefaultSampleSize,
		extension:   opts.AccessExtension,
		maxPage:     opts.MaxPageSize,
		budget:      opts.ByteBudget,
		wholeBudget: opts.WholeByteBudget,
		now:         opts.Now,
		log:         opts.Logger,
		done:        make(chan struct{}),

		authenticate: opts.Authenticate,
		cors:         opts.CORSOrigins,
		maxPinned:    opts.MaxPinnedPerOwner,
		pinIdle:      opts.PinnedIdleExpiration,

		onExportStart: opts.OnExportStart,
		onExportEnd:   opts.OnExportEnd,
		exports:       newExportSlots(opts.MaxExportsPerCaller, opts.MaxExports),
		onRemoved:     opts.OnRemoved,
		errorText:     opts.ErrorText,
	}
	if s.maxPinned == 0 {
		s.maxPinned = DefaultMaxPinnedPerOwner
	}
	s.keepExpired = max(opts.KeepExpired, 0)
	if s.pinIdle == 0 {
		s.pinIdle = DefaultPinnedIdleExpiration
	}
	if s.store == nil {
		s.store = NewMemoryStore(MemoryStoreOptions{MaxResources: opts.MaxResources})
		s.ownStore = true
	}
	if s.expiration <= 0 {
		s.expiration = DefaultExpiration
	}
	if s.sampleSize <= 0 {
		s.sampleSize = DefaultSampleSize
	}
	if s.extension == 0 {
		s.extension = s.expiration
	}
	if s.maxPage <= 0 {
		s.maxPage = DefaultMaxPageSize
	}
	if s.budget == 0 {
		s.budget = DefaultByteBudget
	}
	s.budget = max(s.budget, MinByteBudget)
	switch {
	case s.wholeBudget == 0:
		s.wholeBudget = DefaultWholeByteBudget
	case s.wholeBudget < 0:
		s.wholeBudget = 0
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if _, ok := s.store.(PinCounter); !ok && s.maxPinned > 0 {
		s.log.Warn("dualresp: the store cannot count pinned results; the pin quota is not enforced", "store", fmt.Sprintf("%T", s.store))
	}
	interval := opts.CleanupInterval
	if interval == 0 {
		interval = DefaultCleanupInterval
	}
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	if interval > 0 {
		go s.cleanupLoop(ctx, interval)
	} else {
		close(s.done)
	}
	return s, nil
}

func checkBaseURL(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("dualresp: Options.BaseURL is required (e.g. http://127.0.0.1:8765)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("dualresp: Options.BaseURL %q must be an absolute http or https URL: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("dualresp: Options.BaseURL %q must be an absolute http or https URL", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("dualresp: Options.BaseURL %q must not have a query or fragment", raw)
	}
	return strings.TrimRight(raw, "/"), nil
}

// URL returns the REST URL of the resource with the given id (with its
// key, see Options.LinkKey).
func (s *Server) URL(id string) string {
	if s.linkKey != nil {
		return s.base + "/k/" + s.linkKey(id) + "/resources/" + id
	}
	return s.base + "/resources/" + id
}

// URI returns the MCP resource URI of the resource with the given id.
func (s *Server) URI(id string) string { return "resource://" + id }

// Store returns the Server's store.
func (s *Server) Store() Store { return s.store }

// Spec describes a result to create a dual response for.
type Spec struct {
	// Name names the result for people, e.g. "Food trucks by status".
	Name        string
	Description string
	// Query is stored, and prepared again for pages and exports.
	Query Query
	// Plan, when set, is Query already prepared by the caller (as the
	// Executor of Query.Kind would prepare it): the count and the sample
	// run through it, so nothing is prepared twice. Nil: CreateResponse
	// prepares Query through its Executor.
	Plan Plan
	// Columns are the result's columns; REST sort fields must be among them.
	Columns []Column
	// SampleSize is the number of sample rows. Zero means the Server's
	// default; negative means no sample.
	SampleSize int
	// Expiration is how long the result lives without access. Zero means
	// the Server's default; negative means never (the record is pinned).
	Expiration time.Duration
	// Metadata is merged into the structured content's metadata (dualresp's
	// own keys win) and kept in the record. Values must be JSON-encodable.
	Metadata map[string]any
	// Owner is stored with the record for access control by the caller.
	Owner string
	// Notes are sentences that change what the answer means (a corrected
	// name, a rewritten query). The summary carries them after the counts,
	// so that they reach the model whether its host shows the text content
	// or the structured content. They are not stored.
	Notes []string
	// QueryStated says the Metadata already states the query another way
	// (a URL that reruns it, for example): the structured content
	// then does not repeat Query.Text under "query", so that it is said
	// once. The record, the REST metadata and pages keep Query.
	QueryStated bool
	// Footer, when set, is the last line of the text content, after the
	// table (the source of the data, for a person reading the text; the
	// structured content says it in its metadata). It is outside the byte
	// budget, and not stored.
	Footer string
	// Keys are the result's columns that label its rows (a grouped
	// query's group keys): the text's table writes a null among them as
	// null, not as an empty cell a reader would take for a label or skip.
	// Other columns' nulls stay empty cells. They are not stored.
	Keys []string
}

// CreateResponse counts the query's rows and fetches its sample
// concurrently through the Spec's Plan, or else the Plan the Executor of
// the query's kind prepares (two calls, one request each for most data
// sources), stores the query (not the rows) and returns the response. When
// the Spec gives no Columns, the columns the sample page reports are
// stored. A failed count is a *CountError, a failed sample or preparation
// a *QueryError, each wrapping the Executor's or the Plan's own error
// (errors.As finds the source's error types); a failed save is a
// *StorageError.
func (s *Server) CreateResponse(ctx context.Context, spec Spec) (*Response, error) {
	plan := spec.Plan
	if plan == nil {
		var err error
		if plan, err = s.prepare(ctx, spec.Query); err != nil {
			return nil, &QueryError{Op: "sample", Err: err}
		}
	}
	size := spec.SampleSize
	if size == 0 {
		size = s.sampleSize
	}
	var (
		total  int64
		sample []json.RawMessage
		cols   []Column
	)
	// The count runs beside the sample, which runs here. The first error
	// is returned: a failed count ends the sample, a failed sample the
	// count.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(cctx)
	g.Go(func() error {
		n, err := plan.Count(gctx)
		if err != nil {
			return &CountError{Err: err}
		}
		if n < 0 {
			return &CountError{Err: fmt.Errorf("negative count %d", n)}
		}
		total = n
		return nil
	})
	var pageErr error
	if size > 0 {
		var page PageResult
		page, pageErr = plan.Page(gctx, PageRequest{Offset: 0, Limit: int64(size)})
		sample, cols = page.Rows, page.Columns
		if pageErr != nil && context.Cause(gctx) == nil {
			cancel() // the sample failed first: the count is not needed
		}
	}
	if err := g.Wait(); err != nil && (pageErr == nil || context.Cause(gctx) != context.Canceled) {
		return nil, err
	}
	if pageErr != nil {
		return nil, &QueryError{Op: "sample", Err: pageErr}
	}
	if len(spec.Columns) == 0 && len(cols) > 0 {
		spec.Columns = cols
	}
	return s.saveResponse(ctx, spec, total, sample, size)
}

// saveResponse saves the record of a new response and returns the response.
func (s *Server) saveResponse(ctx context.Context, spec Spec, total int64, sample []json.RawMessage, size int) (*Response, error) {
	if len(sample) > size && size > 0 {
		sample = sample[:size]
	}
	if int64(len(sample)) > total {
		// The data grew between the two queries; never claim fewer rows than shown.
		total = int64(len(sample))
	}
	if spec.Owner == "" {
		spec.Owner, _ = OwnerFrom(ctx)
	}
	id, err := newID()
	if err != nil {
		return nil, &StorageError{Op: "id", Err: err}
	}
	now := s.now()
	rec := &Record{
		ID:          id,
		Name:        spec.Name,
		Description: spec.Description,
		Query:       spec.Query,
		Columns:     spec.Columns,
		TotalCount:  total,
		Sample:      sample,
		Metadata:    spec.Metadata,
		Owner:       spec.Owner,
		CreatedAt:   now,
		LastAccess:  now,
	}
	switch exp := spec.Expiration; {
	case exp < 0:
		rec.Pinned = true
	case exp == 0:
		rec.ExpiresAt = now.Add(s.expiration)
	default:
		rec.ExpiresAt = now.Add(exp)
	}
	rec = rec.Clone()
	if rec.Pinned {
		s.pinMu.Lock()
		defer s.pinMu.Unlock()
		if err := s.checkPinQuota(ctx, rec.Owner); err != nil {
			return nil, err
		}
	}
	if err := s.store.Save(ctx, rec); err != nil {
		return nil, &StorageError{Op: "save", Err: err}
	}
	s.log.DebugContext(ctx, "dualresp: response created", "id", id, "total", total, "sample", len(sample))
	budget := s.budget
	if int64(len(rec.Sample)) == rec.TotalCount {
		budget = max(budget, s.wholeBudget) // a whole answer
	}
	r := newResponse(rec, s.URL(id), s.URI(id), budget, now)
	r.notes = slices.Clone(spec.Notes)
	r.footer = spec.Footer
	r.queryStated = spec.QueryStated
	r.keys = slices.Clone(spec.Keys)
	return r, nil
}

// newID returns 128 random bits as 32 hex digits.
func newID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// validID reports whether id looks like an id newID made.
func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// prepare prepares q through the Executor of its kind; without one, the
// error names the kinds the Server knows.
func (s *Server) prepare(ctx context.Context, q Query) (Plan, error) {
	e, ok := s.executors[q.Kind]
	if !ok || e == nil {
		known := slices.Sorted(maps.Keys(s.executors))
		if len(known) == 0 {
			return nil, fmt.Errorf("dualresp: no Executor for query kind %q: Options.Executors is empty", q.Kind)
		}
		return nil, fmt.Errorf("dualresp: no Executor for query kind %q (known kinds: %s)", q.Kind, strings.Join(known, ", "))
	}
	return e.Prepare(ctx, q)
}

// get returns the live record with the given id: ErrNotFound or ErrExpired
// (wrapped) otherwise, or a *StorageError.
func (s *Server) get(ctx context.Context, id string) (*Record, error) {
	if !validID(id) {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	r, err := s.store.Get(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return nil, &StorageError{Op: "get", Err: err}
	}
	if !visible(ctx, r) {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if r.Expired(s.now()) {
		return nil, &ExpiredError{ID: id, ExpiresAt: r.ExpiresAt, Query: r.Query}
	}
	return r, nil
}

// Resource returns the record with the given id without counting an access.
// It returns an error wrapping ErrNotFound or ErrExpired, or a
// *StorageError.
func (s *Server) Resource(ctx context.Context, id string) (*Record, error) {
	return s.get(ctx, id)
}

// Access returns the record with the given id and counts one access:
// AccessCount and LastAccess change and the expiry moves out by
// AccessExtension. Errors are as for Resource.
func (s *Server) Access(ctx context.Context, id string) (*Record, error) {
	if _, err := s.get(ctx, id); err != nil {
		return nil, err
	}
	ext := max(s.extension, 0)
	r, err := s.store.Touch(ctx, id, s.now(), ext)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return nil, &StorageError{Op: "touch", Err: err}
	}
	return r, nil
}

// Pin makes the resource permanent and returns the updated record. A pin
// that would give the record's owner (its identity, see OwnerIdentity)
// more pinned results than Options.MaxPinnedPerOwner, or the store more
// than it keeps pinned (MemoryStoreOptions.MaxPinned), fails with a
// *PinQuotaError (pinning a pinned record always succeeds). Other errors
// are as for Resource.
func (s *Server) Pin(ctx context.Context, id string) (*Record, error) {
	rec, err := s.get(ctx, id)
	if err != nil {
		return nil, err
	}
	if !rec.Pinned {
		s.pinMu.Lock()
		defer s.pinMu.Unlock()
		if err := s.checkPinQuota(ctx, rec.Owner); err != nil {
			return nil, err
		}
	}
	r, err := s.store.Pin(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if errors.Is(err, ErrPinQuota) { // the store's own bound on pins
		s.log.InfoContext(ctx, "dualresp: pin refused: the store's pins are full", "err", err)
		return nil, err
	}
	if err != nil {
		return nil, &StorageError{Op: "pin", Err: err}
	}
	return r, nil
}

// checkPinQuota returns a *PinQuotaError when owner has no pin left;
// s.pinMu must be held.
func (s *Server) checkPinQuota(ctx context.Context, owner string) error {
	pc, ok := s.store.(PinCounter)
	if !ok || s.maxPinned <= 0 {
		return nil
	}
	n, err := pc.CountPinned(ctx, owner)
	if err != nil {
		return &StorageError{Op: "count pinned", Err: err}
	}
	if n >= s.maxPinned {
		s.log.InfoContext(ctx, "dualresp: pin refused: quota reached", "pinned", n, "max", s.maxPinned)
		return &PinQuotaError{Owner: owner, Max: s.maxPinned}
	}
	return nil
}

// Delete removes the resource. Deleting an expired resource removes it and
// returns an error wrapping ErrExpired; errors are otherwise as for
// Resource.
func (s *Server) Delete(ctx context.Context, id string) error {
	_, getErr := s.get(ctx, id)
	if getErr != nil && !errors.Is(getErr, ErrExpired) {
		return getErr
	}
	err := s.store.Delete(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	case err != nil:
		return &StorageError{Op: "delete", Err: err}
	}
	if s.onRemoved != nil {
		s.onRemoved("deleted", 1)
	}
	return getErr
}

// Cleanup removes the expired records now, and the pinned records unread
// for Options.PinnedIdleExpiration, and returns how many went. The cleanup
// loop calls it every CleanupInterval.
func (s *Server) Cleanup(ctx context.Context) (int, error) {
	now := s.now()
	n, err := s.store.DeleteExpired(ctx, now.Add(-s.keepExpired))
	if n > 0 && s.onRemoved != nil {
		s.onRemoved("expired", n)
	}
	if err != nil {
		return n, &StorageError{Op: "delete expired", Err: err}
	}
	if d, ok := s.store.(UnusedPinDeleter); ok && s.pinIdle > 0 {
		m, err := d.DeleteUnusedPinned(ctx, now.Add(-s.pinIdle))
		n += m
		if m > 0 && s.onRemoved != nil {
			s.onRemoved("pin_unused", m)
		}
		if err != nil {
			return n, &StorageError{Op: "delete unused pinned", Err: err}
		}
	}
	return n, nil
}

func (s *Server) cleanupLoop(ctx context.Context, every time.Duration) {
	defer close(s.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n, err := s.Cleanup(ctx)
			if err != nil && ctx.Err() == nil {
				s.log.WarnContext(ctx, "dualresp: cleanup failed", "err", err)
			} else if n > 0 {
				s.log.DebugContext(ctx, "dualresp: expired resources removed", "count", n)
			}
		}
	}
}

// Close stops the cleanup loop and closes the default store (a Store given
// in Options is left open). It is safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.stop()
		<-s.done
		if s.ownStore {
			s.closeErr = s.store.Close()
		}
	})
	return s.closeErr
}
