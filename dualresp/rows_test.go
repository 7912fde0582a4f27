package dualresp_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

func TestServerRows(t *testing.T) {
	t.Parallel()
	const total = 2500
	for _, name := range []string{"paged", "streamed"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			gen := &genExecutor{Total: total}
			var exec dualresp.Executor = gen
			var st *streamExecutor
			if name == "streamed" {
				st = &streamExecutor{genExecutor: gen}
				exec = st
			}
			srv, _ := newServer(t, exec, dualresp.Options{})
			rec := create(t, srv, dualresp.Spec{SampleSize: -1}).Record()
			prepared := gen.prepares.Load()

			var n int64
			for row, err := range srv.Rows(t.Context(), rec, dualresp.RowsOptions{PageSize: 700}) {
				if err != nil {
					t.Fatal(err)
				}
				var m struct{ I int64 }
				if err := json.Unmarshal(row, &m); err != nil || m.I != n {
					t.Fatalf("row %d = %s (%v); want i = %d", n, row, err, n)
				}
				n++
			}
			if n != total {
				t.Errorf("Rows gave %d rows; want %d", n, total)
			}
			if st != nil {
				if s, p := st.streams.Load(), gen.pages.Load(); s != 1 || p != 0 {
					t.Errorf("streamed: %d streams, %d pages; want 1 and 0", s, p)
				}
			} else if p := gen.pages.Load(); p != 4 { // 700+700+700+400
				t.Errorf("paged: %d pages; want 4", p)
			}
			if p := gen.prepares.Load() - prepared; p != 1 {
				t.Errorf("Rows prepared the query %d times; want once for all its pages", p)
			}

			// Breaking out stops the requests.
			before := gen.pages.Load()
			for range srv.Rows(t.Context(), rec, dualresp.RowsOptions{PageSize: 700}) {
				break
			}
			if st == nil && gen.pages.Load() != before+1 {
				t.Errorf("after a break: %d more pages; want 1", gen.pages.Load()-before)
			}

			// A canceled context is yielded once, before any request.
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			before = gen.pages.Load()
			var errs int
			for _, err := range srv.Rows(ctx, rec, dualresp.RowsOptions{}) {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Rows(canceled) yielded %v; want context.Canceled", err)
				}
				errs++
			}
			if errs != 1 || gen.pages.Load() != before {
				t.Errorf("Rows(canceled): %d yields, %d pages; want 1 and 0", errs, gen.pages.Load()-before)
			}
		})
	}
}

func TestServerRowsFailure(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	gen := &genExecutor{Total: 10}
	srv, _ := newServer(t, gen, dualresp.Options{})
	rec := create(t, srv, dualresp.Spec{}).Record()
	gen.PageErr = boom
	var errs int
	for row, err := range srv.Rows(t.Context(), rec, dualresp.RowsOptions{}) {
		if row != nil || !errors.Is(err, boom) {
			t.Errorf("Rows yielded %s, %v; want nil, boom", row, err)
		}
		errs++
	}
	if errs != 1 {
		t.Errorf("Rows yielded %d errors; want 1", errs)
	}
	rec.Query.Kind = "nope"
	yields := 0
	for _, err := range srv.Rows(t.Context(), rec, dualresp.RowsOptions{}) {
		yields++
		if err == nil {
			t.Error("Rows of an unknown kind yielded a row; want an error")
		}
	}
	if yields != 1 {
		t.Errorf("Rows of an unknown kind yielded %d times; want one error", yields)
	}
}

// ReadPage is the one way clients read a page: the REST handler and an
// app's page tool both call it. A request that does not fit the result is
// a *RequestError naming the parameter and counts no access; another
// owner's result is not found.
func TestServerReadPage(t *testing.T) {
	t.Parallel()
	gen := &genExecutor{Total: 25}
	srv, _ := newServer(t, gen, dualresp.Options{MaxPageSize: 20})
	alice := dualresp.WithOwner(t.Context(), "alice")
	id := create(t, srv, dualresp.Spec{Owner: "alice", SampleSize: -1}).ID()
	tests := []struct {
		name      string
		ctx       context.Context
		q         dualresp.PageQuery
		wantParam string // a *RequestError for this parameter
		wantErr   error
		wantFirst int64 // i of the first row
		wantRows  int64
		wantNext  int64 // -1: no next page
	}{
		{name: "default", ctx: alice, q: dualresp.PageQuery{}, wantRows: 20, wantNext: 20},
		{name: "offset and limit", ctx: alice, q: dualresp.PageQuery{Offset: 5, Limit: 3}, wantFirst: 5, wantRows: 3, wantNext: 8},
		{name: "last page", ctx: alice, q: dualresp.PageQuery{Offset: 20, Limit: 10}, wantFirst: 20, wantRows: 5, wantNext: -1},
		{name: "sorted desc", ctx: alice, q: dualresp.PageQuery{Limit: 2, Sort: []dualresp.SortParam{{Field: "i", Order: "DESC"}}}, wantFirst: 24, wantRows: 2, wantNext: 2},
		{name: "anonymous caller", ctx: t.Context(), q: dualresp.PageQuery{Limit: 1}, wantRows: 1, wantNext: 1},
		{name: "negative offset", ctx: alice, q: dualresp.PageQuery{Offset: -1}, wantParam: "offset"},
		{name: "negative limit", ctx: alice, q: dualresp.PageQuery{Limit: -5}, wantParam: "limit"},
		{name: "not a column", ctx: alice, q: dualresp.PageQuery{Sort: []dualresp.SortParam{{Field: "i; DROP TABLE x"}}}, wantParam: "sort"},
		{name: "column twice", ctx: alice, q: dualresp.PageQuery{Sort: []dualresp.SortParam{{Field: "i"}, {Field: "i", Order: "desc"}}}, wantParam: "sort"},
		{name: "bad order", ctx: alice, q: dualresp.PageQuery{Sort: []dualresp.SortParam{{Field: "i", Order: "up"}}}, wantParam: "sort"},
		{name: "another owner", ctx: dualresp.WithOwner(t.Context(), "bob"), q: dualresp.PageQuery{}, wantErr: dualresp.ErrNotFound},
	}
	for _, tt := range tests {
		// Not parallel: each case reads the access count the one before left.
		before, err := srv.Resource(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		rec, page, err := srv.ReadPage(tt.ctx, id, tt.q)
		after, _ := srv.Resource(t.Context(), id)
		var re *dualresp.RequestError
		switch {
		case tt.wantParam != "":
			if !errors.As(err, &re) || re.Param != tt.wantParam {
				t.Errorf("%s: ReadPage(%+v) = %v; want a *RequestError for %s", tt.name, tt.q, err, tt.wantParam)
			}
		case tt.wantErr != nil:
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("%s: ReadPage(%+v) = %v; want %v", tt.name, tt.q, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("%s: ReadPage(%+v) = %v", tt.name, tt.q, err)
		default:
			var first struct{ I int64 }
			if len(page.Data) > 0 {
				_ = page.Data[0].Decode(&first)
			}
			next := int64(-1)
			if page.NextOffset != nil {
				next = *page.NextOffset
			}
			if page.ReturnedCount != tt.wantRows || first.I != tt.wantFirst || next != tt.wantNext || page.HasNext != (tt.wantNext >= 0) {
				t.Errorf("%s: ReadPage(%+v) = %d rows from i=%d, next %d; want %d from i=%d, next %d",
					tt.name, tt.q, page.ReturnedCount, first.I, next, tt.wantRows, tt.wantFirst, tt.wantNext)
			}
			if rec.AccessCount != before.AccessCount+1 || after.AccessCount != rec.AccessCount {
				t.Errorf("%s: access count %d -> %d (record returned: %d); want one access", tt.name, before.AccessCount, after.AccessCount, rec.AccessCount)
			}
			continue
		}
		if after.AccessCount != before.AccessCount {
			t.Errorf("%s: a refused request counted an access (%d -> %d)", tt.name, before.AccessCount, after.AccessCount)
		}
	}
}

// Rows reads through Page: a page size over MaxPageSize is capped and
// every row still comes once, in order; a sort field that is not a column
// is refused before any request.
func TestServerRowsThroughPage(t *testing.T) {
	t.Parallel()
	gen := &genExecutor{Total: 55}
	srv, _ := newServer(t, gen, dualresp.Options{MaxPageSize: 20})
	rec := create(t, srv, dualresp.Spec{SampleSize: -1}).Record()
	var want int64 = 54
	for row, err := range srv.Rows(t.Context(), rec, dualresp.RowsOptions{PageSize: 1000, Sort: []dualresp.SortField{{Field: "i", Desc: true}}}) {
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ I int64 }
		if err := json.Unmarshal(row, &m); err != nil || m.I != want {
			t.Fatalf("row = %s (%v); want i = %d", row, err, want)
		}
		want--
	}
	if want != -1 || gen.pages.Load() != 3 {
		t.Errorf("Rows stopped before i=%d after %d pages; want every row in 3 pages of at most 20", want, gen.pages.Load())
	}
	before := gen.pages.Load()
	var yields int
	for _, err := range srv.Rows(t.Context(), rec, dualresp.RowsOptions{Sort: []dualresp.SortField{{Field: "nope"}}}) {
		var re *dualresp.RequestError
		if !errors.As(err, &re) || re.Field != "nope" {
			t.Errorf("Rows(sort by nope) yielded %v; want a *RequestError for nope", err)
		}
		yields++
	}
	if yields != 1 || gen.pages.Load() != before {
		t.Errorf("Rows(sort by nope): %d yields, %d pages; want 1 and 0", yields, gen.pages.Load()-before)
	}
}
