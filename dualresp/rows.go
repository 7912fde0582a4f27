package dualresp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
)

// PageQuery is a request for one page of a stored result as a client
// sends it: the REST API's GET and POST, or an app's page tool. ReadPage
// checks it against the result before reading anything.
type PageQuery struct {
	// Offset is the first row, counting from 0.
	Offset int64
	// Limit is the number of rows: zero means DefaultPageLimit, and more
	// than Options.MaxPageSize is capped (Page.LimitCapped).
	Limit int64
	// Sort orders the page by result columns, the first field first;
	// without it the page is in the result's own stable order.
	Sort []SortParam
}

// SortParam is one sort field as a client sends it.
type SortParam struct {
	Field string `json:"field"`
	// Order is "asc" (the default when empty) or "desc", in any case.
	Order string `json:"order"`
}

// RequestError reports a page request that does not fit its result: a
// negative offset or limit, a sort field that is not a result column or is
// given twice, an order other than asc or desc. The REST API answers it
// with 400 bad_request.
type RequestError struct {
	// Param is the request parameter at fault: "offset", "limit" or "sort".
	Param string
	// Field is the sort field at fault, for Param "sort".
	Field   string
	Message string
}

func (e *RequestError) Error() string { return e.Message }

func requestError(param, field, format string, args ...any) *RequestError {
	return &RequestError{Param: param, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ReadPage reads one page of the stored result id for the caller of ctx,
// the one way the REST API and an app's page tool read pages: it finds the
// record (records of another owner are not found, see WithOwner), checks
// q against it (a bad request is a *RequestError and counts no access),
// counts an access (see Access) and reads the page (see Page). It returns
// the record as the access left it, and the page.
func (s *Server) ReadPage(ctx context.Context, id string, q PageQuery) (*Record, *Page, error) {
	switch {
	case q.Offset < 0:
		return nil, nil, requestError("offset", "", "offset must not be negative, got %d", q.Offset)
	case q.Limit < 0:
		return nil, nil, requestError("limit", "", "limit must be at least 1, got %d", q.Limit)
	}
	rec, err := s.Resource(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	sort, err := sortFields(rec, q.Sort)
	if err != nil {
		return nil, nil, err
	}
	if rec, err = s.Access(ctx, id); err != nil {
		return nil, nil, err
	}
	page, err := s.Page(ctx, rec, PageRequest{Offset: q.Offset, Limit: q.Limit, Order: Order{Sort: sort}})
	if err != nil {
		return nil, nil, err
	}
	return rec, page, nil
}

// sortFields turns sort parameters into sort fields, checked against the
// record's columns.
func sortFields(rec *Record, ps []SortParam) ([]SortField, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	out := make([]SortField, 0, len(ps))
	for _, p := range ps {
		var desc bool
		switch strings.ToLower(p.Order) {
		case "", "asc":
		case "desc":
			desc = true
		default:
			return nil, requestError("sort", p.Field, "sort order for %q must be \"asc\" or \"desc\", got %q", p.Field, p.Order)
		}
		out = append(out, SortField{Field: p.Field, Desc: desc})
	}
	return out, checkSort(rec, out)
}

// checkSort checks that sort fields are distinct columns of the record:
// only those ever reach a Plan.
func checkSort(rec *Record, sort []SortField) error {
	for i, f := range sort {
		if !slices.ContainsFunc(rec.Columns, func(c Column) bool { return c.Name == f.Field }) {
			return requestError("sort", f.Field, "unknown sort field %q: sort by one of the result columns (%s)", f.Field, columnList(rec.Columns))
		}
		if slices.ContainsFunc(sort[:i], func(g SortField) bool { return g.Field == f.Field }) {
			return requestError("sort", f.Field, "sort field %q given twice", f.Field)
		}
	}
	return nil
}

func columnList(cols []Column) string {
	if len(cols) == 0 {
		return "this result lists no columns"
	}
	names := make([]string, 0, min(len(cols), 20))
	for _, c := range cols[:min(len(cols), 20)] {
		names = append(names, c.Name)
	}
	s := strings.Join(names, ", ")
	if len(cols) > 20 {
		s += fmt.Sprintf(", … %d more", len(cols)-20)
	}
	return s
}

// Page reads one page of rec's result through the Plan the Executor of its
// query kind prepares: req.Limit rows from req.Offset (DefaultPageLimit
// when req.Limit is not positive, at most Options.MaxPageSize), never past
// rec.TotalCount, in req's order. ReadPage and Rows read pages through it.
// Sort fields must be distinct result columns (else a *RequestError);
// req.Columns defaults to rec.Columns. It does not count an access (see
// Access). Failures to prepare or read, and invalid rows, are *QueryError.
func (s *Server) Page(ctx context.Context, rec *Record, req PageRequest) (*Page, error) {
	return s.page(ctx, rec, nil, req)
}

// page is Page through plan, prepared from rec.Query when it is nil and
// rows are wanted: Rows prepares once for all its pages.
func (s *Server) page(ctx context.Context, rec *Record, plan Plan, req PageRequest) (*Page, error) {
	if req.Offset < 0 {
		return nil, requestError("offset", "", "offset must not be negative, got %d", req.Offset)
	}
	if err := checkSort(rec, req.Sort); err != nil {
		return nil, err
	}
	limit := req.Limit
	if limit <= 0 {
		limit = DefaultPageLimit
	}
	p := &Page{TotalCount: rec.TotalCount, Offset: req.Offset, Data: []Row{}, HasPrevious: req.Offset > 0}
	if limit > s.maxPage {
		if req.Limit > 0 {
			p.LimitCapped, p.RequestedLimit = true, limit
		}
		limit = s.maxPage
	}
	p.Limit = limit
	want := min(limit, max(rec.TotalCount-req.Offset, 0))
	if want > 0 {
		if plan == nil {
			var err error
			if plan, err = s.prepare(ctx, rec.Query); err != nil {
				return nil, &QueryError{Op: "page", Err: err}
			}
		}
		if req.Columns == nil {
			req.Columns = rec.Columns
		}
		res, err := plan.Page(ctx, PageRequest{Offset: req.Offset, Limit: want, Order: req.Order})
		if err != nil {
			return nil, &QueryError{Op: "page", Err: fmt.Errorf("rows %d+: %w", req.Offset, err)}
		}
		rows := res.Rows[:min(int64(len(res.Rows)), want)]
		p.Data = make([]Row, len(rows))
		for i, row := range rows {
			if err := checkRow(row); err != nil {
				return nil, &QueryError{Op: "page", Err: &rowError{req.Offset + int64(i), err.Error()}}
			}
			p.Data[i] = Row(row)
		}
	}
	n := int64(len(p.Data))
	p.ReturnedCount = n
	// A short page means the result ended early (the data changed): stop.
	if n == want && n > 0 && req.Offset+n < rec.TotalCount {
		p.HasNext = true
		next := req.Offset + n
		p.NextOffset = &next
	}
	return p, nil
}

// checkRow checks a Plan's row: a JSON object.
func checkRow(row json.RawMessage) error {
	if !json.Valid(row) {
		return errors.New("is not a JSON object: not valid JSON")
	}
	if t := bytes.TrimSpace(row); t[0] != '{' {
		return fmt.Errorf("is not a JSON object: %.40q", t)
	}
	return nil
}

// errStopRows stops a Plan's Stream when the caller of Rows breaks out.
var errStopRows = errors.New("dualresp: rows no longer wanted")

// Rows returns every row of rec's result (rec.TotalCount of them at most)
// from row opts.Offset on, in its stored order or sorted by opts.Sort,
// through the Plan the Executor of the query's kind prepares, once: one
// Stream call when the Plan is a Streamer, else Page calls of
// opts.PageSize rows (default DefaultPageLimit) until a page comes
// back short. Sort fields must be distinct result columns (else a
// *RequestError). It checks ctx before each request, makes none after the
// caller stops, and on failure yields the error once and stops.
//
// The row is only valid until the loop body returns: copy it to keep it.
// Rows does not count an access (see Access).
func (s *Server) Rows(ctx context.Context, rec *Record, opts RowsOptions) iter.Seq2[json.RawMessage, error] {
	return func(yield func(json.RawMessage, error) bool) {
		start := max(opts.Offset, 0)
		total := rec.TotalCount
		if total <= start {
			return
		}
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		if err := checkSort(rec, opts.Sort); err != nil {
			yield(nil, err)
			return
		}
		plan, err := s.prepare(ctx, rec.Query)
		if err != nil {
			yield(nil, err)
			return
		}
		order := Order{Sort: opts.Sort, Columns: rec.Columns}
		if st, ok := plan.(Streamer); ok {
			err := st.Stream(ctx, PageRequest{Offset: start, Limit: total - start, Order: order}, func(row json.RawMessage) error {
				if !yield(row, nil) {
					return errStopRows
				}
				return nil
			})
			if err != nil && !errors.Is(err, errStopRows) {
				yield(nil, err)
			}
			return
		}
		size := opts.PageSize
		if size <= 0 {
			size = DefaultPageLimit
		}
		// Page by page (Page caps the size and says where the next one
		// starts; none after a short page, which means the result ended).
		for off := start; ; {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			page, err := s.page(ctx, rec, plan, PageRequest{Offset: off, Limit: size, Order: order})
			if err != nil {
				yield(nil, err)
				return
			}
			for _, row := range page.Data {
				if !yield(json.RawMessage(row), nil) {
					return
				}
			}
			if !page.HasNext {
				return
			}
			off = *page.NextOffset
		}
	}
}
