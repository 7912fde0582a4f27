package analyze

import (
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
)

// Reason says why the query failed, for the caller of Run: SQLite's own
// message without its result code's name and number ("no such column: x"),
// or, for the limits of SQLite's parser, that the query is nested too
// deeply or has too many values; an error of this package's bounds says
// itself. SQLite reports all of these as SQLITE_ERROR, so its message is
// read here, where its error enters the program, and nowhere else.
func (e *SQLError) Reason() string {
	var se *sqlite.Error
	if !errors.As(e.Err, &se) {
		return strings.TrimPrefix(e.Err.Error(), "analyze: ")
	}
	msg := se.Error()
	// modernc.org/sqlite writes "<sqlite3_errstr>: <sqlite3_errmsg> (<code>)".
	if _, rest, ok := strings.Cut(msg, ": "); ok {
		msg = rest
	}
	msg = strings.TrimSuffix(msg, fmt.Sprintf(" (%d)", se.Code()))
	switch {
	case strings.Contains(msg, "Expression tree is too large"), strings.Contains(msg, "Recursion limit"),
		strings.Contains(msg, "parser stack overflow"):
		return "the query is nested too deeply; simplify it"
	case strings.Contains(msg, "too many SQL variables"):
		return "the query has too many values"
	}
	return msg
}
