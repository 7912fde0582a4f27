package localportal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/soqlsqlite"
)

// This file keeps the offline datasets in SQLite files on disk: each
// sample dataset and each data file is built once into a file of its own in
// the cache directory and read from there by every later start. A file is
// named after its source (not its content) and holds a meta table with the
// key of what it was built from; a file whose key differs (the source
// changed), that does not open, or whose meta or rows do not check is
// rebuilt. Builds write a temporary file and rename it into place, under
// an exclusive lock file, so processes starting together build once and
// never read a half-written file.

// storageVersion names the layout of the cache files (tables, value
// encodings, indexes, meta). Change it whenever any of them changes: every
// cache file is then rebuilt.
const storageVersion = "localportal-cache-3"

// cacheMetaTable holds one row: name 'meta', value the cacheMeta JSON.
const cacheMetaTable = "localportal_meta"

// Memory bounds of SQLite: the page cache of each reading connection and of
// the build, in KiB (SQLite's negative cache_size), and the reading
// connections per dataset. The OS's file cache holds the rest.
const (
	readCacheKiB = 4096
	// A build keeps its table in the page cache while it makes the
	// indexes (each is a scan of the table): sample datasets, whose sizes
	// are known (at most 250,000 rows), get a large one; --data files, of
	// any size, a bounded one.
	sampleBuildCacheKiB = 131072
	fileBuildCacheKiB   = 32768
	readConns           = 4
	readIdle            = 3 * time.Second
)

// cacheMeta is what a cache file says about itself.
type cacheMeta struct {
	Key    string `json:"key"`
	Table  string `json:"table"`
	Schema Schema `json:"schema"`
	Rows   int64  `json:"rows"`
	// The file report of a data file, for a load served from the cache.
	Inferred  []string       `json:"inferred,omitempty"`
	BadValues int            `json:"bad_values,omitempty"`
	Problems  []ValueProblem `json:"problems,omitempty"`
	Built     time.Time      `json:"built"`
}

// diskCache is the directory of the cache files.
type diskCache struct {
	dir    string
	temp   bool // dir is this portal's own temporary directory, removed by Close
	log    *slog.Logger
	builds atomic.Int64
	reuses atomic.Int64

	mu     sync.Mutex
	orphan []string // files this process built but could not rename into place
}

// DefaultCacheDir is where the offline mode keeps its databases unless told
// otherwise: the user's cache directory (os.UserCacheDir) plus
// "datasf-mcp", or "" when the system has none.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil || dir == "" {
		return ""
	}
	return filepath.Join(dir, "datasf-mcp")
}

// newDiskCache returns the cache in dir, or, when caching is off, dir is
// empty or cannot be written, one in a new temporary directory (logged
// once, with the reason).
func newDiskCache(dir string, off bool, log *slog.Logger) (*diskCache, error) {
	reason := ""
	switch {
	case off:
		reason = "caching is turned off (--no-cache)"
	case dir == "":
		reason = "no cache directory is set (--cache-dir)"
	default:
		if err := checkWritable(dir); err != nil {
			reason = "the cache directory cannot be written: " + err.Error()
		}
	}
	if reason == "" {
		log.Debug("localportal: offline data cache", "dir", dir)
		return &diskCache{dir: dir, log: log}, nil
	}
	tmp, err := os.MkdirTemp("", "datasf-mcp-offline-")
	if err != nil {
		return nil, fmt.Errorf("localportal: %s, and no temporary directory either: %w", reason, err)
	}
	level := slog.LevelInfo
	if !off && dir != "" {
		level = slog.LevelWarn
	}
	log.Log(context.Background(), level, "localportal: offline data is built in a temporary directory for this process only (each start builds it again)",
		"reason", reason, "dir", tmp)
	return &diskCache{dir: tmp, temp: true, log: log}, nil
}

// checkWritable creates dir if needed and a file in it.
func checkWritable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// close removes the temporary directory or the files left behind.
func (c *diskCache) close() {
	if c.temp {
		os.RemoveAll(c.dir) //nolint:errcheck // best effort
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.orphan {
		os.Remove(f) //nolint:errcheck // best effort
	}
}

// cacheKey hashes the parts that decide a cache file's content.
func cacheKey(parts ...any) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	enc.Encode(storageVersion) //nolint:errcheck // hashing does not fail
	for _, p := range parts {
		enc.Encode(p) //nolint:errcheck // hashing does not fail
	}
	return hex.EncodeToString(h.Sum(nil))
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// cacheFileName is a file name for a source: readable, and unique by its
// hashed identity.
func cacheFileName(label string, identity ...any) string {
	sum := cacheKey(identity...)
	label = strings.Trim(unsafeName.ReplaceAllString(label, "_"), "_")
	if len(label) > 60 {
		label = label[:60]
	}
	return label + "-" + sum[:12] + ".db"
}

// sqliteURI is the "file:" URI of path with SQLite URI parameters.
func sqliteURI(path string, params string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive letter
	}
	u := url.URL{Scheme: "file", Path: p}
	return u.String() + "?" + params
}

// openReader opens a cache file read-only with a bounded page cache.
func openReader(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", sqliteURI(path, fmt.Sprintf(
		"mode=ro&_dqs=0&_pragma=busy_timeout(20000)&_pragma=cache_size(-%d)&_pragma=temp_store(1)&_pragma=query_only(1)", readCacheKiB)))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(readConns)
	db.SetMaxIdleConns(readConns)
	// A connection keeps the memory of its largest query (its page cache
	// and SQLite's buffers, outside the Go heap) until it closes: after a
	// burst, the idle ones close, and memory goes back to the system.
	db.SetConnMaxIdleTime(readIdle)
	db.SetConnMaxLifetime(0)
	return db, nil
}

// openCached opens and checks the cache file at path: it must be a SQLite
// database whose meta has key and whose table has the rows the meta says.
// The returned database is open for reading.
func openCached(ctx context.Context, path, key string) (*sql.DB, *cacheMeta, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	db, err := openReader(path)
	if err != nil {
		return nil, nil, err
	}
	meta, err := checkCached(ctx, db, st.Size(), key)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, meta, nil
}

func checkCached(ctx context.Context, db *sql.DB, size int64, key string) (*cacheMeta, error) {
	var pages, pageSize int64
	if err := db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		return nil, err
	}
	if err := db.QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageSize); err != nil {
		return nil, err
	}
	if pages*pageSize != size {
		return nil, fmt.Errorf("the file has %d bytes, its header says %d", size, pages*pageSize)
	}
	var check string
	if err := db.QueryRowContext(ctx, "PRAGMA quick_check("+cacheMetaTable+")").Scan(&check); err != nil {
		return nil, err
	}
	if check != "ok" {
		return nil, fmt.Errorf("quick_check: %s", check)
	}
	var raw string
	if err := db.QueryRowContext(ctx, "SELECT value FROM "+cacheMetaTable+" WHERE name = 'meta'").Scan(&raw); err != nil {
		return nil, fmt.Errorf("reading the meta table: %w", err)
	}
	var meta cacheMeta
	if err := json.Unmarshal([]byte(raw), &meta); err != nil {
		return nil, fmt.Errorf("reading the meta table: %w", err)
	}
	if meta.Key != key {
		return nil, errStale
	}
	var last sql.NullInt64
	if err := db.QueryRowContext(ctx, fmt.Sprintf("SELECT max(%s) FROM %s", soqlsqlite.RowIDColumn, meta.Table)).Scan(&last); err != nil {
		return nil, fmt.Errorf("reading the table: %w", err)
	}
	if last.Int64 != meta.Rows {
		return nil, fmt.Errorf("the table has %d rows, the meta says %d", last.Int64, meta.Rows)
	}
	return &meta, nil
}

var errStale = errors.New("built from other sources (they changed)")

// builder is a cache file being built: a fresh database that install fills.
type builder struct {
	db   *sql.DB
	ds   *dataset
	meta cacheMeta
}

// materialize returns dataset name's database from the cache: the file
// when it is valid for key, else built by build (into a temporary file,
// renamed into place) under the file's lock. built says whether this call
// built it.
func (c *diskCache) materialize(ctx context.Context, name, key string, cacheKiB int, build func(ctx context.Context, b *builder) error) (db *sql.DB, meta *cacheMeta, built bool, err error) {
	path := filepath.Join(c.dir, name)
	db, meta, err = openCached(ctx, path, key)
	if err == nil {
		c.reuses.Add(1)
		return db, meta, false, nil
	}
	unlock, lerr := lockFile(ctx, path+".lock")
	if lerr != nil {
		return nil, nil, false, fmt.Errorf("locking the cache file: %w", lerr)
	}
	defer unlock()
	// Another process may have built it while this one waited.
	db, meta, err = openCached(ctx, path, key)
	if err == nil {
		c.reuses.Add(1)
		return db, meta, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		c.log.Info("localportal: cache file rebuilt", "file", path, "reason", err.Error())
	}
	start := time.Now()
	tmp := path + ".tmp-" + rand.Text()[:10]
	if err := c.build(ctx, tmp, key, cacheKiB, build); err != nil {
		os.Remove(tmp) //nolint:errcheck // best effort
		return nil, nil, false, err
	}
	final := path
	if err := os.Rename(tmp, path); err != nil {
		// Windows: the file is open in another process. Serve this copy.
		c.log.Warn("localportal: cache file not replaced; this process uses its own copy", "file", path, "err", err)
		final = tmp
		c.mu.Lock()
		c.orphan = append(c.orphan, tmp)
		c.mu.Unlock()
	} else {
		syncDir(c.dir)
	}
	db, meta, err = openCached(ctx, final, key)
	if err != nil {
		return nil, nil, false, fmt.Errorf("the cache file just built does not check: %w", err)
	}
	c.builds.Add(1)
	c.log.Info("localportal: cache file built", "file", final, "rows", meta.Rows, "took", time.Since(start).Round(time.Millisecond))
	return db, meta, true, nil
}

// build makes the file at tmp: the table by build, its indexes, the meta,
// synced to disk.
func (c *diskCache) build(ctx context.Context, tmp, key string, cacheKiB int, build func(ctx context.Context, b *builder) error) error {
	db, err := sql.Open("sqlite", sqliteURI(tmp, fmt.Sprintf(
		"_dqs=0&_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)&_pragma=locking_mode(EXCLUSIVE)&_pragma=cache_size(-%d)", cacheKiB)))
	if err != nil {
		return err
	}
	defer func() {
		db.Close()
		debug.FreeOSMemory() // a build's garbage is large; give it back now
	}()
	db.SetMaxOpenConns(1)
	b := &builder{db: db}
	start := time.Now()
	if err := build(ctx, b); err != nil {
		return err
	}
	if b.ds == nil {
		return errors.New("localportal: cache build made no table")
	}
	rowsDone := time.Now()
	if err := createIndexes(ctx, db, b.ds); err != nil {
		return fmt.Errorf("creating indexes: %w", err)
	}
	c.log.Debug("localportal: cache build", "rows_took", rowsDone.Sub(start).Round(time.Millisecond),
		"indexes_took", time.Since(rowsDone).Round(time.Millisecond))
	b.meta.Key, b.meta.Table, b.meta.Schema, b.meta.Built = key, b.ds.table, b.ds.schema, time.Now().UTC()
	raw, err := json.Marshal(b.meta)
	if err != nil {
		return err
	}
	for _, stmt := range []string{
		"PRAGMA analysis_limit = 1000",
		"ANALYZE",
		"CREATE TABLE " + cacheMetaTable + " (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO "+cacheMetaTable+" (name, value) VALUES ('meta', ?)", string(raw)); err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// syncDir makes a rename in dir durable where the system allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync() //nolint:errcheck // not supported everywhere (Windows)
		d.Close()
	}
}

// Indexes: the columns SoQL filters, groups and orders by most often, from
// the schema's types and a corpus of queries written for DataSF datasets
// (by GROUP BY and WHERE use): the first timestamp (WHERE date >= …, ORDER BY date, and the year
// and month of date_trunc), then text and number columns named like the
// corpus's most grouped keys, in that order of frequency.
var indexedNames = []string{
	"supervisor_district", "status", "neighborhood", "police_district", "district", "department",
	"category", "type", "agency", "disposition", "priority", "service_name", "year", "nhood",
	"station", "battalion", "zip", "city", "resolution",
}

// maxIndexes bounds the indexes per dataset (each costs build time and disk).
const maxIndexes = 5

// indexColumns picks the columns to index.
func indexColumns(ds *dataset) []*column {
	var out []*column
	for _, c := range ds.cols {
		if c.kind == soqlsqlite.KindFloating || c.kind == soqlsqlite.KindFixed {
			out = append(out, c)
			break
		}
	}
	taken := map[*column]bool{}
	for _, name := range indexedNames {
		for _, c := range ds.cols {
			if len(out) >= maxIndexes {
				return out
			}
			if taken[c] || !(c.kind == soqlsqlite.KindText || c.kind == soqlsqlite.KindNumber || c.kind == soqlsqlite.KindBool) {
				continue
			}
			if strings.Contains(strings.ToLower(c.FieldName), name) && !olderVersion(c, out) {
				out = append(out, c)
				taken[c] = true
			}
		}
	}
	return out
}

// olderVersion reports whether c is an older version of a column already
// chosen: its name is that column's and a year (supervisor_district_2012
// beside supervisor_district), which queries rarely filter by.
func olderVersion(c *column, chosen []*column) bool {
	name := strings.ToLower(c.FieldName)
	for _, o := range chosen {
		rest, ok := strings.CutPrefix(name, strings.ToLower(o.FieldName)+"_")
		if ok && len(rest) == 4 && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}

// createIndexes indexes ds's table in db (see indexColumns).
func createIndexes(ctx context.Context, db *sql.DB, ds *dataset) error {
	for i, c := range indexColumns(ds) {
		idx := soqlsqlite.QuoteIdent(fmt.Sprintf("%s_i%d", strings.Trim(ds.table, `"`), i))
		if _, err := db.ExecContext(ctx, fmt.Sprintf("CREATE INDEX %s ON %s (%s)", idx, ds.table, c.sqlName)); err != nil {
			return err
		}
	}
	return nil
}

// loadFileCached loads f through the cache: the file's database is reused
// when f (size, modification time), its view document and the catalog
// entry of its dataset are what it was built from, else built again. It
// fills rep as a load of the file does and says "reused" or "built".
func (s *Emulator) loadFileCached(ctx context.Context, f *dataFile, opts LoadOptions, rep *FileReport) (string, error) {
	abs, err := filepath.Abs(f.path)
	if err != nil {
		return "", err
	}
	stamp := func(path string) (any, error) {
		if path == "" {
			return nil, nil
		}
		st, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		return []int64{st.Size(), st.ModTime().UnixNano()}, nil
	}
	data, err := stamp(f.path)
	if err != nil {
		return "", err
	}
	view, err := stamp(f.view)
	if err != nil {
		return "", err
	}
	var entry *Schema
	s.mu.RLock()
	if e := s.catalog[f.id]; e != nil {
		entry = &e.schema
	}
	s.mu.RUnlock()
	stem, _ := splitExt(f.path)
	name := cacheFileName("data-"+f.id+"-"+stem, abs, f.view, f.id)
	key := cacheKey(abs, data, f.view, view, f.format, f.id, f.name, entry)
	db, meta, built, err := s.cache.materialize(ctx, name, key, fileBuildCacheKiB, func(ctx context.Context, b *builder) error {
		o := opts
		o.into = b
		return s.loadInto(ctx, f, o, rep)
	})
	if err != nil {
		return "", err
	}
	if opts.Strict && meta.BadValues > 0 {
		db.Close()
		return "", fmt.Errorf("%s (strict loading)", meta.Problems[0])
	}
	rep.Rows, rep.Name, rep.Columns = meta.Rows, meta.Schema.Name, meta.Schema.Columns
	rep.Inferred, rep.BadValues, rep.Problems = meta.Inferred, meta.BadValues, meta.Problems
	if err := s.publishCached(ctx, meta, db, name); err != nil {
		return "", err
	}
	if built {
		return "built", nil
	}
	return "reused", nil
}

// publishCached serves the dataset of the cache file name.
func (s *Emulator) publishCached(ctx context.Context, meta *cacheMeta, db *sql.DB, name string) error {
	ds, err := newDataset(meta.Schema, s.opts.Now())
	if err != nil {
		db.Close()
		return err
	}
	ds.table, ds.db = meta.Table, db
	ds.statsPath, ds.statsKey = filepath.Join(s.cache.dir, name+statsFileSuffix), meta.Key
	s.publish(ctx, ds)
	return nil
}

// addSampleCached registers a sample dataset that is built into the cache
// on its first query (or read from it, when an earlier start built it).
func (s *Emulator) addSampleCached(schema Schema, version string, n int, gen func(i int) map[string]any) error {
	if !isDatasetID(schema.ID) {
		return fmt.Errorf("localportal: dataset id %q is not a 4x4 identifier like \"abcd-1234\"", schema.ID)
	}
	s.addPending(schema, int64(n), func(ctx context.Context) error {
		// Rows at a few places stand for the generator's code: a change
		// that makes other rows makes another key even without a version
		// change.
		var probe []map[string]any
		if n > 0 {
			probe = []map[string]any{gen(0), gen(n / 2), gen(n - 1)}
		}
		key := cacheKey(version, schema, n, probe)
		name := cacheFileName("sample-"+schema.ID, schema.ID, n)
		db, meta, _, err := s.cache.materialize(ctx, name, key, sampleBuildCacheKiB, func(ctx context.Context, b *builder) error {
			i := 0
			_, _, err := s.install(ctx, schema, nil, func() (map[string]any, bool, error) {
				if i >= n {
					return nil, false, nil
				}
				i++
				return gen(i - 1), true, nil
			}, nil, b)
			return err
		})
		if err != nil {
			return fmt.Errorf("localportal: sample dataset %s: %w", schema.ID, err)
		}
		return s.publishCached(ctx, meta, db, name)
	})
	return nil
}

// CacheStats says how many cache files this portal built and how many it
// found valid and reused (StartOffline's portals; zero for others).
func (s *Emulator) CacheStats() (built, reused int64) {
	if s.cache == nil {
		return 0, 0
	}
	return s.cache.builds.Load(), s.cache.reuses.Load()
}
