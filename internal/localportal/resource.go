package localportal

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/internal/soqlsqlite"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// soqlParams are the SoQL query parameters of the Resource API.
var soqlParams = []string{"$select", "$where", "$order", "$group", "$having", "$limit", "$offset", "$q"}

// ignoredParams are accepted and ignored.
var ignoredParams = map[string]bool{"$$app_token": true, "$$exclude_system_fields": true, "$$version": true,
	"$$read_from_nbe": true, "$$query_timeout_seconds": true}

// maxLoggedQuery is the most bytes of a query a log line carries.
const maxLoggedQuery = 2000

// clipLogged cuts a query for a log line: a 15 KB SoQL must not make a
// log line of 64 KB.
func clipLogged(q string) string {
	if len(q) <= maxLoggedQuery {
		return q
	}
	cut := maxLoggedQuery
	for cut > 0 && !utf8.RuneStart(q[cut]) {
		cut--
	}
	return q[:cut] + fmt.Sprintf("… (%d bytes in all)", len(q))
}

// executionReason says why a query could not run, in the words of a portal
// rather than of the SQLite engine under this one (the log keeps SQLite's).
func executionReason(err error) string {
	if reason := soqlsqlite.LimitReason(err); reason != "" {
		return reason
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Expression tree is too large"), strings.Contains(msg, "Recursion limit"),
		strings.Contains(msg, "parser stack overflow"):
		return "the query is nested too deeply; simplify it"
	case strings.Contains(msg, "interrupted"), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "the query ran out of time"
	case strings.Contains(msg, "too many SQL variables"), strings.Contains(msg, "too many terms"):
		return "the query has too many terms"
	}
	return "the query could not be executed on this dataset"
}

// queryError is a request the portal refuses, with Socrata's error
// envelope; the compiler's refusals are *soqlsqlite.Error.
type queryError struct {
	status int
	body   map[string]any
}

func (e *queryError) Error() string {
	if m, ok := e.body["message"].(string); ok {
		return m
	}
	return fmt.Sprint(e.body)
}

func writeError(w http.ResponseWriter, err error) {
	var qe *queryError
	if errors.As(err, &qe) {
		writeJSON(w, qe.status, qe.body)
		return
	}
	var ce *soqlsqlite.Error
	if errors.As(err, &ce) {
		writeJSON(w, ce.Status, ce.Body)
		return
	}
	writeJSON(w, http.StatusInternalServerError, map[string]any{"error": true, "message": "Internal error: " + err.Error(), "status": 500})
}

func notFoundService(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]any{"code": "not_found", "error": true, "message": "No service found for this URL."})
}

func (s *Emulator) serveResource(w http.ResponseWriter, r *http.Request) {
	if s.soda2Gone.Load() {
		writeJSON(w, http.StatusGone, soda2GoneBody)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, "/resource/")
	id := strings.TrimSuffix(name, ".json")
	if !isDatasetID(id) {
		notFoundService(w)
		return
	}
	params := r.URL.Query()
	if s.answerPendingCount(w, r, id, func(ds *dataset) (string, error) { return queryText(ds, params) }, true, nil) {
		return
	}
	ds, ok, err := s.lookup(r.Context(), id)
	if err != nil {
		writeError(w, err)
		return
	}
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"code": "dataset.missing", "error": true,
			"message": "Not found", "data": map[string]any{"id": id}})
		return
	}
	src, err := queryText(ds, params)
	if err != nil {
		writeError(w, err)
		return
	}
	s.answer(w, r, ds, id, src, true, nil)
}

// compiled is a compiled query as the portal answers it.
type compiled struct {
	sql  string
	cols []outCol
}

// outCol is one column of an answer.
type outCol struct {
	soqlsqlite.Column
	// key is the row key when it is not Name (SODA3's display-name keys,
	// SODA3Live); omit leaves the field out of every row (SODA3Live.Missing).
	key  string
	omit bool
}

// rowKey is the column's key in a row and in X-SODA2-Fields.
func (c outCol) rowKey() string {
	if c.key != "" {
		return c.key
	}
	return c.Name
}

// compile compiles the query q, parsed from src, on ds.
func compile(ds *dataset, src string, q *soql.Query, defaultLimit bool) (*compiled, error) {
	cols := make([]socrata.Column, len(ds.cols))
	for i, c := range ds.cols {
		cols[i] = c.Column
	}
	table := &soqlsqlite.Table{ID: ds.schema.ID, From: ds.table, Columns: cols, CreatedAt: ds.createdAt}
	st, err := soqlsqlite.Compile(table, src, q, soqlsqlite.Options{DefaultLimit: defaultLimit})
	if err != nil {
		return nil, err
	}
	c := &compiled{sql: st.SQL, cols: make([]outCol, len(st.Columns))}
	for i, col := range st.Columns {
		c.cols[i] = outCol{Column: col}
	}
	return c, nil
}

// answer runs the SoQL src on dataset id (ds) and writes its rows, or the
// portal's error: a parse error, a refusal of the query, or a failure while
// it runs. defaultLimit applies the Resource API's 1,000 rows to a query
// without LIMIT; page, when set, wraps the compiled query (SODA3's page).
func (s *Emulator) answer(w http.ResponseWriter, r *http.Request, ds *dataset, id, src string, defaultLimit bool, page func(*compiled) *compiled) {
	q, err := soql.Parse(src)
	if err != nil {
		writeError(w, soqlsqlite.ParseError(src, err))
		return
	}
	c, err := compile(ds, src, q, defaultLimit)
	if err != nil {
		writeError(w, err)
		return
	}
	if page != nil {
		c = page(c)
	}
	if err := s.run(w, r, ds, c); err != nil {
		s.log.Warn("localportal: query failed", "path", r.URL.Path, "dataset", id,
			"soql", clipLogged(src), "sql", clipLogged(c.sql), "err", err)
		writeError(w, &queryError{status: http.StatusBadRequest, body: map[string]any{
			"errorCode": "query.execution.failed",
			"message":   "Query coordinator error: query.execution.failed; " + executionReason(err),
			"data":      map[string]any{"dataset": id},
		}})
	}
}

// writeHeaders writes the status line and headers of a result.
func writeHeaders(w http.ResponseWriter, c *compiled) {
	fields := make([]string, len(c.cols))
	types := make([]string, len(c.cols))
	for i, col := range c.cols {
		fields[i] = col.rowKey()
		types[i] = col.SODA2
	}
	fb, _ := json.Marshal(fields)
	tb, _ := json.Marshal(types)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-SODA2-Fields", string(fb))
	w.Header().Set("X-SODA2-Types", string(tb))
	w.Header().Set("X-SODA2-Warning", "X-SODA2-Fields, X-SODA2-Types, and X-SODA2-Legacy-Types are deprecated")
	w.WriteHeader(http.StatusOK)
}

// queryText turns the request's parameters into one SoQL text: $query as
// given, or the separate $select/$where/... parameters (plus simple
// column=value filters) assembled into a query.
func queryText(ds *dataset, params url.Values) (string, error) {
	var unknown, filters []string
	for k := range params {
		switch {
		case k == "$query" || ignoredParams[k]:
		case strings.HasPrefix(k, "$"):
			known := false
			for _, p := range soqlParams {
				if k == p {
					known = true
				}
			}
			if !known {
				unknown = append(unknown, strings.TrimPrefix(k, "$"))
			}
		default:
			if _, ok := ds.byKey[fieldKey(k)]; ok {
				filters = append(filters, k)
			} else {
				unknown = append(unknown, k)
			}
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return "", &queryError{status: http.StatusBadRequest, body: map[string]any{"error": true,
			"message": "Unrecognized arguments [" + strings.Join(unknown, ", ") + "]"}}
	}
	sort.Strings(filters)
	if params.Has("$query") {
		var extra []string
		for _, p := range soqlParams {
			if params.Has(p) {
				extra = append(extra, p)
			}
		}
		extra = append(extra, filters...)
		if len(extra) > 0 {
			return "", &queryError{status: http.StatusBadRequest, body: map[string]any{
				"code":    "query.soql.invalid-parameters",
				"error":   true,
				"message": "If $query is used, all options - [" + strings.Join(extra, ", ") + "] should not be specified in $query.",
				"data":    map[string]any{"parameters": extra},
			}}
		}
		return params.Get("$query"), nil
	}
	var b strings.Builder
	sel := strings.TrimSpace(params.Get("$select"))
	if sel == "" {
		sel = "*"
	}
	b.WriteString("SELECT " + sel)
	var where []string
	if w := strings.TrimSpace(params.Get("$where")); w != "" {
		where = append(where, "("+w+")")
	}
	for _, f := range filters {
		where = append(where, "`"+ds.byKey[fieldKey(f)].FieldName+"` = "+soqlsqlite.QuoteString(params.Get(f)))
	}
	if len(where) > 0 {
		b.WriteString(" WHERE " + strings.Join(where, " AND "))
	}
	if g := strings.TrimSpace(params.Get("$group")); g != "" {
		b.WriteString(" GROUP BY " + g)
	}
	if h := strings.TrimSpace(params.Get("$having")); h != "" {
		b.WriteString(" HAVING " + h)
	}
	if o := strings.TrimSpace(params.Get("$order")); o != "" {
		b.WriteString(" ORDER BY " + o)
	}
	if q := params.Get("$q"); q != "" {
		b.WriteString(" SEARCH " + soqlsqlite.QuoteString(q))
	}
	for _, p := range []string{"$limit", "$offset"} {
		v := strings.TrimSpace(params.Get(p))
		if v == "" {
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
			return "", &queryError{status: http.StatusBadRequest, body: map[string]any{
				"code": "query.compiler.malformed", "error": true,
				"message": "Could not parse SoQL query: " + p + " must be a non-negative integer, got " + strconv.Quote(v),
				"data":    map[string]any{"parameter": p},
			}}
		}
		b.WriteString(" " + strings.ToUpper(strings.TrimPrefix(p, "$")) + " " + v)
	}
	return b.String(), nil
}

// run executes c and streams the rows to w as the Resource API encodes
// them, row by row: no result is held in memory whole. An error before
// the first row is returned (for an error answer); one after it cuts the
// body short, so the client sees a truncated document, never a short one.
func (s *Emulator) run(w http.ResponseWriter, r *http.Request, ds *dataset, c *compiled) error {
	s.ddlMu.RLock()
	defer s.ddlMu.RUnlock()
	db := ds.db
	if db == nil {
		db = s.db
	}
	conn, release, err := soqlsqlite.Conn(r.Context(), db)
	if err != nil {
		return err
	}
	defer release()
	rows, err := conn.QueryContext(r.Context(), c.sql)
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]any, len(c.cols))
	ptrs := make([]any, len(c.cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	keys := make([][]byte, len(c.cols))
	for i, col := range c.cols {
		k, _ := json.Marshal(col.rowKey())
		keys[i] = append(k, ':')
	}
	// The first row (or the end) decides between a result and an error.
	more := rows.Next()
	if !more {
		if err := rows.Err(); err != nil {
			return err
		}
	}
	var (
		row         []byte // the row being encoded
		headersSent bool
		page        int64 // bytes of rows written
		buf         *bufio.Writer
	)
	for ; more; more = rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			if !headersSent {
				return err
			}
			s.log.Warn("localportal: result cut short", "err", err)
			return nil
		}
		row = append(row[:0], '{')
		n := 0
		for i, col := range c.cols {
			if col.omit {
				continue
			}
			enc, ok := encodeValue(col.Kind, vals[i])
			if !ok {
				continue
			}
			if n > 0 {
				row = append(row, ',')
			}
			n++
			row = append(row, keys[i]...)
			row = append(row, enc...)
			if len(row) > maxRowBytes {
				break
			}
		}
		row = append(row, '}')
		page += int64(len(row)) + 2
		var tooBig error
		switch {
		case len(row) > maxRowBytes:
			tooBig = &soqlsqlite.LimitError{Msg: fmt.Sprintf("a row of the result is longer than the limit of %d bytes (4 MiB) a row may have; select fewer or shorter columns", maxRowBytes)}
		case page > maxPageBytes:
			tooBig = &soqlsqlite.LimitError{Msg: fmt.Sprintf("the result is longer than the limit of %d bytes (64 MiB) one answer may have; select fewer rows (LIMIT) or fewer columns", maxPageBytes)}
		}
		if tooBig != nil {
			if !headersSent {
				return tooBig
			}
			// The status is sent: the body ends without its closing
			// bracket, so that no client reads a short result as whole.
			s.log.Warn("localportal: result cut short", "err", tooBig)
			buf.Flush() //nolint:errcheck // the client may be gone
			return nil
		}
		if !headersSent {
			writeHeaders(w, c)
			buf = bufio.NewWriterSize(w, 32<<10)
			buf.WriteString("[")
			headersSent = true
		} else {
			buf.WriteString("\n,")
		}
		buf.Write(row)
		if buf.Buffered() == 0 && r.Context().Err() != nil {
			return nil // the client went away
		}
	}
	if !headersSent {
		if err := rows.Err(); err != nil {
			return err
		}
		writeHeaders(w, c)
		buf = bufio.NewWriterSize(w, 32<<10)
		buf.WriteString("[")
	}
	if err := rows.Err(); err != nil {
		// The status is sent: end the body without its closing bracket,
		// so that no client reads a short result as complete.
		s.log.Warn("localportal: result cut short", "err", err)
		buf.Flush() //nolint:errcheck // the client may be gone
		return nil
	}
	buf.WriteString("]\n")
	buf.Flush() //nolint:errcheck // the client went away
	return nil
}

// encodeValue renders one stored value as Socrata JSON: scalars as strings,
// checkboxes as booleans, points and locations as objects. ok is false for
// null, which Socrata omits.
func encodeValue(k soqlsqlite.Kind, v any) (enc []byte, ok bool) {
	if v == nil {
		return nil, false
	}
	if b, isBytes := v.([]byte); isBytes {
		v = string(b)
	}
	switch k {
	case soqlsqlite.KindBool:
		switch x := v.(type) {
		case int64:
			return []byte(strconv.FormatBool(x != 0)), true
		case float64:
			return []byte(strconv.FormatBool(x != 0)), true
		case bool:
			return []byte(strconv.FormatBool(x)), true
		}
	case soqlsqlite.KindPoint, soqlsqlite.KindLocation, soqlsqlite.KindJSON:
		if s, isStr := v.(string); isStr && json.Valid([]byte(s)) {
			return []byte(s), true
		}
	case soqlsqlite.KindNumber:
		if f, isFloat := v.(float64); isFloat && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return nil, false
		}
	}
	b, err := json.Marshal(soqlsqlite.FormatScalar(v))
	if err != nil {
		return nil, false
	}
	return b, true
}
