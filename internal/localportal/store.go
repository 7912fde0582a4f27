package localportal

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/soqlsqlite"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// dataset is one loaded dataset: its schema and its SQLite table.
type dataset struct {
	schema    Schema
	table     string // quoted SQL table name, or a subquery (newEmptyDataset)
	cols      []*column
	byKey     map[string]*column // fieldKey(fieldName) -> column
	createdAt time.Time
	// db holds the table when it is not the portal's in-memory database:
	// a cache file of its own (see cache.go), closed when the dataset goes.
	db *sql.DB
	// statsPath and statsKey, for a cache file's dataset: where its
	// column statistics are kept, and the file's key they are valid for
	// (colstats.go).
	statsPath, statsKey string
}

// column is a dataset column with its storage details.
type column struct {
	socrata.Column
	kind    soqlsqlite.Kind
	sqlName string // quoted SQL column name
}

func newDataset(schema Schema, now time.Time) (*dataset, error) {
	if !isDatasetID(schema.ID) {
		return nil, fmt.Errorf("localportal: dataset id %q is not a 4x4 identifier like \"abcd-1234\"", schema.ID)
	}
	ds := &dataset{
		table:     soqlsqlite.QuoteIdent("ds_" + strings.ReplaceAll(schema.ID, "-", "_")),
		byKey:     map[string]*column{},
		createdAt: now,
	}
	var kept []socrata.Column
	for _, c := range schema.Columns {
		if c.FieldName == "" {
			c.FieldName = fieldNameFor(c.Name)
		}
		if c.FieldName == "" || isSystemField(c.FieldName) || strings.EqualFold(c.DataType, "meta_data") {
			continue
		}
		if c.DataType == "" {
			c.DataType = "text"
		}
		if c.Name == "" {
			c.Name = c.FieldName
		}
		if _, dup := ds.byKey[fieldKey(c.FieldName)]; dup {
			return nil, fmt.Errorf("localportal: dataset %s: duplicate column %q", schema.ID, c.FieldName)
		}
		col := &column{Column: c, kind: soqlsqlite.KindOf(c.DataType), sqlName: soqlsqlite.QuoteIdent(c.FieldName)}
		ds.cols = append(ds.cols, col)
		ds.byKey[fieldKey(c.FieldName)] = col
		kept = append(kept, c)
	}
	schema.Columns = kept
	if schema.UpdatedAt.IsZero() {
		schema.UpdatedAt = now.UTC().Truncate(time.Second)
	}
	ds.schema = schema
	return ds, nil
}

// addColumn appends a column found in the data but missing from the schema.
func (ds *dataset) addColumn(c socrata.Column) *column {
	col := &column{Column: c, kind: soqlsqlite.KindOf(c.DataType), sqlName: soqlsqlite.QuoteIdent(c.FieldName)}
	ds.cols = append(ds.cols, col)
	ds.byKey[fieldKey(c.FieldName)] = col
	ds.schema.Columns = append(ds.schema.Columns, c)
	return col
}

// newEmptyDataset returns schema's dataset without rows and without a
// table: its table is a SELECT of its columns that yields no row. Reading
// it changes no schema, where making an empty table would wait for every
// running query (changeSchema).
func newEmptyDataset(schema Schema, now time.Time) (*dataset, error) {
	ds, err := newDataset(schema, now)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "(SELECT CAST(NULL AS INTEGER) AS %s", soqlsqlite.RowIDColumn)
	for _, c := range ds.cols {
		fmt.Fprintf(&b, ", CAST(NULL AS %s) AS %s", c.sqlType(), c.sqlName)
	}
	b.WriteString(" WHERE 0)")
	ds.table = b.String()
	return ds, nil
}

func (ds *dataset) createSQL() string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (%s INTEGER PRIMARY KEY", ds.table, soqlsqlite.RowIDColumn)
	for _, c := range ds.cols {
		fmt.Fprintf(&b, ", %s %s", c.sqlName, c.sqlType())
	}
	b.WriteString(")")
	return b.String()
}

// sqlType is the SQLite type the column is declared with.
func (c *column) sqlType() string {
	switch c.kind {
	case soqlsqlite.KindNumber:
		return "NUMERIC"
	case soqlsqlite.KindBool:
		return "INTEGER"
	}
	return "TEXT"
}

var dbSeq atomic.Int64

// memDBCacheKiB is the page cache of each connection to the in-memory
// database, in KiB (SQLite's negative cache_size). Its pages are in memory
// already (the memdb VFS copies a page from its buffer on a miss), so a
// small cache costs little. It must stay small for another reason:
// modernc.org/sqlite is built with SQLITE_ENABLE_MEMORY_MANAGEMENT, under
// which every connection of the process shares one page cache LRU, bounded
// by the sum of the open connections' cache_size. At 64 MiB, the pinned
// connection let the cache files' readers (readCacheKiB each) keep every
// page they read: two 250,000-row exports grew SQLite's memory by 140 MiB
// (issue 52, item 7).
const memDBCacheKiB = 2048

// openDB opens a private in-memory SQLite database shared by a small pool of
// connections (the memdb VFS), so concurrent requests can read at once.
func openDB() (*sql.DB, *sql.Conn, error) {
	if err := soqlsqlite.Register(); err != nil {
		return nil, nil, fmt.Errorf("localportal: registering SQL functions: %w", err)
	}
	name := fmt.Sprintf("file:/localportal-%d-%d?vfs=memdb&_dqs=0&_pragma=busy_timeout(20000)&_pragma=cache_size(-%d)",
		time.Now().UnixNano(), dbSeq.Add(1), memDBCacheKiB)
	db, err := sql.Open("sqlite", name)
	if err != nil {
		return nil, nil, fmt.Errorf("localportal: opening SQLite: %w", err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	// The memdb database lives while one connection is open: pin one.
	keep, err := db.Conn(context.Background())
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("localportal: opening SQLite: %w", err)
	}
	return db, keep, nil
}

// badValue decides what happens to a value that cannot be read as its
// column's type: nil stores a null instead (the callee reports it), an
// error stops the load.
type badValue func(row int64, col *column, v any, err error) error

// insertRows inserts rows produced by next into ds's table inside one
// transaction, in multi-row batches. next returns ok=false at the end. A
// value of the wrong type goes to bad (nil bad: it stops the load). Rows
// are read and converted (fillBatches) in a goroutine of their own while
// SQLite inserts the batch before: the two halves of a load take about as
// long as each other.
func insertRows(ctx context.Context, db *sql.DB, ds *dataset, next func() (row map[string]any, ok bool, err error), bad badValue) (int64, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	stmts := newInsertStmts(tx, ds)
	batches := make(chan filledBatch, 2)
	free := make(chan []any, 3)
	for range 3 {
		free <- make([]any, 0, stmts.batch*(len(ds.cols)+1))
	}
	stop := make(chan struct{})
	defer close(stop)
	go fillBatches(ds, next, bad, stmts.batch, free, batches, stop)
	var count int64
	for f := range batches {
		if f.rows > 0 {
			st, err := stmts.prepare(ctx, f.rows)
			if err != nil {
				return count, err
			}
			if _, err := st.ExecContext(ctx, f.args...); err != nil {
				return count, err
			}
			count += int64(f.rows)
		}
		if f.err != nil {
			return count, f.err
		}
		clear(f.args)
		free <- f.args
	}
	return count, tx.Commit()
}

// insertStmts are the INSERT statements of one load: one per number of
// rows, each inserting that many rows, prepared on first use.
type insertStmts struct {
	tx      *sql.Tx
	table   string
	columns string // the column list, row id first
	row     string // one row's placeholders
	batch   int    // rows per statement, within SQLite's variable limit
	byRows  map[int]*sql.Stmt
}

// maxInsertVars bounds the values of one INSERT (SQLite allows 32,766).
const maxInsertVars = 30000

func newInsertStmts(tx *sql.Tx, ds *dataset) *insertStmts {
	ncols := len(ds.cols)
	batch := 500
	if ncols > 0 && batch*(ncols+1) > maxInsertVars {
		batch = maxInsertVars / (ncols + 1)
	}
	var cols strings.Builder
	cols.WriteString(soqlsqlite.RowIDColumn)
	for _, c := range ds.cols {
		cols.WriteString(", " + c.sqlName)
	}
	return &insertStmts{tx: tx, table: ds.table, columns: cols.String(), batch: batch, byRows: map[int]*sql.Stmt{},
		row: "(" + strings.TrimSuffix(strings.Repeat("?,", ncols+1), ",") + ")"}
}

// prepare returns the statement that inserts n rows.
func (s *insertStmts) prepare(ctx context.Context, n int) (*sql.Stmt, error) {
	if st, ok := s.byRows[n]; ok {
		return st, nil
	}
	q := fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", s.table, s.columns, strings.TrimSuffix(strings.Repeat(s.row+",", n), ","))
	st, err := s.tx.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	s.byRows[n] = st
	return st, nil
}

// filledBatch is a batch of converted rows (their values in args, row id
// first), or the error that ended the rows after them.
type filledBatch struct {
	args []any
	rows int
	err  error
}

// fillBatches reads rows from next, converts them (appendRow) into the
// buffers it takes from free, and sends them in batches of up to batch
// rows; the last batch sent carries the error that ended the rows, if any.
// It closes batches when done, and returns when stop is closed.
func fillBatches(ds *dataset, next func() (map[string]any, bool, error), bad badValue, batch int, free chan []any, batches chan<- filledBatch, stop <-chan struct{}) {
	defer close(batches)
	send := func(f filledBatch) bool {
		select {
		case batches <- f:
			return true
		case <-stop:
			return false
		}
	}
	var count int64
	for {
		var args []any
		select {
		case args = <-free:
		case <-stop:
			return
		}
		args = args[:0]
		pending := 0
		for pending < batch {
			row, ok, err := next()
			if err != nil {
				send(filledBatch{args: args, rows: pending, err: err})
				return
			}
			if !ok {
				send(filledBatch{args: args, rows: pending})
				return
			}
			count++
			if args, err = appendRow(args, count, row, ds, bad); err != nil {
				send(filledBatch{err: err})
				return
			}
			pending++
		}
		if !send(filledBatch{args: args, rows: pending}) {
			return
		}
	}
}

// appendRow appends row number n's values, converted to their columns'
// storage, to args. A value that cannot be converted goes to bad, and is
// stored as null when bad accepts it (nil bad: it stops the load).
func appendRow(args []any, n int64, row map[string]any, ds *dataset, bad badValue) ([]any, error) {
	args = append(args, n)
	for _, c := range ds.cols {
		v, found := row[c.FieldName]
		if !found {
			args = append(args, nil)
			continue
		}
		sv, err := toStorage(c.kind, c.DataType, v)
		if err != nil {
			if bad == nil {
				return args, fmt.Errorf("row %d, column %s: %w", n, c.FieldName, err)
			}
			if err := bad(n, c, v, err); err != nil {
				return args, err
			}
			sv = nil
		}
		args = append(args, sv)
	}
	return args, nil
}

// toStorage converts a value as it appears in Socrata JSON, rows.json, CSV or
// a generator into the value stored in SQLite for a column of kind k.
func toStorage(k soqlsqlite.Kind, dataType string, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if s, ok := v.(string); ok && s == "" && k != soqlsqlite.KindText {
		return nil, nil
	}
	switch k {
	case soqlsqlite.KindNumber:
		switch x := v.(type) {
		case string:
			if n, ok := parseNumberText(x); ok {
				return n, nil
			}
			return nil, &valueError{value: x, dataType: dataType}
		case json.Number:
			if n, ok := parseNumberText(x.String()); ok {
				return n, nil
			}
			return nil, &valueError{value: x.String(), dataType: dataType}
		case float64, float32, int, int64, int32, uint32, uint64:
			return x, nil
		case bool:
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		}
	case soqlsqlite.KindBool:
		switch x := v.(type) {
		case bool:
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		case string:
			b, ok := parseBoolText(x)
			if !ok {
				return nil, &valueError{value: x, dataType: dataType}
			}
			if b {
				return int64(1), nil
			}
			return int64(0), nil
		case float64:
			if x != 0 {
				return int64(1), nil
			}
			return int64(0), nil
		}
	case soqlsqlite.KindFloating, soqlsqlite.KindFixed:
		switch x := v.(type) {
		case string:
			if ts, ok := soqlsqlite.NormalizeTimestamp(x, k == soqlsqlite.KindFixed); ok {
				return ts, nil
			}
			return nil, &valueError{value: x, dataType: dataType}
		case time.Time:
			return soqlsqlite.FormatTimestamp(x, k == soqlsqlite.KindFixed), nil
		case float64: // epoch seconds, as rows.json meta fields use
			return soqlsqlite.FormatTimestamp(time.Unix(int64(x), 0).UTC(), k == soqlsqlite.KindFixed), nil
		}
	case soqlsqlite.KindPoint:
		return pointJSON(v)
	case soqlsqlite.KindLocation:
		return locationJSON(v)
	case soqlsqlite.KindJSON:
		if arr, ok := v.([]any); ok && strings.EqualFold(dataType, "url") {
			m := map[string]any{}
			if len(arr) > 0 && arr[0] != nil {
				m["url"] = arr[0]
			}
			if len(arr) > 1 && arr[1] != nil {
				m["description"] = arr[1]
			}
			if len(m) == 0 {
				return nil, nil
			}
			v = m
		}
		if s, ok := v.(string); ok {
			if strings.EqualFold(dataType, "url") {
				v = parseURLText(s)
			} else if json.Valid([]byte(s)) && strings.HasPrefix(strings.TrimSpace(s), "{") {
				return s, nil
			}
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return string(b), nil
	default: // text
		switch x := v.(type) {
		case string:
			return x, nil
		case map[string]any, []any:
			b, err := json.Marshal(x)
			if err != nil {
				return nil, err
			}
			return string(b), nil
		default:
			return soqlsqlite.FormatScalar(x), nil
		}
	}
	return nil, fmt.Errorf("cannot store %T as %s", v, dataType)
}

func pointJSON(v any) (any, error) {
	var lon, lat float64
	switch x := v.(type) {
	case map[string]any:
		if c, ok := x["coordinates"].([]any); ok && len(c) == 2 {
			lo, ok1 := soqlsqlite.ToFloat(c[0])
			la, ok2 := soqlsqlite.ToFloat(c[1])
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("bad point coordinates %v", c)
			}
			lon, lat = lo, la
		} else {
			la, ok1 := soqlsqlite.ToFloat(x["latitude"])
			lo, ok2 := soqlsqlite.ToFloat(x["longitude"])
			if !ok1 || !ok2 {
				return nil, nil
			}
			lon, lat = lo, la
		}
	case string:
		lo, la, ok := parsePointText(x)
		if !ok {
			return nil, &valueError{value: x, dataType: "point (POINT (lon lat), (lat, lon) or GeoJSON)"}
		}
		lon, lat = lo, la
	case [2]float64: // {lon, lat} from a generator
		lon, lat = x[0], x[1]
	default:
		return nil, fmt.Errorf("cannot store %T as a point", v)
	}
	return fmt.Sprintf(`{"type":"Point","coordinates":[%s,%s]}`, soqlsqlite.FormatFloat(lon), soqlsqlite.FormatFloat(lat)), nil
}

func locationJSON(v any) (any, error) {
	m := map[string]any{}
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if val != nil {
				m[k] = val
			}
		}
	case []any: // rows.json: [human_address, latitude, longitude, machine_address, needs_recoding]
		if len(x) > 0 && x[0] != nil {
			m["human_address"] = x[0]
		}
		if len(x) > 2 && x[1] != nil && x[2] != nil {
			m["latitude"] = fmt.Sprint(x[1])
			m["longitude"] = fmt.Sprint(x[2])
		}
	case string:
		if t := strings.TrimSpace(x); strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
			return t, nil
		}
		m = parseLocationText(x)
	default:
		return nil, fmt.Errorf("cannot store %T as a location", v)
	}
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}
