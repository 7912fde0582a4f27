package soqlsqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// What one query can make the portal build. A query is text a client
// wrote: without these bounds right_pad(x, 400000000, 'x') or three nested
// replaces build values of gigabytes, and a few such queries at once take
// the machine's memory. The real portal's bounds are not known; these are
// the analysis engine's (internal/analyze: 1 MiB a value) and leave every
// value of the offline data sets (a few KB at most) far inside.
const (
	// maxValueBytes bounds one value a query makes: SQLite's
	// SQLITE_LIMIT_LENGTH on the connection while the query runs (replace,
	// ||, substr, json_*: "string or blob too big"), and the results of
	// this package's Go functions, checked before they allocate.
	maxValueBytes = 1 << 20
	// maxLikeSteps bounds the work of one LIKE on one value (localportal_like):
	// the matcher backtracks, n×m steps at worst, so that a long value and a
	// long pattern would keep a core busy for minutes in one call, out of
	// reach of the query's context (SQLite is interrupted between calls).
	maxLikeSteps = 50_000_000
	// maxPatternLength bounds a LIKE pattern written in the query, which
	// SQLite's GLOB matches (SQLITE_LIMIT_LIKE_PATTERN_LENGTH): GLOB's work
	// is the value's length times the pattern's at worst, in one call out
	// of reach of the query's context (a 1,000-character pattern on a
	// 1 MiB value: 8.6 s, measured; 256: about 2 s).
	maxPatternLength = 256
)

// LimitError is a bound a query went past, of this package or of the code
// that runs its statements; Msg is the portal's answer, which LimitReason
// finds again in the error SQLite returns.
type LimitError struct{ Msg string }

func (e *LimitError) Error() string { return limitPrefix + e.Msg }

// limitPrefix marks a LimitError's text inside SQLite's error message
// (a Go function's error reaches database/sql as text).
const limitPrefix = "soqlsqlite limit: "

// tooLong is the error of a Go function whose result would be longer than
// maxValueBytes.
func tooLong(function string, n float64) error {
	return &LimitError{fmt.Sprintf("%s to %.0f characters would make a value longer than the limit of %d bytes (1 MiB) a value may have; pad to fewer characters",
		function, n, maxValueBytes)}
}

// LimitReason is the portal's words for an error of a bound a query went
// past (a LimitError, or SQLite's own length and pattern limits that Conn
// sets), "" for another error.
func LimitReason(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, limitPrefix); i >= 0 {
		rest := msg[i+len(limitPrefix):]
		// SQLite appends " (1)", its result code, to a function's error.
		if j := strings.LastIndex(rest, " ("); j > 0 && strings.HasSuffix(rest, ")") {
			rest = rest[:j]
		}
		return rest
	}
	if strings.Contains(msg, "LIKE or GLOB pattern too complex") {
		return fmt.Sprintf("a LIKE pattern is longer than the limit of %d characters a pattern may have; use a shorter pattern", maxPatternLength)
	}
	if strings.Contains(msg, "string or blob too big") {
		return fmt.Sprintf("a value would be longer than the limit of %d bytes (1 MiB) a value may have; build shorter text (replace, concatenation and pads make long values)", maxValueBytes)
	}
	return ""
}

// Conn is a connection of db that a client's query runs on: SQLite's
// value length is limited to maxValueBytes, and a LIKE pattern's to
// maxPatternLength, while it is held. release puts
// the connection's own limit back (the pool's connections also load data
// sets) and returns it to the pool.
func Conn(ctx context.Context, db *sql.DB) (conn *sql.Conn, release func(), err error) {
	conn, err = db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	limits := []struct{ id, value, old int }{
		{id: sqlite3.SQLITE_LIMIT_LENGTH, value: maxValueBytes},
		{id: sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, value: maxPatternLength},
	}
	release = func() {
		for _, l := range limits {
			if l.old > 0 {
				_, _ = sqlite.Limit(conn, l.id, l.old)
			}
		}
		conn.Close()
	}
	for i, l := range limits {
		if limits[i].old, err = sqlite.Limit(conn, l.id, l.value); err != nil {
			release()
			return nil, nil, fmt.Errorf("soqlsqlite: limit a query's values: %w", err)
		}
	}
	return conn, release, nil
}
