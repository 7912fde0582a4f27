package analyze

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// Defaults used when the corresponding Options field is zero.
const (
	DefaultMaxRowsPerResult = 100_000
	DefaultMaxRows          = 200_000
	DefaultMaxLoadBytes     = 64 << 20
	DefaultMaxValueBytes    = 1 << 20
	DefaultMaxResultBytes   = 8 << 20
	DefaultMaxResultRows    = 1000
	DefaultMaxConcurrent    = 4
	// DefaultMaxConcurrentPerOwner is how many Runs of one owner
	// (Request.Owner) may be under way at once.
	DefaultMaxConcurrentPerOwner = 2
	// DefaultMaxTempBytes bounds SQLite's temporary files during queries.
	DefaultMaxTempBytes = 256 << 20
	// DefaultCacheBytes is the page cache of each Run's database and of
	// each of its temporary tables (sorts, DISTINCT, GROUP BY, recursive
	// CTEs): past it, they go to temporary files.
	DefaultCacheBytes = 8 << 20
	DefaultTimeout    = 30 * time.Second
	DefaultPageSize   = 5000
	// MinResultColumns is the fewest result columns a query may have
	// whatever the width of the tables (see Options.MaxValueBytes).
	MinResultColumns = 256
	// MaxTables is the most results one Request may name.
	MaxTables = 16
	// MaxSQLBytes is the longest SQL text accepted.
	MaxSQLBytes = 100_000
)

// Errors. Input problems wrap ErrInvalid; a query that is not a single
// read-only SELECT also wraps ErrNotReadOnly.
var (
	ErrInvalid     = errors.New("analyze: invalid request")
	ErrNotReadOnly = errors.New("only a single read-only SELECT statement is allowed")
	ErrTimeout     = errors.New("analyze: the analysis ran out of time")
	// ErrBusy means the owner already runs as many analyses as
	// Options.MaxConcurrentPerOwner allows.
	ErrBusy = errors.New("analyze: too many analyses at once")
	// ErrTempTooLarge means the query needed more temporary storage than
	// Options.MaxTempBytes.
	ErrTempTooLarge = errors.New("analyze: the query needs too much temporary storage")
	// ErrTooLarge means the results to load are over a limit: more rows
	// than MaxRowsPerResult in one result or MaxRows in all, more bytes
	// than MaxLoadBytes, or a row longer than MaxValueBytes.
	ErrTooLarge = errors.New("analyze: result too large to load")
	// ErrValueTooLong means the query made a string or blob longer than
	// MaxValueBytes; it comes wrapped in a *SQLError.
	ErrValueTooLong = errors.New("a value is longer than the analysis allows")
)

// ResourceError reports a result that could not be used: it wraps
// dualresp.ErrNotFound, dualresp.ErrExpired, ErrTooLarge or the
// Executor's error.
type ResourceError struct {
	Table string
	// Ref is the reference as given (id, resource:// URI or URL).
	Ref string
	Err error
}

func (e *ResourceError) Error() string {
	return fmt.Sprintf("analyze: result %q for table %s: %v", e.Ref, e.Table, e.Err)
}

func (e *ResourceError) Unwrap() error { return e.Err }

// SQLError is an error SQLite reported for the query; Error returns
// SQLite's message.
type SQLError struct{ Err error }

func (e *SQLError) Error() string { return "analyze: SQL error: " + e.Err.Error() }
func (e *SQLError) Unwrap() error { return e.Err }

// Options configures an Analyzer. The zero value means the defaults.
type Options struct {
	// MaxRowsPerResult is the most rows loaded from one result; a larger
	// result is refused (ErrTooLarge). Default 100,000.
	MaxRowsPerResult int64
	// MaxRows is the most rows one Run loads from all its results together;
	// more are refused (ErrTooLarge) before anything is loaded. Default
	// 200,000.
	MaxRows int64
	// MaxLoadBytes is the most bytes of rows (as JSON) one Run loads;
	// loading stops with ErrTooLarge when the rows go over it. Default 64
	// MiB.
	MaxLoadBytes int64
	// MaxValueBytes is the longest string, blob or table row SQLite may
	// make (SQLITE_LIMIT_LENGTH), while loading and querying: a longer one
	// stops the query with an error wrapping ErrValueTooLong (or the load
	// with ErrTooLarge) instead of growing memory. A query's result rows
	// have at most max(MinResultColumns, widest table) columns
	// (SQLITE_LIMIT_COLUMN). Default 1 MiB.
	MaxValueBytes int
	// MaxResultRows is the most rows a query returns; Result.Truncated
	// tells when there were more. Default 1,000.
	MaxResultRows int
	// MaxResultBytes bounds the size of the rows a query returns, counted
	// as they will be answered: each row as a JSON object, its column names
	// and escaped values included, so that no answer grows past it however
	// its values escape or its column names repeat. The rows that fit are
	// returned with Result.Truncated set and Result.Cut saying so. Default
	// 8 MiB.
	MaxResultBytes int
	// MaxConcurrent is how many Runs load and query at once; more wait for
	// a turn (within their Timeout). Default 4.
	MaxConcurrent int
	// MaxConcurrentPerOwner is how many Runs of one Request.Owner may be
	// under way (waiting or running) at once; one more fails at once with
	// ErrBusy, so one caller cannot take every turn. Default
	// DefaultMaxConcurrentPerOwner; negative: no bound.
	MaxConcurrentPerOwner int
	// MaxTempBytes bounds the temporary files SQLite writes while queries
	// run (sorts, DISTINCT, GROUP BY and recursive CTEs larger than
	// CacheBytes): while one is over, the Runs querying stop with an error
	// wrapping ErrTempTooLarge. It counts every SQLite temporary file the
	// process holds open (read from /proc/self/fd; on systems without it
	// there is no such bound, only Timeout). Default DefaultMaxTempBytes.
	MaxTempBytes int64
	// CacheBytes is the page cache of a Run's database and of each of its
	// temporary tables, which bounds the memory a query takes beyond its
	// tables. Default DefaultCacheBytes.
	CacheBytes int64
	// Timeout bounds a whole Run: waiting for a turn, loading the results
	// and running the query. Default 30 seconds.
	Timeout time.Duration
	// PageSize is the number of rows loaded per page from a query whose Plan
	// cannot stream (see dualresp.Server.Rows), and per insert transaction.
	// Default 5,000.
	PageSize int64
	// Logger receives operational logs. Default: discard.
	Logger *slog.Logger
}

// Analyzer runs SQL over stored results. It is safe for concurrent use;
// every Run has its own database.
type Analyzer struct {
	results *dualresp.Server
	opts    Options
	log     *slog.Logger
	turns   chan struct{} // a slot per Run allowed at once

	mu      sync.Mutex
	byOwner map[string]int // Runs under way by owner
}

// New returns an Analyzer reading records and their rows from results
// (results.Rows, through the Executor of each record's query kind).
func New(results *dualresp.Server, opts Options) *Analyzer {
	if opts.MaxRowsPerResult <= 0 {
		opts.MaxRowsPerResult = DefaultMaxRowsPerResult
	}
	if opts.MaxRows <= 0 {
		opts.MaxRows = DefaultMaxRows
	}
	if opts.MaxLoadBytes <= 0 {
		opts.MaxLoadBytes = DefaultMaxLoadBytes
	}
	if opts.MaxValueBytes <= 0 {
		opts.MaxValueBytes = DefaultMaxValueBytes
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = DefaultMaxConcurrent
	}
	if opts.MaxResultRows <= 0 {
		opts.MaxResultRows = DefaultMaxResultRows
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.MaxConcurrentPerOwner == 0 {
		opts.MaxConcurrentPerOwner = DefaultMaxConcurrentPerOwner
	}
	if opts.MaxTempBytes <= 0 {
		opts.MaxTempBytes = DefaultMaxTempBytes
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = DefaultCacheBytes
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Analyzer{results: results, opts: opts, log: log, turns: make(chan struct{}, opts.MaxConcurrent), byOwner: map[string]int{}}
}

// Request is one analysis.
type Request struct {
	// SQL is a single SELECT or WITH … SELECT statement over the tables.
	SQL string
	// Results maps table names to results: a resource id, a resource://
	// URI or a REST URL (…/resources/{id}).
	Results map[string]string
	// Owner names the caller, for Options.MaxConcurrentPerOwner; "" (a
	// caller not told apart, such as the one local user of a stdio
	// server) has no bound but MaxConcurrent.
	Owner string
}

// TableInfo describes a loaded table.
type TableInfo struct {
	Name       string   `json:"name"`
	ResourceID string   `json:"resource_id"`
	Rows       int64    `json:"rows"`
	Columns    []string `json:"columns"`
}

// Result is the answer of a query.
type Result struct {
	Columns []string         `json:"columns"`
	Rows    []map[string]any `json:"rows"`
	// RowCount is len(Rows).
	RowCount int `json:"row_count"`
	// Truncated is true when the query had more than MaxResultRows rows,
	// or more than MaxResultBytes of them.
	Truncated bool `json:"truncated"`
	// Cut says which bound truncated the rows, for the caller to tell
	// ("" when none did).
	Cut    string      `json:"-"`
	Tables []TableInfo `json:"tables"`
}

// Progress is told after each loaded page: rows done of total rows to
// load, and what is happening.
type Progress func(done, total int64, msg string)

var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// table is a result to load.
type table struct {
	name, ref, id string
	rec           *dualresp.Record
}

// Run loads the results of req into a new in-memory database and runs
// req.SQL on it, all within Options.Timeout. progress may be nil.
func (a *Analyzer) Run(ctx context.Context, req Request, progress Progress) (*Result, error) {
	if progress == nil {
		progress = func(int64, int64, string) {}
	}
	tables, err := a.check(req)
	if err != nil {
		return nil, err
	}
	release, err := a.ownerTurn(req.Owner)
	if err != nil {
		return nil, err
	}
	defer release()
	runCtx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	res, err := a.run(runCtx, tables, req.SQL, progress)
	if err != nil && runCtx.Err() != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: stopped after %s (loading the results and running the query); "+
			"make the query cheaper (filter or aggregate before joining) or analyze smaller results", ErrTimeout, a.opts.Timeout)
	}
	return res, err
}

// ownerTurn counts one more Run of owner, or returns ErrBusy when it has
// Options.MaxConcurrentPerOwner under way; release ends it.
func (a *Analyzer) ownerTurn(owner string) (release func(), err error) {
	if a.opts.MaxConcurrentPerOwner < 0 || owner == "" {
		return func() {}, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byOwner[owner] >= a.opts.MaxConcurrentPerOwner {
		return nil, fmt.Errorf("%w: %d analyses of this caller are already under way, the most allowed at once; wait for one to finish",
			ErrBusy, a.opts.MaxConcurrentPerOwner)
	}
	a.byOwner[owner]++
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.byOwner[owner]--; a.byOwner[owner] <= 0 {
			delete(a.byOwner, owner)
		}
	}, nil
}

// run does the work of Run under ctx's deadline.
func (a *Analyzer) run(ctx context.Context, tables []table, q string, progress Progress) (*Result, error) {
	// The sizes first, without counting an access: a request that is
	// refused anyway neither waits for a turn nor extends the results.
	var total int64
	for i := range tables {
		t := &tables[i]
		rec, err := a.results.Resource(ctx, t.id)
		if err != nil {
			return nil, &ResourceError{Table: t.name, Ref: t.ref, Err: err}
		}
		if rec.TotalCount > a.opts.MaxRowsPerResult {
			return nil, &ResourceError{Table: t.name, Ref: t.ref, Err: fmt.Errorf("%w: it has %d rows and at most %d are loaded; narrow or aggregate it first",
				ErrTooLarge, rec.TotalCount, a.opts.MaxRowsPerResult)}
		}
		total += rec.TotalCount
	}
	if total > a.opts.MaxRows {
		return nil, fmt.Errorf("%w: the %d results have %d rows together and at most %d are loaded per analysis; narrow or aggregate them first",
			ErrTooLarge, len(tables), total, a.opts.MaxRows)
	}
	select {
	case a.turns <- struct{}{}:
		defer func() { <-a.turns }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	total = 0
	for i := range tables {
		t := &tables[i]
		rec, err := a.results.Access(ctx, t.id)
		if err != nil {
			return nil, &ResourceError{Table: t.name, Ref: t.ref, Err: err}
		}
		t.rec = rec
		total += rec.TotalCount
	}

	// The tables go to a database file of the Run's own, removed once
	// open, so that a Run holds at most CacheBytes of them in memory
	// however large they are (an in-memory database holds all). Its name
	// tells it from the temporary files MaxTempBytes bounds.
	f, err := os.CreateTemp("", analysisDBPrefix+"*.db")
	if err != nil {
		return nil, fmt.Errorf("analyze: create database file: %w", err)
	}
	path := f.Name()
	_ = f.Close()
	defer os.Remove(path) //nolint:errcheck // removed already once open
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)")
	if err != nil {
		return nil, fmt.Errorf("analyze: open database: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("analyze: open database: %w", err)
	}
	defer conn.Close()
	if err := conn.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("analyze: open database: %w", err)
	}
	_ = os.Remove(path) // the open file lives on; nothing is left behind
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_LENGTH, a.opts.MaxValueBytes); err != nil {
		return nil, fmt.Errorf("analyze: limit value length: %w", err)
	}
	// Temporary tables go to files (bounded by MaxTempBytes) past a
	// bounded cache, never to memory without bound
	// (https://www.sqlite.org/pragma.html#pragma_temp_store,
	// #pragma_cache_size: a negative size is in KiB).
	for _, pragma := range []string{"PRAGMA temp_store = FILE", fmt.Sprintf("PRAGMA cache_size = -%d", max(a.opts.CacheBytes>>10, 64))} {
		if _, err := conn.ExecContext(ctx, pragma); err != nil {
			return nil, fmt.Errorf("analyze: %s: %w", pragma, err)
		}
	}

	out := &Result{}
	ld := loading{total: total, progress: progress}
	for _, t := range tables {
		info, err := a.load(ctx, conn, t, &ld)
		if err != nil {
			return nil, err
		}
		out.Tables = append(out.Tables, info)
	}
	width := MinResultColumns
	for _, t := range out.Tables {
		width = max(width, len(t.Columns))
	}
	if err := lockDown(ctx, conn, width); err != nil {
		return nil, err
	}
	if err := a.queryBounded(ctx, conn, q, out); err != nil {
		return nil, err
	}
	a.log.DebugContext(ctx, "analyze: query done", "tables", len(tables), "rows", out.RowCount, "truncated", out.Truncated)
	return out, nil
}

// check validates the request.
func (a *Analyzer) check(req Request) ([]table, error) {
	if strings.TrimSpace(req.SQL) == "" {
		return nil, fmt.Errorf("%w: sql is empty", ErrInvalid)
	}
	if len(req.SQL) > MaxSQLBytes {
		return nil, fmt.Errorf("%w: sql is %d bytes; at most %d", ErrInvalid, len(req.SQL), MaxSQLBytes)
	}
	if len(req.Results) == 0 {
		return nil, fmt.Errorf("%w: results is empty: name at least one result, e.g. {\"incidents\": \"resource://<id>\"}", ErrInvalid)
	}
	if len(req.Results) > MaxTables {
		return nil, fmt.Errorf("%w: %d results named; at most %d", ErrInvalid, len(req.Results), MaxTables)
	}
	seen := map[string]string{}
	var tables []table
	for name, ref := range req.Results {
		if !tableName.MatchString(name) {
			return nil, fmt.Errorf("%w: bad table name %q: use letters, digits and _ (not first), at most 63 characters", ErrInvalid, name)
		}
		low := strings.ToLower(name)
		if strings.HasPrefix(low, "sqlite_") {
			return nil, fmt.Errorf("%w: bad table name %q: names starting with sqlite_ are reserved", ErrInvalid, name)
		}
		if other, ok := seen[low]; ok {
			return nil, fmt.Errorf("%w: table names %q and %q differ only in case", ErrInvalid, other, name)
		}
		seen[low] = name
		id, err := ResourceID(ref)
		if err != nil {
			// The reference is named, as a result that is not found is.
			return nil, &ResourceError{Table: name, Ref: ref, Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
		}
		tables = append(tables, table{name: name, ref: ref, id: id})
	}
	// A stable order: by name.
	slices.SortFunc(tables, func(a, b table) int { return strings.Compare(a.name, b.name) })
	if err := CheckSQL(req.SQL); err != nil {
		return nil, err
	}
	return tables, nil
}

// ResourceID returns the resource id of a reference: an id, a resource://
// URI or an http(s) URL whose path is …/resources/{id}[/…]. It is
// dualresp.ResourceID.
func ResourceID(ref string) (string, error) { return dualresp.ResourceID(ref) }

// quoteIdent quotes a SQLite identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// loading is the state of the loading of a Run's tables.
type loading struct {
	done, total int64 // rows
	bytes       int64 // bytes of rows loaded
	progress    Progress
}

// load creates and fills the table of one result.
func (a *Analyzer) load(ctx context.Context, conn *sql.Conn, t table, ld *loading) (TableInfo, error) {
	fail := func(err error) (TableInfo, error) {
		return TableInfo{}, &ResourceError{Table: t.name, Ref: t.ref, Err: err}
	}
	tooBig := func(err error) error {
		if isTooBig(err) {
			return fmt.Errorf("%w: a row is longer than %s, the most an analysis loads: %v", ErrTooLarge, size(int64(a.opts.MaxValueBytes)), err)
		}
		return err
	}
	cols := make([]string, 0, len(t.rec.Columns))
	for _, c := range t.rec.Columns {
		cols = append(cols, c.Name)
	}
	// Rows come in batches of PageSize; the first batch names the columns
	// when the record lists none.
	next, stop := iter.Pull2(a.results.Rows(ctx, t.rec, dualresp.RowsOptions{PageSize: a.opts.PageSize}))
	defer stop()
	var loaded int64
	batch := func() ([]json.RawMessage, error) {
		var rows []json.RawMessage
		for int64(len(rows)) < a.opts.PageSize && loaded+int64(len(rows)) < t.rec.TotalCount {
			row, err, ok := next()
			if !ok {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("reading rows %d+: %w", loaded+int64(len(rows)), err)
			}
			if ld.bytes += int64(len(row)); ld.bytes > a.opts.MaxLoadBytes {
				return nil, fmt.Errorf("%w: the results hold more than %s of rows, the most an analysis loads; narrow or aggregate them first",
					ErrTooLarge, size(a.opts.MaxLoadBytes))
			}
			rows = append(rows, slices.Clone(row)) // valid only until the next row
		}
		return rows, nil
	}
	rows, err := batch()
	if err != nil {
		return fail(err)
	}
	if len(cols) == 0 {
		for _, c := range dualresp.RowColumns(rows, 0) {
			cols = append(cols, c.Name)
		}
	}
	names := sqlColumnNames(cols)
	info := TableInfo{Name: t.name, ResourceID: t.id, Columns: names}
	if len(names) == 0 {
		names = []string{"value"}
		info.Columns = names
	}
	var ddl strings.Builder
	ddl.WriteString("CREATE TABLE " + quoteIdent(t.name) + " (")
	for i, n := range names {
		if i > 0 {
			ddl.WriteString(", ")
		}
		ddl.WriteString(quoteIdent(n)) // no type: values keep their storage class
	}
	ddl.WriteString(")")
	if _, err := conn.ExecContext(ctx, ddl.String()); err != nil {
		return fail(fmt.Errorf("create table: %w", err))
	}
	for len(rows) > 0 {
		if err := insertRows(ctx, conn, t.name, cols, len(names), rows); err != nil {
			return fail(fmt.Errorf("loading rows %d+: %w", loaded, tooBig(err)))
		}
		loaded += int64(len(rows))
		ld.done += int64(len(rows))
		ld.progress(ld.done, ld.total, fmt.Sprintf("loaded %d of %d rows of %s", loaded, t.rec.TotalCount, t.name))
		if rows, err = batch(); err != nil {
			return fail(err)
		}
	}
	info.Rows = loaded
	return info, nil
}

// maxInsertRows is the most rows one INSERT statement carries.
const maxInsertRows = 100

// insertRows inserts rows in one transaction, several rows a statement.
func insertRows(ctx context.Context, conn *sql.Conn, table string, cols []string, n int, rows []json.RawMessage) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	// SQLite allows 32,766 parameters a statement.
	batch := max(1, min(maxInsertRows, 32_000/n))
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", n), ",") + ")"
	stmts := map[int]*sql.Stmt{}
	defer func() {
		for _, st := range stmts {
			st.Close()
		}
	}()
	stmt := func(k int) (*sql.Stmt, error) {
		if st, ok := stmts[k]; ok {
			return st, nil
		}
		q := "INSERT INTO " + quoteIdent(table) + " VALUES " + strings.TrimSuffix(strings.Repeat(one+",", k), ",")
		st, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return nil, err
		}
		stmts[k] = st
		return st, nil
	}
	args := make([]any, 0, batch*n)
	for start := 0; start < len(rows); start += batch {
		chunk := rows[start:min(start+batch, len(rows))]
		args = args[:0]
		for i, raw := range chunk {
			var m map[string]any
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&m); err != nil {
				return fmt.Errorf("row %d is not a JSON object: %v", start+i, err)
			}
			if len(cols) == 0 {
				args = append(args, string(raw))
			}
			for _, c := range cols {
				args = append(args, sqlValue(m[c]))
			}
		}
		st, err := stmt(len(chunk))
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

var plainNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// sqlValue converts a decoded JSON value for storage.
func sqlValue(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case json.Number:
		if n, ok := number(string(x)); ok {
			return n
		}
		return string(x)
	case string:
		if n, ok := number(x); ok {
			return n
		}
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return string(b)
}

// number parses a plain decimal number: int64 when it is an integer that
// fits, float64 otherwise; integers too large for int64 stay text.
func number(s string) (any, bool) {
	if len(s) > 40 || !plainNumber.MatchString(s) {
		return nil, false
	}
	if !strings.ContainsAny(s, ".eE") {
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// sqlColumnNames makes column names unique without regard to case.
func sqlColumnNames(cols []string) []string {
	out := make([]string, len(cols))
	used := map[string]bool{}
	for i, c := range cols {
		name := c
		if name == "" {
			name = "column"
		}
		for k := 2; used[strings.ToLower(name)]; k++ {
			name = fmt.Sprintf("%s_%d", c, k)
		}
		used[strings.ToLower(name)] = true
		out[i] = name
	}
	return out
}

// lockDown makes the connection read-only: query_only, no attached
// databases, and an authorizer that permits only reading. Result rows get
// at most width columns.
func lockDown(ctx context.Context, conn *sql.Conn, width int) error {
	if _, err := conn.ExecContext(ctx, "PRAGMA query_only = ON"); err != nil {
		return fmt.Errorf("analyze: set query_only: %w", err)
	}
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_ATTACHED, 0); err != nil {
		return fmt.Errorf("analyze: limit attached databases: %w", err)
	}
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_COLUMN, width); err != nil {
		return fmt.Errorf("analyze: limit columns: %w", err)
	}
	err := conn.Raw(func(dc any) error {
		r, ok := dc.(sqlite.AuthorizerRegisterer)
		if !ok {
			return fmt.Errorf("driver connection %T has no authorizer", dc)
		}
		return r.RegisterAuthorizer(readOnlyAuthorizer)
	})
	if err != nil {
		return fmt.Errorf("analyze: install authorizer: %w", err)
	}
	return nil
}

func readOnlyAuthorizer(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRead, sqlite.AuthRecursive:
		return sqlite.AuthorizerOK
	case sqlite.AuthFunction:
		if strings.EqualFold(arg2, "load_extension") {
			return sqlite.AuthorizerDeny
		}
		return sqlite.AuthorizerOK
	}
	return sqlite.AuthorizerDeny
}

// isTooBig reports whether err is SQLite's "string or blob too big".
func isTooBig(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_TOOBIG
}

// size formats a byte count, e.g. "64 MiB".
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// jsonSize is the most bytes a scanned value takes in the answer's JSON,
// escapes included: a NUL byte or an invalid UTF-8 byte takes six
// (\u0000, \ufffd), so a blob of zeros takes six times its length.
func jsonSize(v any) int {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		s = string(x)
	case nil:
		return 4
	default:
		return 24 // a number: at most 24 characters as JSON
	}
	return jsonStringSize(s)
}

// jsonStringSize is the length of s as a JSON string (encoding/json's
// escapes, HTML ones included), quotes included.
func jsonStringSize(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n += 2
			i++
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			n += 6
			i++
		case c < utf8.RuneSelf:
			n++
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				n += 6
			} else {
				n += size
			}
			i += size
		}
	}
	return n
}

// tempPoll is how often the temporary files are measured while a query
// runs.
const tempPoll = 100 * time.Millisecond

// queryBounded runs query, stopping it with an error wrapping
// ErrTempTooLarge when SQLite's temporary files grow over MaxTempBytes.
func (a *Analyzer) queryBounded(ctx context.Context, conn *sql.Conn, q string, out *Result) error {
	qctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tooLarge := fmt.Errorf("%w: it needed more than %s of temporary files (for sorting, DISTINCT, GROUP BY or a recursive CTE); "+
		"make it cheaper: filter or aggregate before sorting, bound a recursive CTE with LIMIT", ErrTempTooLarge, size(a.opts.MaxTempBytes))
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		t := time.NewTicker(tempPoll)
		defer t.Stop()
		for {
			select {
			case <-qctx.Done():
				return
			case <-t.C:
				if n, ok := sqliteTempBytes(); ok && n > a.opts.MaxTempBytes {
					a.log.WarnContext(ctx, "analyze: query stopped: temporary files over the bound", "bytes", n, "max", a.opts.MaxTempBytes)
					cancel(tooLarge)
					return
				}
			}
		}
	}()
	err := a.query(qctx, conn, q, out)
	cancel(nil)
	<-watched
	if cause := context.Cause(qctx); errors.Is(cause, ErrTempTooLarge) && ctx.Err() == nil {
		return &SQLError{Err: cause}
	}
	return err
}

// sqliteTempBytes returns the size of the temporary files SQLite holds open
// in this process: files already deleted (SQLite deletes them as it opens
// them) in one of the directories SQLite writes them to
// (https://www.sqlite.org/tempfiles.html#temporary_file_storage_locations),
// found through /proc/self/fd; ok is false where there is no such
// directory.
func sqliteTempBytes() (n int64, ok bool) {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, false
	}
	for _, fd := range fds {
		p := "/proc/self/fd/" + fd.Name()
		target, err := os.Readlink(p)
		if err != nil {
			continue
		}
		path, deleted := strings.CutSuffix(target, " (deleted)")
		if !deleted || !tempDirs[filepath.Dir(path)] || strings.HasPrefix(filepath.Base(path), analysisDBPrefix) {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n, true
}

// analysisDBPrefix begins the names of the Runs' database files.
const analysisDBPrefix = "datasf-analyze-"

// tempDirs are the directories SQLite puts temporary files in on Unix.
var tempDirs = func() map[string]bool {
	dirs := map[string]bool{"/var/tmp": true, "/usr/tmp": true, "/tmp": true, filepath.Clean(os.TempDir()): true}
	for _, env := range []string{"SQLITE_TMPDIR", "TMPDIR"} {
		if d := os.Getenv(env); d != "" {
			dirs[filepath.Clean(d)] = true
		}
	}
	return dirs
}()

// query runs sql and fills out's columns and rows. ctx carries the Run's
// deadline.
func (a *Analyzer) query(ctx context.Context, conn *sql.Conn, q string, out *Result) error {
	timedOut := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if isTooBig(err) {
			return &SQLError{Err: fmt.Errorf("%w (at most %s; SQLite: %v): return shorter values, e.g. with substr()", ErrValueTooLong, size(int64(a.opts.MaxValueBytes)), err)}
		}
		return &SQLError{Err: err}
	}
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return timedOut(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return timedOut(err)
	}
	out.Columns = uniqueNames(cols)
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	out.Rows = []map[string]any{}
	// A row's JSON repeats every column name: {"name":value,…}.
	names := 2
	for _, c := range out.Columns {
		names += jsonStringSize(c) + 2
	}
	answered := 2 // bytes of the rows as JSON: [row,row…]
	for rows.Next() {
		if len(out.Rows) == a.opts.MaxResultRows {
			out.Truncated = true
			out.Cut = fmt.Sprintf("at most %d rows are answered", a.opts.MaxResultRows)
			break
		}
		if err := rows.Scan(ptrs...); err != nil {
			return timedOut(err)
		}
		n := names + 1
		for _, v := range vals {
			n += jsonSize(v)
		}
		if answered += n; answered > a.opts.MaxResultBytes {
			out.Truncated = true
			out.Cut = fmt.Sprintf("at most %s of rows (as JSON, column names and escaped values included) are answered", size(int64(a.opts.MaxResultBytes)))
			break
		}
		m := make(map[string]any, len(cols))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			m[out.Columns[i]] = v
		}
		out.Rows = append(out.Rows, m)
	}
	if err := rows.Err(); err != nil {
		return timedOut(err)
	}
	out.RowCount = len(out.Rows)
	return nil
}

// uniqueNames renames repeated result column names x to x_2, x_3, ….
func uniqueNames(cols []string) []string {
	out := make([]string, len(cols))
	used := map[string]bool{}
	for i, c := range cols {
		name := c
		for k := 2; used[name]; k++ {
			name = fmt.Sprintf("%s_%d", c, k)
		}
		used[name] = true
		out[i] = name
	}
	return out
}
