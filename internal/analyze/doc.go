// Package analyze runs read-only SQL over stored dualresp results: the
// engine of an analyze_results tool. Each result named in a Request (by
// any reference dualresp.ResourceID reads) is materialized into a table of
// a fresh in-memory SQLite database (modernc.org/sqlite), so a model can
// join results across datasets, which SoQL cannot do. Rows are read with
// dualresp.Server.Rows: through the Executor of each record's query kind
// (SoQL, spilled tool results, …), streamed when it can stream, else page
// by page; the Analyzer needs only the dualresp Server.
//
// # One database per Run
//
// Every Run loads its tables into a new in-memory database and drops it at
// the end: no state is shared between calls or sessions, and a result is
// always read as its Executor serves it now. The cost is reloading the rows
// each call (a few hundred milliseconds per 100,000 rows plus the
// executor's time).
//
// # Tables
//
// A table's columns are the record's Columns (when the record lists none,
// the keys of its first page). Columns have no declared type, so each value
// keeps the storage class of its JSON value: strings that are plain decimal
// numbers ("42", "-3.5", not "0042" or "1e5x") become INTEGER or REAL (so
// sums and comparisons work on Socrata's string-encoded numbers), other
// strings TEXT, true/false 1/0, null NULL, and arrays and objects their
// JSON text (usable with SQLite's json functions). Column names that differ
// only in case (SQLite does not distinguish them) get a suffix _2, _3, ….
// A result of more than MaxRowsPerResult rows is refused rather than loaded
// in part, so that aggregates are never silently wrong.
//
// # Limits
//
// Every Run is bounded in time and memory, loading included:
// Options.Timeout covers waiting for a turn (at most MaxConcurrent Runs load
// and query at once), loading the tables and the query; the results of one
// Run may hold at most MaxRows rows together (checked before loading) and
// MaxLoadBytes bytes of JSON rows (checked while loading); no string, blob
// or row SQLite makes may be longer than MaxValueBytes (SQLITE_LIMIT_LENGTH),
// and a query's rows have at most max(MinResultColumns, widest table)
// columns; the answer stops at MaxResultRows rows or MaxResultBytes bytes
// (Truncated). SQLite's own heap limits (PRAGMA hard_heap_limit) are not
// used: they are process-wide, and modernc.org/sqlite is built without
// memory statistics, which they need.
//
// # Safety
//
// The SQL must be a single SELECT (or WITH … SELECT) statement. Three
// layers enforce it: a text check (comments and literals stripped; one
// statement; no ATTACH, DETACH, PRAGMA, INSERT, UPDATE, DELETE, DROP,
// CREATE, ALTER, REPLACE (the replace() function is allowed), VACUUM,
// REINDEX, ANALYZE, BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE), then,
// after loading, PRAGMA query_only=ON, no attachable databases
// (SQLITE_LIMIT_ATTACHED = 0), and an authorizer that allows only reading
// and functions (no load_extension). SQLite is interrupted when the Run's
// context ends.
//
// Imported by package datasf (analyze_results) only: internal, not a library
// API.
package analyze
