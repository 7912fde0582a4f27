package portal

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/soql"
)

// QueryKind is the dualresp.Query kind of the SoQL queries stored for
// portals.
const QueryKind = "soql"

// streamPageRows is the number of rows of each upstream request Stream
// makes to read a whole result; Socrata serves up to 50,000 rows a request.
const streamPageRows = 50_000

// streamAhead is how many pages Stream keeps requested ahead of the one it
// is sending when it knows where the result ends.
const streamAhead = 2

// Query is a SoQL query on a dataset of a portal, parsed: what a tool hands
// dualresp (as a dualresp.Plan) to count and sample it, and what the
// Executor makes of a stored query. Its tree is read-only: Count and Page
// run concurrently.
type Query struct {
	Portal    *Portal
	DatasetID string
	Tree      *soql.Query

	pageRows int64 // rows per upstream request of Stream (0: streamPageRows)
	ahead    int   // pages requested ahead (0: streamAhead)
}

// Stored is the dualresp query definition kept for q: its text, its
// dataset and, for a portal other than the configured one, its domain.
func (q *Query) Stored() dualresp.Query {
	params := map[string]string{"dataset_id": q.DatasetID}
	if !q.Portal.Configured {
		params["domain"] = q.Portal.Domain
	}
	return dualresp.Query{Kind: QueryKind, Text: q.Tree.String(), Params: params}
}

// Executor re-executes stored SoQL queries, each on its own portal: the
// dualresp.Executor (and Streamer) of QueryKind.
type Executor struct {
	portals  *Registry
	pageRows int64
	ahead    int
}

// NewExecutor returns the Executor of the portals of r.
func NewExecutor(r *Registry) *Executor {
	return &Executor{portals: r, pageRows: streamPageRows, ahead: streamAhead}
}

// Query resolves a stored query: its portal (checked again, as the
// allowlist may have changed since it was stored) and its parsed tree.
func (e *Executor) Query(ctx context.Context, q dualresp.Query) (*Query, error) {
	if q.Kind != QueryKind {
		return nil, fmt.Errorf("portal: cannot execute a stored query of kind %q", q.Kind)
	}
	id := q.Params["dataset_id"]
	if id == "" {
		return nil, errors.New("portal: stored query has no dataset_id")
	}
	p, err := e.portals.Get(ctx, q.Params["domain"])
	if err != nil {
		return nil, err
	}
	tree, err := soql.Parse(q.Text)
	if err != nil {
		return nil, fmt.Errorf("portal: stored query does not parse: %w", err)
	}
	return &Query{Portal: p, DatasetID: id, Tree: tree, pageRows: e.pageRows, ahead: e.ahead}, nil
}

// Count returns the exact number of rows the stored query returns.
func (e *Executor) Count(ctx context.Context, q dualresp.Query) (int64, error) {
	x, err := e.Query(ctx, q)
	if err != nil {
		return 0, err
	}
	return x.Count(ctx)
}

// Page returns one page of the stored query's rows (see Query.Page).
func (e *Executor) Page(ctx context.Context, q dualresp.Query, req dualresp.PageRequest) (dualresp.PageResult, error) {
	x, err := e.Query(ctx, q)
	if err != nil {
		return dualresp.PageResult{}, err
	}
	return x.Page(ctx, req)
}

// Stream passes the stored query's rows to fn (see Query.Stream).
func (e *Executor) Stream(ctx context.Context, q dualresp.Query, req dualresp.PageRequest, fn func(json.RawMessage) error) error {
	x, err := e.Query(ctx, q)
	if err != nil {
		return err
	}
	return x.Stream(ctx, req, fn)
}

// Count returns the exact number of rows of q: `<q> |> SELECT count(*)`.
func (q *Query) Count(ctx context.Context) (int64, error) {
	return countRows(ctx, q.Portal.Client, q.DatasetID, q.Tree)
}

// Page returns one page of q's rows, as raw JSON objects, with the
// result's columns from the response's X-SODA2-Fields and X-SODA2-Types
// headers: one upstream request.
func (q *Query) Page(ctx context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	tree := withOrder(q.Tree, req.Order)
	rows, cols, err := rawRows(ctx, q.Portal.Client, q.DatasetID, tree.WithPage(req.Offset, req.Limit))
	return dualresp.PageResult{Rows: rows, Columns: cols}, err
}

// Stream passes rows req.Offset .. req.Offset+req.Limit-1 of the stored
// query (all rows from req.Offset when req.Limit is 0) to fn, in req's
// order, without decoding them. It reads the result in pages of 50,000
// rows and keeps the next pages requested while it sends one, so the portal
// prepares them while the current one is consumed: two pages ahead when
// req.Limit says where the result ends (never a request past that end), one
// page ahead otherwise (so at most one request more than needed at the end).
func (q *Query) Stream(ctx context.Context, req dualresp.PageRequest, fn func(json.RawMessage) error) error {
	c, id := q.Portal.Client, q.DatasetID
	if req.Offset < 0 || req.Limit < 0 {
		return fmt.Errorf("portal: bad stream offset %d, limit %d", req.Offset, req.Limit)
	}
	parsed := withOrder(q.Tree, req.Order)
	pageRows, qahead := cmp.Or(q.pageRows, streamPageRows), cmp.Or(q.ahead, streamAhead)
	end := int64(math.MaxInt64)
	ahead := 1
	if req.Limit > 0 && req.Offset <= math.MaxInt64-req.Limit {
		end = req.Offset + req.Limit
		ahead = max(qahead, 1)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var pending []<-chan openedPage // requested pages, in order
	next := req.Offset              // the offset of the next page to request
	request := func() {
		if next >= end {
			return
		}
		size := min(pageRows, end-next)
		ch := make(chan openedPage, 1)
		go func(off int64) {
			s, err := c.QueryStream(ctx, id, parsed.WithPage(off, size).String())
			ch <- openedPage{s, size, err}
		}(next)
		pending = append(pending, ch)
		next += size
	}
	// stop abandons the pages nobody will read.
	stop := func() {
		if len(pending) > 0 {
			cancel()
			for _, ch := range pending {
				go closeOpened(ch)
			}
		}
	}
	for range ahead {
		request()
	}
	for len(pending) > 0 {
		page := <-pending[0]
		pending = pending[1:]
		if page.err != nil {
			stop()
			return page.err
		}
		request() // keeps ahead pages requested while this one is sent
		n, err := sendRows(page.stream, fn)
		if err != nil || n < page.size {
			stop()
			return err
		}
	}
	return nil
}

// openedPage is a page request's outcome: its row stream and the number of
// rows asked for, or the error.
type openedPage struct {
	stream *socrata.RowStream
	size   int64
	err    error
}

// closeOpened waits for a page request nobody will read and closes its stream.
func closeOpened(ch <-chan openedPage) {
	if p := <-ch; p.stream != nil {
		p.stream.Close()
	}
}

// sendRows passes every row of s to fn, closes s, and returns the number of
// rows sent.
func sendRows(s *socrata.RowStream, fn func(json.RawMessage) error) (int64, error) {
	defer s.Close()
	var n int64
	for {
		raw, err := s.NextRaw()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if err := fn(raw); err != nil {
			return n, err
		}
		n++
	}
}

// withOrder sorts q's result by the requested fields (already checked by
// dualresp to be result columns) in a stage of its own after q, so the sort
// applies after q's LIMIT and OFFSET and can name any result column,
// including those the portal names itself (upper_name for upper(name)).
// That stage has no :id to fall back on, so every other result column that
// can be ordered follows the sort fields as a tie-breaker: rows that tie on
// all of them are identical as far as those columns show, and pages stay
// deterministic.
func withOrder(q *soql.Query, order dualresp.Order) *soql.Query {
	if len(order.Sort) == 0 {
		return q
	}
	keys := make([]*soql.OrderItem, 0, len(order.Sort)+len(order.Columns))
	sorted := map[string]bool{}
	for _, s := range order.Sort {
		keys = append(keys, &soql.OrderItem{Expr: soql.Column(s.Field), Desc: s.Desc})
		sorted[s.Field] = true
	}
	names := make([]string, len(order.Columns))
	for i, c := range order.Columns {
		names[i] = c.Name
		if !sorted[c.Name] && orderable(c.Type) {
			keys = append(keys, &soql.OrderItem{Expr: soql.Column(c.Name)})
		}
	}
	return q.SortedBy(names, keys)
}

// orderable reports whether Socrata can ORDER BY a column of the given
// type; geometries and the composite types cannot. An unknown type is
// assumed orderable.
func orderable(dataType string) bool {
	switch strings.ToLower(dataType) {
	case "point", "multipoint", "line", "multiline", "polygon", "multipolygon",
		"location", "url", "photo", "document", "json", "blob":
		return false
	}
	return true
}

// countRows runs `<q> |> SELECT count(*)` and returns the count.
func countRows(ctx context.Context, c *socrata.Client, datasetID string, q *soql.Query) (int64, error) {
	res, err := c.Query(ctx, datasetID, q.CountQuery().String())
	if err != nil {
		return 0, err
	}
	if len(res.Rows) != 1 {
		return 0, fmt.Errorf("portal: count query returned %d rows, want 1", len(res.Rows))
	}
	for _, v := range res.Rows[0] {
		switch v := v.(type) {
		case string:
			return strconv.ParseInt(v, 10, 64)
		case float64:
			return int64(v), nil
		case json.Number:
			return v.Int64()
		}
	}
	return 0, errors.New("portal: count query returned no count")
}

// rawRows runs q and returns its rows as raw JSON objects plus the result's
// columns from the X-SODA2-Fields and X-SODA2-Types headers.
func rawRows(ctx context.Context, c *socrata.Client, datasetID string, q *soql.Query) ([]json.RawMessage, []dualresp.Column, error) {
	stream, err := c.QueryStream(ctx, datasetID, q.String())
	if err != nil {
		return nil, nil, err
	}
	defer stream.Close()
	cols := make([]dualresp.Column, len(stream.Fields))
	for i, f := range stream.Fields {
		cols[i].Name = f
		if i < len(stream.Types) {
			cols[i].Type = stream.Types[i]
		}
	}
	var rows []json.RawMessage
	for {
		raw, err := stream.NextRaw()
		if errors.Is(err, io.EOF) {
			return rows, cols, nil
		}
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, raw)
	}
}
