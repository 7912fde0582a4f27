package dualresp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Handler returns the REST handler. Mount it at /resources/:
//
//	mux.Handle("/resources/", srv.Handler())
//
// Routes:
//
//	GET    /resources/{id}                     metadata
//	GET    /resources/{id}?offset=&limit=      a page (skip= is a synonym of offset=)
//	POST   /resources/{id}  {"offset","limit","sort"}  a page, optionally sorted
//	GET    /resources/{id}/export?format=csv|ndjson|json|parquet|geojson|xlsx  the whole result, streamed
//	       (geojson: a FeatureCollection, the location column as geometry;
//	       xlsx: a workbook of typed cells, sent whole once read)
//	       &offset=N    from row N on (the header X-Export-Offset says N)
//	       &typed=true  json, ndjson: numbers and booleans from the column types
//	       (csv: formula-leading text cells get a leading ', unless formulas=keep)
//	PUT    /resources/{id}                     pin
//	DELETE /resources/{id}                     delete (204)
//
// Errors are JSON: {"error": code, "message": text}, with code not_found or
// expired (404), bad_request (400), method_not_allowed (405), query_failed
// (502), storage_error (500) or, for a pin over the owner's quota (see
// Options.MaxPinnedPerOwner), pin_quota_exceeded (409). An export past the
// caller's exports at once (Options.MaxExportsPerCaller) is answered
// too_many_exports 429, past the server's (Options.MaxExports) 503, both
// with Retry-After. Every request for a resource counts as an access (see
// Server.Access).
//
// An export is streamed as the query's Plan reads it. Its answer declares the
// trailer X-Export-Status ("complete" or "incomplete") and X-Export-Rows
// (the rows sent). When the Plan fails after rows went out, the
// download still ends cleanly but with a marker that it is incomplete, so
// that no reader takes a short file for the whole result:
//
//	ndjson: a last line {"error":"export_incomplete","incomplete":true,"message":…,"rows":N,"total":T}
//	json:   the same object as the array's last element
//	csv:    a last record whose first field starts "#export_incomplete: N of T rows: "
//
//	geojson: the collection's members "incomplete": true, "error", "message", "rows", "total"
//
// A Parquet export that fails midway ends without its footer, so it never
// opens as a whole file. A failure before the first row is an error answer
// (502 query_failed), and so is any failure of an XLSX export, which is
// read whole before the workbook is sent.
//
// Exports, and pages of more than 1 KiB, are compressed as the request's
// Accept-Encoding allows: zstd, else gzip (Content-Encoding, Vary). The
// Client resumes an export cut midway with offset (see ExportWith).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /resources/{id}", s.serveGet)
	mux.HandleFunc("POST /resources/{id}", s.servePost)
	mux.HandleFunc("PUT /resources/{id}", s.servePin)
	mux.HandleFunc("DELETE /resources/{id}", s.serveDelete)
	mux.HandleFunc("GET /resources/{id}/export", s.serveExport)
	mux.HandleFunc("/", s.serveUnknown)
	return s.withAccess(mux)
}

// codePinQuota is the error code of a pin refused by the quota.
const codePinQuota = "pin_quota_exceeded"

// apiError is an error answer.
type apiError struct {
	status     int
	code       string
	message    string
	retryAfter time.Duration // sent as Retry-After when positive
}

// retryLater is an error that asks to be tried again after a while: the
// data source refused to take more requests now.
type retryLater interface {
	error
	RetryAfter() time.Duration
}

func (e *apiError) Error() string { return e.message }

func badRequest(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "bad_request", fmt.Sprintf(format, args...), 0}
}

// queryFailed is what the caller is told of a query that failed with err:
// the words of Options.ErrorText when it has some, else that the
// data source did not answer in time or only that the query failed. The
// log keeps the whole error.
func (s *Server) queryFailed(err error) string {
	const failed = "the query behind this result failed"
	if s.errorText != nil {
		if text := s.errorText(err); text != "" {
			return failed + ": " + text
		}
	}
	var row *rowError
	if errors.As(err, &row) {
		return failed + ": " + row.Error()
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return failed + ": the data source did not answer in time; try again"
	}
	return failed
}

// toAPIError maps an error of the Server to an answer.
func (s *Server) toAPIError(err error) *apiError {
	var ae *apiError
	var re *RequestError
	var qe *QueryError
	var ce *CountError
	var rl retryLater
	var ee *ExpiredError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &re):
		return badRequest("%s", re.Message)
	case errors.As(err, &ee):
		return &apiError{http.StatusNotFound, "expired", fmt.Sprintf("the resource expired at %s; run its query again for a new link: %s",
			ee.ExpiresAt.UTC().Format(time.RFC3339), ee.RunAgain()), 0}
	case errors.Is(err, ErrExpired):
		return &apiError{http.StatusNotFound, "expired", "the resource has expired; run the query again to get a new one", 0}
	case errors.Is(err, ErrNotFound):
		return &apiError{http.StatusNotFound, "not_found", "no resource with this id (it may have expired and been removed)", 0}
	case errors.Is(err, ErrPinQuota):
		return &apiError{http.StatusConflict, codePinQuota, strings.TrimPrefix(err.Error(), "dualresp: "), 0}
	case errors.As(err, &rl) && rl.RetryAfter() > 0:
		secs := int64(math.Ceil(rl.RetryAfter().Seconds()))
		return &apiError{status: http.StatusServiceUnavailable, code: "busy", retryAfter: rl.RetryAfter(),
			message: fmt.Sprintf("the data source has too many requests waiting on this server; retry after %d seconds", secs)}
	case errors.As(err, &qe), errors.As(err, &ce):
		return &apiError{http.StatusBadGateway, "query_failed", s.queryFailed(err), 0}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &apiError{http.StatusServiceUnavailable, "canceled", "the request was canceled or ran out of time; try again", 0}
	}
	return &apiError{http.StatusInternalServerError, "storage_error", "the resource store failed", 0}
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := s.toAPIError(err)
	switch {
	case r.Context().Err() != nil:
		// The client went away (or the server is closing): not an error of
		// the service, and nobody reads the answer.
		s.log.DebugContext(r.Context(), "dualresp: request ended: the client went away", "method", r.Method, "path", r.URL.Path, "err", err)
		return
	case ae.status >= 500:
		s.log.ErrorContext(r.Context(), "dualresp: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if ae.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(ae.retryAfter.Seconds())), 10))
	}
	writeJSON(w, ae.status, map[string]string{"error": ae.code, "message": ae.message})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"internal","message":"could not encode the answer"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func (s *Server) serveUnknown(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/resources/")
	parts := strings.Split(rest, "/")
	switch {
	case ok && len(parts) == 1 && parts[0] != "":
		w.Header().Set("Allow", "GET, HEAD, POST, PUT, DELETE")
	case ok && len(parts) == 2 && parts[0] != "" && parts[1] == "export":
		w.Header().Set("Allow", "GET, HEAD")
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not_found", "message": "no such route: " + r.URL.Path})
		return
	}
	writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method_not_allowed", "message": r.Method + " is not allowed on " + r.URL.Path})
}

// checkParams rejects query parameters a route does not know, so that a
// misspelt one is an error instead of being silently ignored.
func checkParams(q map[string][]string, allowed ...string) error {
	for name := range q {
		if !slices.Contains(allowed, name) {
			return badRequest("unknown query parameter %q; accepted: %s", name, strings.Join(allowed, ", "))
		}
	}
	return nil
}

func (s *Server) serveGet(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := checkParams(q, "offset", "skip", "limit"); err != nil {
		s.writeError(w, r, err)
		return
	}
	if !q.Has("offset") && !q.Has("skip") && !q.Has("limit") {
		rec, err := s.Access(r.Context(), r.PathValue("id"))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, s.Info(rec))
		return
	}
	req, err := pageFromQuery(q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.servePage(w, r, req)
}

// pageFromQuery reads a GET page request; ReadPage checks it further.
func pageFromQuery(q map[string][]string) (PageQuery, error) {
	var p PageQuery
	get := func(name string) (int64, bool, error) {
		vs, ok := q[name]
		if !ok {
			return 0, false, nil
		}
		if len(vs) != 1 {
			return 0, false, badRequest("%s must be given once", name)
		}
		n, err := strconv.ParseInt(vs[0], 10, 64)
		if err != nil {
			return 0, false, badRequest("%s must be a whole number, got %q", name, vs[0])
		}
		return n, true, nil
	}
	off, hasOff, err := get("offset")
	if err != nil {
		return p, err
	}
	skip, hasSkip, err := get("skip")
	if err != nil {
		return p, err
	}
	if hasOff && hasSkip && off != skip {
		return p, badRequest("offset (%d) and skip (%d) disagree; give one of them", off, skip)
	}
	if hasSkip {
		off = skip
		if off < 0 {
			return p, badRequest("skip must not be negative, got %d", off)
		}
	}
	p.Offset = off
	limit, hasLimit, err := get("limit")
	if err != nil {
		return p, err
	}
	return p, setLimit(&p, limit, hasLimit)
}

// setLimit sets a limit the client gave; zero, which PageQuery takes for
// the default, is refused when given.
func setLimit(p *PageQuery, limit int64, given bool) error {
	if given && limit < 1 {
		return badRequest("limit must be at least 1, got %d", limit)
	}
	p.Limit = limit
	return nil
}

// postBody is the body of a POST page request; sort is one {field, order}
// object or a list of them.
type postBody struct {
	Offset *int64          `json:"offset"`
	Limit  *int64          `json:"limit"`
	Sort   json.RawMessage `json:"sort"`
}

func (s *Server) servePost(w http.ResponseWriter, r *http.Request) {
	p, err := readPostBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.servePage(w, r, p)
}

func readPostBody(w http.ResponseWriter, r *http.Request) (PageQuery, error) {
	var p PageQuery
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBody))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return p, badRequest("request body larger than %d bytes", MaxRequestBody)
	}
	if err != nil {
		return p, badRequest("reading the request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return p, nil
	}
	var b postBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return p, badRequest("request body is not valid JSON of the right shape: %v (want {\"offset\":0,\"limit\":100,\"sort\":{\"field\":\"name\",\"order\":\"asc\"}})", jsonErrorText(err))
	}
	if dec.More() {
		return p, badRequest("request body: more than one JSON value")
	}
	if b.Offset != nil {
		p.Offset = *b.Offset
	}
	if b.Limit != nil {
		if err := setLimit(&p, *b.Limit, true); err != nil {
			return p, err
		}
	}
	sortJSON := bytes.TrimSpace(b.Sort)
	switch {
	case len(sortJSON) == 0 || string(sortJSON) == "null":
	case sortJSON[0] == '[':
		d := json.NewDecoder(bytes.NewReader(sortJSON))
		d.DisallowUnknownFields()
		if err := d.Decode(&p.Sort); err != nil {
			return p, badRequest("sort: %v", jsonErrorText(err))
		}
	default:
		var one SortParam
		d := json.NewDecoder(bytes.NewReader(sortJSON))
		d.DisallowUnknownFields()
		if err := d.Decode(&one); err != nil {
			return p, badRequest("sort: %v (want {\"field\":\"name\",\"order\":\"asc\"|\"desc\"} or a list of them)", jsonErrorText(err))
		}
		p.Sort = []SortParam{one}
	}
	return p, nil
}

func jsonErrorText(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) && ute.Field != "" {
		return fmt.Sprintf("field %s must be %s, got %s", ute.Field, ute.Type, ute.Value)
	}
	return err.Error()
}

func (s *Server) servePage(w http.ResponseWriter, r *http.Request, q PageQuery) {
	_, page, err := s.ReadPage(r.Context(), r.PathValue("id"), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if page.LimitCapped {
		w.Header().Set("X-Limit-Capped", strconv.FormatInt(page.Limit, 10))
	}
	var buf bytes.Buffer
	if err := appendPage(&buf, page); err != nil {
		s.writeError(w, r, err)
		return
	}
	buf.WriteByte('\n')
	body := buf.Bytes()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	coding := acceptedEncoding(r)
	if len(body) < minCompressBytes {
		coding = ""
	}
	if coding != "" {
		if z, err := compressed(body, coding); err == nil {
			body = z
		} else {
			coding = ""
		}
	}
	setEncodingHeaders(h, coding)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func (s *Server) servePin(w http.ResponseWriter, r *http.Request) {
	rec, err := s.Pin(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.Info(rec))
}

func (s *Server) serveDelete(w http.ResponseWriter, r *http.Request) {
	if err := s.Delete(r.Context(), r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Export formats.
var exportTypes = map[string]string{
	"csv":     "text/csv; charset=utf-8",
	"ndjson":  "application/x-ndjson",
	"json":    "application/json",
	"parquet": "application/vnd.apache.parquet",
	"geojson": "application/geo+json",
	"xlsx":    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}

// exportParams are the query parameters of an export.
type exportParams struct {
	format       string
	offset       int64
	typed        bool
	keepFormulas bool // formulas=keep: CSV cells as they are (csvformula.go)
}

func readExportParams(q map[string][]string) (exportParams, error) {
	p := exportParams{format: "csv"}
	if err := checkParams(q, "format", "offset", "typed", "formulas"); err != nil {
		return p, err
	}
	for name, vs := range q {
		if len(vs) != 1 {
			return p, badRequest("%s must be given once", name)
		}
	}
	if vs := q["format"]; len(vs) == 1 && vs[0] != "" {
		p.format = vs[0]
	}
	if _, ok := exportTypes[p.format]; !ok {
		return p, badRequest("format must be one of csv, ndjson, json, parquet, geojson, xlsx; got %q", p.format)
	}
	if vs := q["offset"]; len(vs) == 1 {
		n, err := strconv.ParseInt(vs[0], 10, 64)
		if err != nil || n < 0 {
			return p, badRequest("offset must be a whole number of rows, 0 or more; got %q", vs[0])
		}
		p.offset = n
	}
	if vs := q["typed"]; len(vs) == 1 {
		b, err := strconv.ParseBool(vs[0])
		if err != nil {
			return p, badRequest("typed must be true or false; got %q", vs[0])
		}
		if b && p.format != "json" && p.format != "ndjson" {
			return p, badRequest("typed applies to the json and ndjson formats (csv is text; parquet, geojson and xlsx are always typed); got format %q", p.format)
		}
		p.typed = b
	}
	if vs := q["formulas"]; len(vs) == 1 && vs[0] != "" {
		if vs[0] != FormulasKeep {
			return p, badRequest("formulas must be %q (CSV cells as they are) or absent (formula-leading text cells get a leading '); got %q", FormulasKeep, vs[0])
		}
		p.keepFormulas = true
	}
	return p, nil
}

func (s *Server) serveExport(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	params, err := readExportParams(r.URL.Query())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	format := params.format
	ctype := exportTypes[format]
	rec, err := s.Access(ctx, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if params.offset > max(rec.TotalCount, 0) {
		s.writeError(w, r, badRequest("offset %d is past the end of the result (%s)", params.offset, nouns(rec.TotalCount, "row")))
		return
	}
	if err := exportable(format, rec, params.offset); err != nil {
		s.writeError(w, r, err)
		return
	}
	release, err := s.exports.take(exportCaller(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer release()
	ew := &exportWriter{w: w, out: &clientWriter{w: w}, format: format, ctype: ctype, id: id, cols: columnNames(rec.Columns),
		columns: rec.Columns, coding: acceptedEncoding(r), offset: params.offset, total: rec.TotalCount, keepFormulas: params.keepFormulas}
	defer ew.discard()
	if params.typed {
		ew.kinds = columnKinds(rec.Columns)
	}
	if s.onExportStart != nil {
		s.onExportStart(format)
	}
	for row, rerr := range s.Rows(ctx, rec, RowsOptions{Offset: params.offset}) {
		if err = rerr; err == nil {
			err = ew.row(row)
		}
		if err != nil {
			break
		}
	}
	if err == nil {
		err = ew.finish()
	}
	report := ExportReport{ID: id, Format: format, Offset: params.offset, Rows: ew.n, Total: rec.TotalCount, Err: err}
	switch {
	case err == nil:
		report.Outcome = ExportCompleted
	case ctx.Err() != nil || ew.out.err != nil:
		// A browser that closes a download, or a client that stops
		// reading: nothing went wrong here.
		report.Outcome = ExportClientGone
		s.log.DebugContext(ctx, "dualresp: export stopped: the client went away", "id", id, "rows", ew.n, "err", err)
	case !ew.started:
		report.Outcome = ExportFailed
		s.writeError(w, r, &QueryError{Op: "export", Err: err})
	default:
		// Part of the result is out: end it with the documented marker of
		// an incomplete export (see Handler), never as a short file that
		// looks whole.
		report.Outcome = ExportIncomplete
		s.log.ErrorContext(ctx, "dualresp: export failed midway; the download ends marked incomplete", "id", id, "rows", ew.n, "total", rec.TotalCount, "err", err)
		ew.incomplete(rec.TotalCount)
	}
	report.Bytes = ew.out.n
	if s.onExportEnd != nil {
		s.onExportEnd(report)
	}
}

// exportable checks, before anything is sent, that the result can be
// exported in format from offset: an XLSX workbook holds at most
// XLSXMaxRows rows, and a GeoJSON export needs a location column (when the
// result's columns have types; else the first row's geometry is used).
func exportable(format string, rec *Record, offset int64) error {
	switch format {
	case "xlsx":
		if n := rec.TotalCount - offset; n > XLSXMaxRows {
			return badRequest("an XLSX export holds at most %d rows (%d sheets of %d); this one would have %d: export CSV or Parquet instead, or narrow the query", XLSXMaxRows, XLSXMaxSheets, XLSXSheetRows-1, n)
		}
	case "geojson":
		typed := slices.ContainsFunc(rec.Columns, func(c Column) bool { return c.Type != "" })
		if typed && GeometryColumn(rec.Columns) == "" {
			return badRequest("format=geojson needs a column of locations (a point, multipolygon or location column, ...); this result's columns are %s: select one, e.g. add the dataset's point column to the SELECT", strings.Join(columnNames(rec.Columns), ", "))
		}
	}
	return nil
}

// Outcomes of an export (ExportReport.Outcome).
const (
	// ExportCompleted: every row was sent.
	ExportCompleted = "completed"
	// ExportIncomplete: the query failed after rows were sent; the
	// download ends with the marker of an incomplete export.
	ExportIncomplete = "incomplete"
	// ExportFailed: the query failed before any row was sent; the answer
	// is an error.
	ExportFailed = "failed"
	// ExportClientGone: the client went away or stopped reading.
	ExportClientGone = "client_gone"
)

// ExportReport describes one export when it ends, for
// Options.OnExportEnd.
type ExportReport struct {
	ID      string
	Format  string // csv, ndjson, json, parquet, geojson or xlsx
	Outcome string // ExportCompleted, ExportIncomplete, ExportFailed or ExportClientGone
	Offset  int64  // the first row sent (the export's offset parameter)
	Rows    int64  // rows sent
	Total   int64  // rows of the result
	Bytes   int64  // bytes of the body sent (compressed, when it was)
	Err     error  // why it did not complete; nil when it did
}

// HeaderExportOffset is the header of an export naming its first row (the
// offset parameter; 0 for a whole export).
const HeaderExportOffset = "X-Export-Offset"

// Headers of an export's trailer (see Handler).
const (
	// TrailerExportStatus is "complete" or "incomplete".
	TrailerExportStatus = "X-Export-Status"
	// TrailerExportRows is the number of rows sent.
	TrailerExportRows = "X-Export-Rows"
	// TrailerRowsWithoutLocation is, in a GeoJSON export, the number of
	// rows sent with a null geometry (also the collection's member
	// "rows_without_location").
	TrailerRowsWithoutLocation = "X-Export-Rows-Without-Location"
)

// incompleteMessage is what the marker of an incomplete export says.
const incompleteMessage = "the data source failed while this export was being read, and asking again did not help; this download is incomplete: download it again later"

// clientWriter remembers the first error writing to the client, which
// means the client went away.
type clientWriter struct {
	w   io.Writer
	n   int64 // bytes written
	err error
}

func (c *clientWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

func columnNames(cols []Column) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return names
}

// exportWriter writes rows in an export format, buffering a little.
type exportWriter struct {
	w       http.ResponseWriter
	out     *clientWriter // w's body
	coding  string        // the body's content coding ("" for none)
	enc     io.WriteCloser
	offset  int64                // the first row of the result sent
	total   int64                // the result's rows
	kinds   map[string]valueKind // typed rows: each column's kind; nil: rows as given
	columns []Column
	pq      *ParquetWriter
	gj      *GeoJSONWriter
	xw      *XLSXWriter // the workbook, written whole at finish
	typed   []byte
	bw      *bufio.Writer
	cw      *csv.Writer
	format  string
	ctype   string
	id      string
	cols    []string
	started bool
	n       int64
	rec     []string
	scratch bytes.Buffer
	// keepFormulas writes formula-leading CSV text cells as they are (see
	// csvformula.go).
	keepFormulas bool
}

func (e *exportWriter) start(first json.RawMessage) error {
	e.started = true
	h := e.w.Header()
	h.Set("Content-Type", e.ctype)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.%s"`, e.id, e.format))
	trailer := TrailerExportStatus + ", " + TrailerExportRows
	if e.format == "geojson" {
		trailer += ", " + TrailerRowsWithoutLocation
	}
	h.Set("Trailer", trailer)
	h.Set(HeaderExportOffset, strconv.FormatInt(e.offset, 10))
	setEncodingHeaders(h, e.coding)
	e.w.WriteHeader(http.StatusOK)
	enc, err := encoder(e.out, e.coding)
	if err != nil {
		return err
	}
	e.enc = enc
	e.bw = bufio.NewWriterSize(enc, 64<<10)
	switch e.format {
	case "parquet":
		cols := e.columns
		if len(cols) == 0 && first != nil {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(first, &m); err == nil {
				for _, k := range slices.Sorted(maps.Keys(m)) {
					cols = append(cols, Column{Name: k})
				}
			}
		}
		e.pq = NewParquetWriter(e.bw, cols)
	case "geojson":
		e.gj = NewGeoJSONWriter(e.bw, e.columns)
	case "json":
		return e.bw.WriteByte('[')
	case "csv":
		e.cw = csv.NewWriter(e.bw)
		if len(e.cols) == 0 && first != nil {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(first, &m); err == nil {
				e.cols = slices.Sorted(maps.Keys(m))
			}
		}
		e.rec = make([]string, len(e.cols))
		if len(e.cols) > 0 {
			for i, c := range e.cols {
				e.rec[i] = c
				if !e.keepFormulas {
					e.rec[i] = neutraliseFormula(c)
				}
			}
			return e.cw.Write(e.rec)
		}
	}
	return nil
}

func (e *exportWriter) row(row json.RawMessage) error {
	// Rows pass through as the Plan gave them (its contract is valid
	// JSON objects); only their shape is checked here, which costs nothing
	// next to scanning every byte again.
	if len(row) < 2 || row[0] != '{' || row[len(row)-1] != '}' {
		return &rowError{e.n, fmt.Sprintf("is not a JSON object: %.40q", row)}
	}
	var err error
	if e.format == "ndjson" && bytes.IndexByte(row, '\n') >= 0 {
		// One row, one line: drop the white space between tokens.
		if row, err = e.compact(row); err != nil {
			return err
		}
	}
	if e.format == "xlsx" {
		// The workbook goes out whole at finish: until then a failure is
		// a clean error response.
		if e.xw == nil {
			if e.xw, err = NewXLSXWriter(nil, columnsOf(e.columns, row)); err != nil {
				return err
			}
			e.xw.SetRows(e.total - e.offset)
		}
		if err = e.xw.WriteRow(row); err != nil {
			return err
		}
		e.n++
		return nil
	}
	// The first row is checked before the 200 goes out, so that a bad one
	// is a clean error response rather than a broken download.
	if !e.started {
		if err := e.start(row); err != nil {
			return err
		}
	}
	if e.kinds != nil {
		if e.typed, err = typedRow(e.typed[:0], row, e.kinds); err != nil {
			return &rowError{e.n, "cannot be typed: " + err.Error()}
		}
		row = e.typed
	}
	switch e.format {
	case "parquet":
		err = e.pq.WriteRow(row)
	case "geojson":
		err = e.gj.WriteRow(row)
	case "ndjson":
		if _, err = e.bw.Write(row); err == nil {
			err = e.bw.WriteByte('\n')
		}
	case "json":
		if e.n > 0 {
			if err = e.bw.WriteByte(','); err != nil {
				return err
			}
		}
		if err = e.bw.WriteByte('\n'); err == nil {
			_, err = e.bw.Write(row)
		}
	case "csv":
		err = e.csvRow(row)
	}
	e.n++
	return err
}

// compact returns row without white space between tokens, in a buffer
// reused by the next call.
func (e *exportWriter) compact(row json.RawMessage) (json.RawMessage, error) {
	e.scratch.Reset()
	if err := json.Compact(&e.scratch, row); err != nil {
		return nil, &rowError{e.n, "is not valid JSON: " + err.Error()}
	}
	return e.scratch.Bytes(), nil
}

func (e *exportWriter) csvRow(row json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(row, &m); err != nil {
		return &rowError{e.n, "is not a JSON object: " + err.Error()}
	}
	for i, c := range e.cols {
		e.rec[i] = csvCell(m[c])
		if v := bytes.TrimSpace(m[c]); !e.keepFormulas && len(v) > 0 && v[0] == '"' {
			e.rec[i] = neutraliseFormula(e.rec[i])
		}
	}
	return e.cw.Write(e.rec)
}

// csvCell renders a JSON value as a CSV cell: strings unquoted, null and
// missing empty, numbers and booleans as written, arrays and objects as
// compact JSON.
func csvCell(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return ""
	}
	switch v[0] {
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			return s
		}
	case '{', '[':
		var buf bytes.Buffer
		if err := json.Compact(&buf, v); err == nil {
			return buf.String()
		}
	}
	return string(v)
}

func (e *exportWriter) finish() error {
	if e.format == "xlsx" && e.xw == nil {
		var err error
		if e.xw, err = NewXLSXWriter(nil, e.columns); err != nil {
			return err
		}
	}
	if !e.started {
		if err := e.start(nil); err != nil {
			return err
		}
	}
	switch e.format {
	case "json":
		if e.n > 0 {
			if err := e.bw.WriteByte('\n'); err != nil {
				return err
			}
		}
		if _, err := e.bw.WriteString("]\n"); err != nil {
			return err
		}
	case "csv":
		e.cw.Flush()
		if err := e.cw.Error(); err != nil {
			return err
		}
	case "parquet":
		if err := e.pq.Close(); err != nil {
			return err
		}
	case "geojson":
		if err := e.gj.Close(); err != nil {
			return err
		}
		e.w.Header().Set(TrailerRowsWithoutLocation, strconv.FormatInt(e.gj.RowsWithoutLocation(), 10))
	case "xlsx":
		e.xw.w = e.bw
		if err := e.xw.Close(); err != nil {
			return err
		}
	}
	if err := e.bw.Flush(); err != nil {
		return err
	}
	if err := e.enc.Close(); err != nil {
		return err
	}
	e.trailer("complete")
	return nil
}

// discard removes what an XLSX export holds on disk (after its finish,
// or when it failed before).
func (e *exportWriter) discard() {
	if e.xw != nil {
		e.xw.Discard()
	}
}

// columnsOf returns cols, or when there are none the first row's keys,
// sorted.
func columnsOf(cols []Column, first json.RawMessage) []Column {
	if len(cols) > 0 || first == nil {
		return cols
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(first, &m); err == nil {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			cols = append(cols, Column{Name: k})
		}
	}
	return cols
}

// trailer sets the export's trailer (declared by start).
func (e *exportWriter) trailer(status string) {
	h := e.w.Header()
	h.Set(TrailerExportStatus, status)
	h.Set(TrailerExportRows, strconv.FormatInt(e.n, 10))
}

// incomplete ends a started export that failed midway with the marker of
// an incomplete export: a last line (NDJSON), a last array element (JSON)
// or a last record (CSV) naming the rows sent, and the trailer
// X-Export-Status: incomplete.
func (e *exportWriter) incomplete(total int64) {
	marker := map[string]any{
		"error":      "export_incomplete",
		"incomplete": true,
		"message":    incompleteMessage,
		"rows":       e.n,
		"total":      total,
	}
	if e.offset > 0 {
		marker["offset"] = e.offset
	}
	b, _ := json.Marshal(marker) // a map of plain values
	switch e.format {
	case "ndjson":
		_, _ = e.bw.Write(append(b, '\n'))
	case "json":
		if e.n > 0 {
			_ = e.bw.WriteByte(',')
		}
		_, _ = e.bw.WriteString("\n")
		_, _ = e.bw.Write(b)
		_, _ = e.bw.WriteString("\n]\n")
	case "csv":
		e.cw.Flush()
		rec := make([]string, max(len(e.cols), 1))
		rec[0] = fmt.Sprintf("#export_incomplete: %d of %d rows: %s", e.n, total, incompleteMessage)
		if e.offset > 0 {
			rec[0] = fmt.Sprintf("#export_incomplete: %d rows from row %d of %d: %s", e.n, e.offset, total, incompleteMessage)
		}
		_ = e.cw.Write(rec)
		e.cw.Flush()
	case "geojson":
		_ = e.gj.end(marker)
	case "parquet", "xlsx":
		// No footer: a Parquet file (or workbook) cut short is not readable as one.
	}
	_ = e.bw.Flush()
	_ = e.enc.Close()
	e.trailer("incomplete")
}
