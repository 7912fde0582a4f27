package spill

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// Mux is a dualresp.Executor that hands each query to the Executor
// registered for its Kind:
//
//	exec := spill.Mux{"soql": soqlExec, spill.Kind: sp.Executor()}
//
// It implements dualresp.Streamer: Stream uses the chosen Executor's Stream
// when it has one, and pages through Page otherwise. A Mux must not be
// modified while in use.
type Mux map[string]dualresp.Executor

var (
	_ dualresp.Executor = Mux{}
	_ dualresp.Streamer = Mux{}
)

// muxStreamPage is the page size of Stream for executors without one.
const muxStreamPage = 1000

func (m Mux) pick(q dualresp.Query) (dualresp.Executor, error) {
	if e, ok := m[q.Kind]; ok && e != nil {
		return e, nil
	}
	return nil, fmt.Errorf("spill: no executor for query kind %q (known kinds: %s)", q.Kind, strings.Join(slices.Sorted(maps.Keys(m)), ", "))
}

// Count counts q's rows with the Executor of q.Kind.
func (m Mux) Count(ctx context.Context, q dualresp.Query) (int64, error) {
	e, err := m.pick(q)
	if err != nil {
		return 0, err
	}
	return e.Count(ctx, q)
}

// Page returns a page of q's rows from the Executor of q.Kind.
func (m Mux) Page(ctx context.Context, q dualresp.Query, req dualresp.PageRequest) ([]json.RawMessage, error) {
	e, err := m.pick(q)
	if err != nil {
		return nil, err
	}
	return e.Page(ctx, q, req)
}

// Stream passes the rows of q that req selects to fn, through the Executor
// of q.Kind: its Stream when it has one, else its Page, muxStreamPage rows
// at a time.
func (m Mux) Stream(ctx context.Context, q dualresp.Query, req dualresp.PageRequest, fn func(json.RawMessage) error) error {
	e, err := m.pick(q)
	if err != nil {
		return err
	}
	if st, ok := e.(dualresp.Streamer); ok {
		return st.Stream(ctx, q, req, fn)
	}
	end := int64(math.MaxInt64)
	if req.Limit > 0 && req.Offset <= math.MaxInt64-req.Limit {
		end = req.Offset + req.Limit
	}
	for off := req.Offset; off < end; {
		if err := ctx.Err(); err != nil {
			return err
		}
		want := min(muxStreamPage, end-off)
		rows, err := e.Page(ctx, q, dualresp.PageRequest{Offset: off, Limit: want, Order: req.Order})
		if err != nil {
			return err
		}
		for _, r := range rows[:min(int64(len(rows)), want)] {
			if err := fn(r); err != nil {
				return err
			}
		}
		if int64(len(rows)) < want {
			return nil
		}
		off += want
	}
	return nil
}
