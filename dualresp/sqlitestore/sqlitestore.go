// Package sqlitestore is a dualresp.Store that keeps records in one SQLite
// file, so that resources survive a restart of the process.
//
// It uses the pure-Go driver modernc.org/sqlite (no cgo). The database runs
// in WAL mode with synchronous=NORMAL and a busy timeout, so readers never
// block the writer and a crash loses at most the last few commits, never the
// integrity of the file. The schema is created when missing and carries a
// version (PRAGMA user_version); a file written by a newer schema is refused.
//
// A record is one row: the scalar fields as columns, the query, columns,
// sample and metadata as JSON text. Times are stored as Unix nanoseconds in
// UTC; a pinned record (or one without an expiry) has a NULL expires_at, and
// DeleteExpired runs on an index of expires_at.
//
// A Store is safe for concurrent use by many goroutines. Writes go through a
// single connection, reads through a small pool. Several processes may open
// the same file (SQLite locks it), though one process per file is the
// intended use; a store shared by several server instances is what the
// redisstore package is for.
package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// SchemaVersion is the version of the database schema this package writes,
// kept in PRAGMA user_version.
const SchemaVersion = 1

// DefaultBusyTimeout is how long a statement waits for a lock held by
// another connection when Options.BusyTimeout is zero.
const DefaultBusyTimeout = 5 * time.Second

// DefaultMaxReadConns is the size of the read pool when
// Options.MaxReadConns is zero.
const DefaultMaxReadConns = 4

// Options configures Open. The zero value means the defaults.
type Options struct {
	// BusyTimeout is how long a statement waits for a lock held by another
	// connection (or process) before failing. Zero means DefaultBusyTimeout.
	BusyTimeout time.Duration
	// MaxReadConns bounds the connections used for reads. Zero means
	// DefaultMaxReadConns. Writes always use one connection.
	MaxReadConns int
	// MaxRecords bounds the records of the file: saving a new record past
	// it removes the unpinned records read the longest ago (expired ones
	// first). Zero or negative: no bound.
	MaxRecords int
}

// Store is a dualresp.Store backed by a SQLite file. Create one with Open.
type Store struct {
	path  string
	write *sql.DB // one connection: SQLite has a single writer anyway
	read  *sql.DB
	// maxRecords bounds the records (Options.MaxRecords); <= 0: none.
	maxRecords int

	keyOnce sync.Once // reads or makes key
	key     []byte
	keyErr  error

	closeOnce sync.Once
	closeErr  error
}

var (
	_ dualresp.Store        = (*Store)(nil)
	_ dualresp.PinCounter   = (*Store)(nil)
	_ dualresp.OwnerKeyer   = (*Store)(nil)
	_ dualresp.OwnerRenamer = (*Store)(nil)
)

// Open opens the SQLite database at path, creating the file and the schema
// when missing. The directory must exist. Close the Store when done.
//
// The file holds every stored query and its owner: Open creates it, and
// its WAL and shared-memory files, readable by their owner only (0600),
// and makes an existing one so (SQLite would make them as the umask says,
// 0644 as a rule, and makes its WAL files with the database's mode).
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	if err := privateFiles(path); err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	busy := opts.BusyTimeout
	if busy == 0 {
		busy = DefaultBusyTimeout
	}
	if busy < 0 {
		return nil, fmt.Errorf("sqlitestore: Options.BusyTimeout is negative (%v)", busy)
	}
	reads := opts.MaxReadConns
	if reads == 0 {
		reads = DefaultMaxReadConns
	}
	if reads < 0 {
		return nil, fmt.Errorf("sqlitestore: Options.MaxReadConns is negative (%d)", reads)
	}
	dsn := path + "?" + strings.Join([]string{
		fmt.Sprintf("_pragma=busy_timeout(%d)", busy.Milliseconds()),
		"_pragma=journal_mode(WAL)",
		"_pragma=synchronous(NORMAL)",
		"_txlock=immediate",
	}, "&")

	write, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	if err := migrate(ctx, write); err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	read, err := sql.Open("sqlite", dsn)
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	read.SetMaxOpenConns(reads)
	read.SetMaxIdleConns(reads)
	if err := read.PingContext(ctx); err != nil {
		write.Close()
		read.Close()
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	return &Store{path: path, write: write, read: read, maxRecords: opts.MaxRecords}, nil
}

func checkPath(path string) error {
	switch {
	case path == "":
		return errors.New("sqlitestore: empty database path")
	case path == ":memory:" || strings.HasPrefix(path, "file:"):
		return fmt.Errorf("sqlitestore: database path %q: give a file path (for an in-memory store use dualresp.MemoryStore)", path)
	case strings.ContainsAny(path, "?#"):
		return fmt.Errorf("sqlitestore: database path %q contains '?' or '#', which are not supported", path)
	}
	return nil
}

// schema creates version 1. Times are Unix nanoseconds; NULL stands for the
// zero time.
const schema = `
CREATE TABLE records (
	id           TEXT    PRIMARY KEY,
	name         TEXT    NOT NULL,
	description  TEXT    NOT NULL,
	query        TEXT    NOT NULL, -- JSON dualresp.Query
	columns      TEXT,             -- JSON []dualresp.Column
	total_count  INTEGER NOT NULL,
	sample       TEXT,             -- JSON array of row objects
	metadata     TEXT,             -- JSON object
	owner        TEXT    NOT NULL,
	created_at   INTEGER,
	last_access  INTEGER,
	expires_at   INTEGER,          -- NULL when pinned or without expiry
	pinned       INTEGER NOT NULL CHECK (pinned IN (0, 1)),
	access_count INTEGER NOT NULL
) STRICT;
CREATE INDEX records_expires_at ON records (expires_at) WHERE expires_at IS NOT NULL;
`

// migrate creates the schema in an empty database and checks the version of
// an existing one.
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock): one migrator at a time
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	switch {
	case version == SchemaVersion:
		return nil
	case version > SchemaVersion:
		return fmt.Errorf("schema version %d is newer than this program supports (%d)", version, SchemaVersion)
	case version != 0:
		return fmt.Errorf("unknown schema version %d", version)
	}
	var tables int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE name = 'records'").Scan(&tables); err != nil {
		return fmt.Errorf("inspect schema: %w", err)
	}
	if tables != 0 {
		return errors.New("the file has a records table but no schema version: not a sqlitestore database")
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
		return fmt.Errorf("set schema version: %w", err)
	}
	return tx.Commit()
}

// Path returns the database file's path as given to Open.
func (s *Store) Path() string { return s.path }

const columns = `id, name, description, query, columns, total_count, sample, metadata, owner,
	created_at, last_access, expires_at, pinned, access_count`

// Save implements dualresp.Store. A pinned record is stored without expiry.
func (s *Store) Save(ctx context.Context, r *dualresp.Record) error {
	if r == nil || r.ID == "" {
		return errors.New("sqlitestore: save: record without an id")
	}
	row, err := encode(r)
	if err != nil {
		return fmt.Errorf("sqlitestore: save %q: %w", r.ID, err)
	}
	_, err = s.write.ExecContext(ctx, `INSERT INTO records (`+columns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
			name = excluded.name, description = excluded.description,
			query = excluded.query, columns = excluded.columns,
			total_count = excluded.total_count, sample = excluded.sample,
			metadata = excluded.metadata, owner = excluded.owner,
			created_at = excluded.created_at, last_access = excluded.last_access,
			expires_at = excluded.expires_at, pinned = excluded.pinned,
			access_count = excluded.access_count`,
		row.args()...)
	if err != nil {
		return s.fail("save", r.ID, err)
	}
	if s.maxRecords > 0 {
		// Over the bound: the unpinned records read the longest ago go,
		// expired ones first (their expires_at is older).
		_, err = s.write.ExecContext(ctx, `DELETE FROM records WHERE id IN (
			SELECT id FROM records WHERE pinned = 0 AND id != ?1
			ORDER BY expires_at IS NULL, expires_at, last_access
			LIMIT max(0, (SELECT count(*) FROM records) - ?2))`, r.ID, s.maxRecords)
		if err != nil {
			return s.fail("save", r.ID, err)
		}
	}
	return nil
}

// Get implements dualresp.Store.
func (s *Store) Get(ctx context.Context, id string) (*dualresp.Record, error) {
	r, err := scan(s.read.QueryRowContext(ctx, `SELECT `+columns+` FROM records WHERE id = ?`, id))
	if err != nil {
		return nil, s.fail("get", id, err)
	}
	return r, nil
}

// Touch implements dualresp.Store with a single UPDATE … RETURNING, so
// concurrent touches never lose an access.
func (s *Store) Touch(ctx context.Context, id string, now time.Time, extend time.Duration) (*dualresp.Record, error) {
	nowNS, err := unixNano(now)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: touch %q: now: %w", id, err)
	}
	var until sql.NullInt64 // NULL: do not extend
	if extend > 0 {
		ns, err := unixNano(now.Add(extend))
		if err != nil {
			return nil, fmt.Errorf("sqlitestore: touch %q: now+extend: %w", id, err)
		}
		until = sql.NullInt64{Int64: ns, Valid: true}
	}
	r, err := scan(s.write.QueryRowContext(ctx, `UPDATE records SET
			access_count = access_count + 1,
			last_access = ?1,
			expires_at = CASE
				WHEN ?2 IS NOT NULL AND pinned = 0 AND (expires_at IS NULL OR expires_at < ?2) THEN ?2
				ELSE expires_at END
		WHERE id = ?3
		RETURNING `+columns, nowNS, until, id))
	if err != nil {
		return nil, s.fail("touch", id, err)
	}
	return r, nil
}

// Pin implements dualresp.Store.
func (s *Store) Pin(ctx context.Context, id string) (*dualresp.Record, error) {
	r, err := scan(s.write.QueryRowContext(ctx,
		`UPDATE records SET pinned = 1, expires_at = NULL WHERE id = ? RETURNING `+columns, id))
	if err != nil {
		return nil, s.fail("pin", id, err)
	}
	return r, nil
}

// CountPinned implements dualresp.PinCounter. Pinned records are few (the
// Server bounds them per owner), so a scan of the table is cheap enough.
func (s *Store) CountPinned(ctx context.Context, owner string) (int, error) {
	var n int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM records WHERE pinned = 1 AND (owner = ?1 OR substr(owner, 1, length(?1) + 1) = ?1 || '/')`,
		dualresp.OwnerIdentity(owner)).Scan(&n); err != nil {
		return 0, s.fail("count pinned", "", err)
	}
	return n, nil
}

// RenameOwners implements dualresp.OwnerRenamer, in one transaction. The
// new identities of the renames it made are kept in the table
// renamed_owners (made by the first call, so that a file of schema
// version 1 stays one, which an earlier version of this package opens
// still), and the renames to them are not made again: the records table
// is read only for a new rename.
func (s *Store) RenameOwners(ctx context.Context, renames map[string]string) (int, error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, s.fail("rename owners", "", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS renamed_owners (identity TEXT PRIMARY KEY) STRICT`); err != nil {
		return 0, s.fail("rename owners", "", err)
	}
	n := int64(0)
	for from, to := range renames {
		res, err := tx.ExecContext(ctx, `INSERT INTO renamed_owners (identity) VALUES (?) ON CONFLICT DO NOTHING`, to)
		if err != nil {
			return 0, s.fail("rename owners", "", err)
		}
		if added, _ := res.RowsAffected(); added == 0 {
			continue // made before
		}
		res, err = tx.ExecContext(ctx, `UPDATE records SET owner = ?2 || substr(owner, length(?1) + 1)
			WHERE owner = ?1 OR substr(owner, 1, length(?1) + 1) = ?1 || '/'`, from, to)
		if err != nil {
			return 0, s.fail("rename owners", "", err)
		}
		k, _ := res.RowsAffected()
		n += k
	}
	if err := tx.Commit(); err != nil {
		return 0, s.fail("rename owners", "", err)
	}
	return int(n), nil
}

// OwnerKey implements dualresp.OwnerKeyer: the key is kept in a file
// beside the database, PATH.owner-key, readable by its owner only (0600;
// a looser one is made so), made at the first call. A copy of the
// database alone (a backup) then cannot tell whose tokens own its
// records.
func (s *Store) OwnerKey(ctx context.Context) ([]byte, error) {
	s.keyOnce.Do(func() { s.key, s.keyErr = ownerKey(s.path + ".owner-key") })
	if s.keyErr != nil {
		return nil, fmt.Errorf("sqlitestore: owner key: %w", s.keyErr)
	}
	return s.key, nil
}

// ownerKey reads the key at path, or makes it there. The key is written
// whole to a file of its own first and then linked to path, which fails
// if path exists: a process starting at the same time reads either no
// file or the whole key, never one being written.
func ownerKey(path string) ([]byte, error) {
	for range 2 {
		b, err := os.ReadFile(path)
		if key := []byte(strings.TrimSpace(string(b))); err == nil && len(key) >= 32 {
			if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
				if err := os.Chmod(path, 0o600); err != nil {
					return nil, fmt.Errorf("make %s readable by its owner only: %w", path, err)
				}
			}
			return key, nil
		} else if err == nil {
			return nil, fmt.Errorf("%s is empty or too short: delete it to make a new key (the results of tokens then stay unread until they expire)", path)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*")
		if err != nil {
			return nil, err
		}
		key := dualresp.NewOwnerKey()
		_, err = f.Write(append(key, '\n'))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Link(f.Name(), path)
		}
		_ = os.Remove(f.Name())
		switch {
		case errors.Is(err, os.ErrExist):
			continue // another process made it meanwhile: read it
		case err != nil:
			return nil, err
		}
		return key, nil
	}
	return nil, fmt.Errorf("%s could not be read or made", path)
}

// Delete implements dualresp.Store.
func (s *Store) Delete(ctx context.Context, id string) error {
	res, err := s.write.ExecContext(ctx, `DELETE FROM records WHERE id = ?`, id)
	if err != nil {
		return s.fail("delete", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.fail("delete", id, err)
	}
	if n == 0 {
		return s.fail("delete", id, sql.ErrNoRows)
	}
	return nil
}

// DeleteExpired implements dualresp.Store. It uses the expires_at index.
func (s *Store) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	nowNS, err := unixNano(now)
	if err != nil {
		return 0, fmt.Errorf("sqlitestore: delete expired: now: %w", err)
	}
	res, err := s.write.ExecContext(ctx,
		`DELETE FROM records WHERE expires_at IS NOT NULL AND expires_at <= ? AND pinned = 0`, nowNS)
	if err != nil {
		return 0, s.fail("delete expired", "", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, s.fail("delete expired", "", err)
	}
	return int(n), nil
}

// DeleteUnusedPinned implements dualresp.UnusedPinDeleter.
func (s *Store) DeleteUnusedPinned(ctx context.Context, before time.Time) (int, error) {
	beforeNS, err := unixNano(before)
	if err != nil {
		return 0, fmt.Errorf("sqlitestore: delete unused pinned: before: %w", err)
	}
	res, err := s.write.ExecContext(ctx,
		`DELETE FROM records WHERE pinned = 1 AND (last_access IS NULL OR last_access < ?)`, beforeNS)
	if err != nil {
		return 0, s.fail("delete unused pinned", "", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, s.fail("delete unused pinned", "", err)
	}
	return int(n), nil
}

// Close implements dualresp.Store: it closes the database (checkpointing the
// WAL). Calling it again returns the first call's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closeErr = errors.Join(s.read.Close(), s.write.Close())
		if s.closeErr != nil {
			s.closeErr = fmt.Errorf("sqlitestore: close %s: %w", s.path, s.closeErr)
		}
	})
	return s.closeErr
}

// fail turns a database error into the error a Store method returns:
// sql.ErrNoRows becomes dualresp.ErrNotFound, use after Close
// dualresp.ErrClosed.
func (s *Store) fail(op, id string, err error) error {
	where := op
	if id != "" {
		where = fmt.Sprintf("%s %q", op, id)
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("sqlitestore: %s: %w", where, dualresp.ErrNotFound)
	case errors.Is(err, sql.ErrConnDone) || (err != nil && strings.Contains(err.Error(), "sql: database is closed")):
		return fmt.Errorf("sqlitestore: %s: %w", where, dualresp.ErrClosed)
	}
	return fmt.Errorf("sqlitestore: %s: %w", where, err)
}

// row is a record in its column form.
type row struct {
	id, name, description, owner string
	query                        string
	columns, sample, metadata    sql.NullString
	totalCount, accessCount      int64
	createdAt, lastAccess        sql.NullInt64
	expiresAt                    sql.NullInt64
	pinned                       bool
}

func (w *row) args() []any {
	return []any{w.id, w.name, w.description, w.query, w.columns, w.totalCount, w.sample,
		w.metadata, w.owner, w.createdAt, w.lastAccess, w.expiresAt, w.pinned, w.accessCount}
}

func encode(r *dualresp.Record) (*row, error) {
	w := &row{
		id: r.ID, name: r.Name, description: r.Description, owner: r.Owner,
		totalCount: r.TotalCount, accessCount: r.AccessCount, pinned: r.Pinned,
	}
	q, err := json.Marshal(r.Query)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	w.query = string(q)
	if w.columns, err = jsonColumn(r.Columns, len(r.Columns) == 0); err != nil {
		return nil, fmt.Errorf("columns: %w", err)
	}
	if w.sample, err = jsonColumn(r.Sample, len(r.Sample) == 0); err != nil {
		return nil, fmt.Errorf("sample: %w", err)
	}
	if w.metadata, err = jsonColumn(r.Metadata, len(r.Metadata) == 0); err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	if w.createdAt, err = nullTime(r.CreatedAt); err != nil {
		return nil, fmt.Errorf("created_at: %w", err)
	}
	if w.lastAccess, err = nullTime(r.LastAccess); err != nil {
		return nil, fmt.Errorf("last_access: %w", err)
	}
	if !r.Pinned {
		if w.expiresAt, err = nullTime(r.ExpiresAt); err != nil {
			return nil, fmt.Errorf("expires_at: %w", err)
		}
	}
	return w, nil
}

func jsonColumn(v any, empty bool) (sql.NullString, error) {
	if empty {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scan(sc scanner) (*dualresp.Record, error) {
	var w row
	err := sc.Scan(&w.id, &w.name, &w.description, &w.query, &w.columns, &w.totalCount, &w.sample,
		&w.metadata, &w.owner, &w.createdAt, &w.lastAccess, &w.expiresAt, &w.pinned, &w.accessCount)
	if err != nil {
		return nil, err
	}
	r := &dualresp.Record{
		ID: w.id, Name: w.name, Description: w.description, Owner: w.owner,
		TotalCount: w.totalCount, AccessCount: w.accessCount, Pinned: w.pinned,
		CreatedAt: fromNull(w.createdAt), LastAccess: fromNull(w.lastAccess), ExpiresAt: fromNull(w.expiresAt),
	}
	if err := json.Unmarshal([]byte(w.query), &r.Query); err != nil {
		return nil, fmt.Errorf("decode query of %q: %w", w.id, err)
	}
	for _, c := range []struct {
		name string
		src  sql.NullString
		dst  any
	}{
		{"columns", w.columns, &r.Columns},
		{"sample", w.sample, &r.Sample},
		{"metadata", w.metadata, &r.Metadata},
	} {
		if c.src.Valid {
			if err := json.Unmarshal([]byte(c.src.String), c.dst); err != nil {
				return nil, fmt.Errorf("decode %s of %q: %w", c.name, w.id, err)
			}
		}
	}
	return r, nil
}

// The range of times stored exactly as Unix nanoseconds in an int64.
var (
	minTime = time.Unix(0, -1<<63)
	maxTime = time.Unix(0, 1<<63-1)
)

func unixNano(t time.Time) (int64, error) {
	if t.Before(minTime) || t.After(maxTime) {
		return 0, fmt.Errorf("time %s is outside the storable range (%d to %d)", t.Format(time.RFC3339), minTime.Year(), maxTime.Year())
	}
	return t.UnixNano(), nil
}

func nullTime(t time.Time) (sql.NullInt64, error) {
	if t.IsZero() {
		return sql.NullInt64{}, nil
	}
	ns, err := unixNano(t)
	if err != nil {
		return sql.NullInt64{}, err
	}
	return sql.NullInt64{Int64: ns, Valid: true}, nil
}

func fromNull(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.Unix(0, v.Int64).UTC()
}

// privateFiles creates the database file at path when missing, and makes it
// and its WAL and shared-memory files, those that exist, 0600.
func privateFiles(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("unable to open database file: %w", err) // SQLite's words for it
	}
	_ = f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, 0o600); err != nil {
				return fmt.Errorf("make %s readable by its owner only: %w", p, err)
			}
		}
	}
	return nil
}
