package dualresp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
)

// Page reads one page of rec's result through the Executor of its query
// kind: req.Limit rows from req.Offset (DefaultPageLimit when req.Limit is
// not positive, at most Options.MaxPageSize), never past rec.TotalCount,
// in req's order. Sort fields must be result columns (the REST handler
// checks them); req.Columns defaults to rec.Columns. It does not count an
// access (see Access). Executor failures and invalid rows are *QueryError.
func (s *Server) Page(ctx context.Context, rec *Record, req PageRequest) (*Page, error) {
	if req.Offset < 0 {
		return nil, fmt.Errorf("dualresp: Page: negative offset %d", req.Offset)
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
		exec, err := s.Executor(rec.Query.Kind)
		if err != nil {
			return nil, &QueryError{Op: "page", Err: err}
		}
		if req.Columns == nil {
			req.Columns = rec.Columns
		}
		res, err := exec.Page(ctx, rec.Query, PageRequest{Offset: req.Offset, Limit: want, Order: req.Order})
		if err != nil {
			return nil, &QueryError{Op: "page", Err: err}
		}
		rows := res.Rows[:min(int64(len(res.Rows)), want)]
		p.Data = make([]Row, len(rows))
		for i, row := range rows {
			if !json.Valid(row) {
				return nil, &QueryError{Op: "page", Err: fmt.Errorf("row %d is not valid JSON", req.Offset+int64(i))}
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

// errStopRows stops an Executor's Stream when the caller of Rows breaks out.
var errStopRows = errors.New("dualresp: rows no longer wanted")

// Rows returns every row of rec's result (rec.TotalCount of them at most),
// in its stored order or sorted by opts.Sort, through the Executor of the
// query's kind: one Stream call when the Executor is a Streamer, else Page
// calls of opts.PageSize rows (default DefaultPageLimit) until a page comes
// back short. It checks ctx before each request, makes none after the
// caller stops, and on failure yields the error once and stops.
//
// The row is only valid until the loop body returns: copy it to keep it.
// Rows does not count an access (see Access).
func (s *Server) Rows(ctx context.Context, rec *Record, opts RowsOptions) iter.Seq2[json.RawMessage, error] {
	return func(yield func(json.RawMessage, error) bool) {
		total := rec.TotalCount
		if total <= 0 {
			return
		}
		exec, err := s.Executor(rec.Query.Kind)
		if err != nil {
			yield(nil, err)
			return
		}
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		order := Order{Sort: opts.Sort, Columns: rec.Columns}
		if st, ok := exec.(Streamer); ok {
			err := st.Stream(ctx, rec.Query, PageRequest{Limit: total, Order: order}, func(row json.RawMessage) error {
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
		for off := int64(0); off < total; {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			want := min(size, total-off)
			res, err := exec.Page(ctx, rec.Query, PageRequest{Offset: off, Limit: want, Order: order})
			if err != nil {
				yield(nil, fmt.Errorf("reading rows %d+: %w", off, err))
				return
			}
			rows := res.Rows[:min(int64(len(res.Rows)), want)]
			for _, row := range rows {
				if !yield(row, nil) {
					return
				}
			}
			if int64(len(rows)) < want {
				return // the result ended early
			}
			off += want
		}
	}
}
